import torch
import torch.nn as nn


class Refiner(nn.Module):
    def __init__(self, dim, num_steps=4):
        super().__init__()
        self.num_steps = num_steps
        self.block = nn.Sequential(nn.Linear(dim, dim), nn.GELU())
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(3)])

    def forward(self, x):
        outs = []
        for step in range(self.num_steps):
            x = x + self.block(x)
            outs.append(x)
        feats = []
        for i, layer in enumerate(self.layers):
            x = layer(x)
            feats.append(x)
        return torch.stack(outs), feats


def collect_grads(model):
    grads, weights = [], []
    for name, param in model.named_parameters():
        if param.grad is not None:
            grads.append(param.grad.norm())
        weights.append(param)
    return grads, weights
