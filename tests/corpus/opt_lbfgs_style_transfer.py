"""Neural style transfer with LBFGS: the closure clears and recomputes gradients."""
import torch
import torch.nn.functional as F
import torch.optim as optim


def gram(x):
    b, c, h, w = x.size()
    f = x.view(b * c, h * w)
    return f @ f.t() / (b * c * h * w)


def run_style_transfer(cnn, content_img, style_img, input_img, num_steps=300, style_weight=1e6):
    input_img.requires_grad_(True)
    optimizer = optim.LBFGS([input_img])
    style_targets = [gram(f).detach() for f in cnn(style_img)]
    content_target = cnn(content_img)[-1].detach()
    run = [0]
    while run[0] <= num_steps:

        def closure():
            with torch.no_grad():
                input_img.clamp_(0, 1)
            optimizer.zero_grad()
            feats = cnn(input_img)
            style_loss = sum(F.mse_loss(gram(f), t) for f, t in zip(feats, style_targets))
            content_loss = F.mse_loss(feats[-1], content_target)
            loss = style_weight * style_loss + content_loss
            loss.backward()
            run[0] += 1
            return loss

        optimizer.step(closure)
    with torch.no_grad():
        input_img.clamp_(0, 1)
    return input_img


def fit_full_batch(model, x, y, epochs=100):
    optimizer = optim.LBFGS(model.parameters(), lr=1, max_iter=20)
    for epoch in range(epochs):

        def closure():
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            return loss

        optimizer.step(closure)
