import torch
from torch import autograd, nn


def gradient_penalty(critic, real, fake, device):
    alpha = torch.rand(real.size(0), 1, 1, 1, device=device)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = critic(interpolates)
    gradients = autograd.grad(
        outputs=d_interpolates,
        inputs=interpolates,
        grad_outputs=torch.ones_like(d_interpolates),
        create_graph=True,
        retain_graph=True,
    )[0]
    gradients = gradients.view(gradients.size(0), -1)
    return ((gradients.norm(2, dim=1) - 1) ** 2).mean()


def train(generator, critic, loader, opt_g, opt_c, device, n_critic=5, epochs=10):
    g_history = []
    c_history = []
    for epoch in range(epochs):
        for i, (real, _) in enumerate(loader):
            real = real.to(device)
            z = torch.randn(real.size(0), 128, device=device)
            fake = generator(z)
            c_loss = critic(fake.detach()).mean() - critic(real).mean()
            c_loss = c_loss + 10 * gradient_penalty(critic, real, fake.detach(), device)
            opt_c.zero_grad()
            c_loss.backward(retain_graph=True)  # missed: MEM103 (the later backward goes through a new graph)
            opt_c.step()
            c_history.append(c_loss)  # expect: MEM102

            if i % n_critic == 0:
                g_loss = -critic(fake).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
                g_history.append(g_loss.item())
        print(epoch, sum(g_history[-10:]) / 10)
    return g_history, c_history
