"""A CycleGAN-style trainer whose validation forgot the `with` and whose
training loop forgot a few parentheses: code that runs, and does nothing."""
import itertools

import torch
from torch import nn


class Generator(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(channels, 64, 7, padding=3),
            nn.InstanceNorm2d(64),
            nn.ReLU(inplace=True),
            nn.Conv2d(64, channels, 7, padding=3),
            nn.Tanh(),
        )

    def forward(self, x):
        return self.net(x)


def validate(netG_A, netG_B, val_loader, device):
    netG_A.eval()
    netG_B.eval()
    torch.no_grad()  # expect: MEM204
    cycle = 0.0
    for real_A, real_B in val_loader:  # expect: MEM201
        real_A, real_B = real_A.to(device), real_B.to(device)
        cycle += (netG_B(netG_A(real_A)) - real_A).abs().mean().item()
        cycle += (netG_A(netG_B(real_B)) - real_B).abs().mean().item()
    netG_A.train()
    netG_B.train()
    return cycle / len(val_loader)


def train(train_loader, val_loader, epochs, device):
    netG_A, netG_B = Generator().to(device), Generator().to(device)
    optimizer = torch.optim.Adam(itertools.chain(netG_A.parameters(), netG_B.parameters()), lr=2e-4)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda e: 1.0 - e / epochs)
    l1 = nn.L1Loss()
    on_epoch_end = [scheduler.step]  # a bound method kept on purpose
    for epoch in range(epochs):
        for real_A, real_B in train_loader:
            real_A, real_B = real_A.to(device), real_B.to(device)
            optimizer.zero_grad  # expect: MEM305
            loss = l1(netG_B(netG_A(real_A)), real_A) + l1(netG_A(netG_B(real_B)), real_B)
            loss.backward()
            optimizer.step()  # expect: MEM304
        scheduler.step  # expect: MEM305
        for hook in on_epoch_end:
            hook()
        print(epoch, validate(netG_A, netG_B, val_loader, device))
