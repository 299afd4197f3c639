import torch


def validate(model, val_x, val_y, loss_fn):
    model.eval()
    val_losses = []
    with torch.no_grad(), torch.autocast("cuda"):
        for xb, yb in zip(val_x.split(256), val_y.split(256)):
            val_losses.append(loss_fn(model(xb), yb))
    return torch.stack(val_losses).mean()


def train_step(model, xb, yb, loss_fn, opt):
    loss = loss_fn(model(xb), yb)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.detach()


def fit(model, train_x, train_y, val_x, val_y, loss_fn, opt, epochs):
    log = []
    for epoch in range(epochs):
        model.train()
        for xb, yb in zip(train_x.split(64), train_y.split(64)):
            log.append(train_step(model, xb, yb, loss_fn, opt))
        print(epoch, validate(model, val_x, val_y, loss_fn).item())
    return log
