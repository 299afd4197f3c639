"""A small GAN where only the discriminator's gradients are cleared."""
import torch
import torch.nn as nn

latent_dim = 64
G = nn.Sequential(nn.Linear(latent_dim, 256), nn.ReLU(inplace=True), nn.Linear(256, 784), nn.Tanh())
D = nn.Sequential(nn.Linear(784, 256), nn.LeakyReLU(0.2, inplace=True), nn.Linear(256, 1))
bce = nn.BCEWithLogitsLoss()
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)


def fit(loader, epochs=50):
    for epoch in range(epochs):
        for real, _ in loader:
            real = real.view(real.size(0), -1)
            ones = torch.ones(real.size(0), 1)
            zeros = torch.zeros(real.size(0), 1)
            z = torch.randn(real.size(0), latent_dim)
            fake = G(z)
            opt_d.zero_grad()
            loss_d = bce(D(real), ones) + bce(D(fake.detach()), zeros)
            loss_d.backward()
            opt_d.step()
            loss_g = bce(D(fake), ones)
            loss_g.backward()
            opt_g.step()  # expect: MEM304
        print(epoch, loss_d.item(), loss_g.item())


def reset_grad():
    opt_d.zero_grad()
    opt_g.zero_grad()


def fit_with_helper(loader, epochs=50):
    """Clearing through a local helper: silent."""
    for epoch in range(epochs):
        for real, _ in loader:
            real = real.view(real.size(0), -1)
            ones = torch.ones(real.size(0), 1)
            z = torch.randn(real.size(0), latent_dim)
            d_loss = bce(D(real), ones) + bce(D(G(z).detach()), torch.zeros(real.size(0), 1))
            reset_grad()
            d_loss.backward()
            opt_d.step()
            g_loss = bce(D(G(z)), ones)
            reset_grad()
            g_loss.backward()
            opt_g.step()
