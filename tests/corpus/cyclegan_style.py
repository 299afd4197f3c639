import itertools

import torch
import torch.nn as nn


class CycleGANTrainer:
    def __init__(self, G_AB, G_BA, D_A, D_B, lr=2e-4):
        self.G_AB, self.G_BA, self.D_A, self.D_B = G_AB, G_BA, D_A, D_B
        self.criterion_GAN = nn.MSELoss()
        self.criterion_cycle = nn.L1Loss()
        self.optimizer_G = torch.optim.Adam(itertools.chain(G_AB.parameters(), G_BA.parameters()), lr=lr)
        self.optimizer_D_A = torch.optim.Adam(D_A.parameters(), lr=lr)
        self.optimizer_D_B = torch.optim.Adam(D_B.parameters(), lr=lr)
        self.loss_log = {"G": [], "D": []}

    def backward_D_basic(self, netD, real, fake):
        loss_D_real = self.criterion_GAN(netD(real), torch.ones_like(netD(real)))
        loss_D_fake = self.criterion_GAN(netD(fake.detach()), torch.zeros_like(netD(fake.detach())))
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        loss_D.backward()
        return loss_D

    def optimize_parameters(self, real_A, real_B):
        fake_B = self.G_AB(real_A)
        rec_A = self.G_BA(fake_B)
        fake_A = self.G_BA(real_B)
        rec_B = self.G_AB(fake_A)
        self.optimizer_G.zero_grad()
        loss_G = self.criterion_GAN(self.D_B(fake_B), torch.ones_like(self.D_B(fake_B))) \
            + self.criterion_cycle(rec_A, real_A) * 10 + self.criterion_cycle(rec_B, real_B) * 10
        loss_G.backward()
        self.optimizer_G.step()
        self.optimizer_D_A.zero_grad()
        loss_D_A = self.backward_D_basic(self.D_A, real_A, fake_A)
        self.optimizer_D_A.step()
        self.optimizer_D_B.zero_grad()
        loss_D_B = self.backward_D_basic(self.D_B, real_B, fake_B)
        self.optimizer_D_B.step()
        self.loss_log["G"].append(loss_G.item())
        self.loss_log["D"].append((loss_D_A + loss_D_B).item())

    def train(self, loader, epochs):
        for epoch in range(epochs):
            for real_A, real_B in loader:
                self.optimize_parameters(real_A, real_B)
