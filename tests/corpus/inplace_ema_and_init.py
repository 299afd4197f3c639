"""EMA weights, initialisation and weight clipping: in-place ops done right, and one not."""
import copy

import torch
import torch.nn as nn


class ModelEma:
    def __init__(self, model, decay=0.9999):
        self.module = copy.deepcopy(model)
        self.module.eval()
        self.decay = decay
        for p in self.module.parameters():
            p.requires_grad_(False)

    @torch.no_grad()
    def update(self, model):
        for ema_v, model_v in zip(self.module.state_dict().values(), model.state_dict().values()):
            ema_v.copy_(ema_v * self.decay + (1.0 - self.decay) * model_v)


def init_weights(m):
    if isinstance(m, nn.Conv2d):
        nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    elif isinstance(m, nn.BatchNorm2d):
        nn.init.ones_(m.weight)
        nn.init.zeros_(m.bias)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, 64), nn.LeakyReLU(0.2, inplace=True), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)


def train_wgan_critic(critic, generator, loader, opt, clip=0.01):
    for real in loader:
        opt.zero_grad()
        fake = generator(torch.randn(real.size(0), 8)).detach()
        loss = critic(fake).mean() - critic(real).mean()
        loss.backward()
        opt.step()
        for p in critic.parameters():
            p.clamp_(-clip, clip)  # expect: MEM401


def ema_update(ema_model, model, decay=0.999):
    with torch.no_grad():
        for e, p in zip(ema_model.parameters(), model.parameters()):
            e.mul_(decay).add_(p, alpha=1 - decay)


def reset_head(model):
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.startswith("head"):
                p.zero_()
