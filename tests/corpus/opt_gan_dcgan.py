"""DCGAN training loop in the style of the PyTorch examples: two optimizers, correct."""
import torch
import torch.nn as nn
import torch.optim as optim

nz = 100
n_critic = 5


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, 512, 4, 1, 0, bias=False),
            nn.BatchNorm2d(512),
            nn.ReLU(True),
            nn.ConvTranspose2d(512, 3, 4, 2, 1, bias=False),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, 64, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(64, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1)


netG = Generator().cuda()
netD = Discriminator().cuda()
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))


def train(dataloader, epochs):
    for epoch in range(epochs):
        for i, (real, _) in enumerate(dataloader):
            real = real.cuda()
            b = real.size(0)
            # (1) Update D network
            netD.zero_grad()
            label = torch.full((b,), 1.0, device=real.device)
            errD_real = criterion(netD(real), label)
            errD_real.backward()
            noise = torch.randn(b, nz, 1, 1, device=real.device)
            fake = netG(noise)
            label.fill_(0.0)
            errD_fake = criterion(netD(fake.detach()), label)
            errD_fake.backward()
            optimizerD.step()
            # (2) Update G network
            netG.zero_grad()
            label.fill_(1.0)
            errG = criterion(netD(fake), label)
            errG.backward()
            optimizerG.step()
            if i % 50 == 0:
                print(f"[{epoch}][{i}] Loss_D: {(errD_real + errD_fake).item():.4f} Loss_G: {errG.item():.4f}")


def train_wgan(dataloader, generator, discriminator, optimizer_G, optimizer_D, clip_value=0.01):
    for epoch in range(100):
        for i, (imgs, _) in enumerate(dataloader):
            real_imgs = imgs.cuda()
            optimizer_D.zero_grad()
            z = torch.randn(imgs.size(0), nz, device=real_imgs.device)
            fake_imgs = generator(z).detach()
            loss_D = -torch.mean(discriminator(real_imgs)) + torch.mean(discriminator(fake_imgs))
            loss_D.backward()
            optimizer_D.step()
            for p in discriminator.parameters():
                p.data.clamp_(-clip_value, clip_value)
            if i % n_critic == 0:
                optimizer_G.zero_grad()
                gen_imgs = generator(z)
                loss_G = -torch.mean(discriminator(gen_imgs))
                loss_G.backward()
                optimizer_G.step()
