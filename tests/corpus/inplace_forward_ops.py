"""Forward methods with in-place arithmetic, some on outputs autograd saved."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedAttention(nn.Module):
    def __init__(self, dim, heads=8):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)

    def forward(self, x, mask):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)
        scores = scores.masked_fill(mask == 0, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        attn *= mask  # expect: MEM402
        return self.out(attn @ v)


class GatedUnit(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Linear(dim, dim)
        self.value = nn.Linear(dim, dim)

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        g[:, 0] = 1.0  # expect: MEM402
        v = self.value(x).tanh()
        v.mul_(2.0)  # expect: MEM402
        return g * v


class Bottleneck(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        out = self.relu(out)
        return out


class SafeGate(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x, scale=None):
        h = torch.sigmoid(self.fc(x)).clone()
        h += 1.0
        e = torch.exp(self.fc(x))
        e = e / e.sum(-1, keepdim=True)
        x = x.exp()
        x /= 2
        if scale is not None:
            s = torch.tanh(self.fc(x))
        else:
            s = self.fc(x)
            s *= 0.5
        return h * e * s


@torch.no_grad()
def predict_probs(model, x):
    probs = torch.softmax(model(x), dim=-1)
    probs[probs < 1e-3] = 0
    probs /= probs.sum(-1, keepdim=True)
    return probs
