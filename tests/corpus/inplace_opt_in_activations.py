"""Plain activations after Conv/Linear/Norm layers (MEM403 is opt-in)."""
import torch.nn as nn


def conv_bn_act(cin, cout, stride=1):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride, 1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),  # expect: MEM403
    )


class MLPHead(nn.Module):
    def __init__(self, dim, hidden, out):
        super().__init__()
        self.net = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, hidden),
            nn.SiLU(),  # reads its input in the backward: in place saves nothing (bench/inplace_activations.py)
            nn.Dropout(0.1),
            nn.Linear(hidden, out),
        )

    def forward(self, x):
        return self.net(x)


stem = nn.Sequential(nn.ReLU(), nn.Conv2d(3, 32, 3))
mobile = nn.Sequential(nn.Conv2d(32, 32, 3, groups=32), nn.BatchNorm2d(32), nn.ReLU6(inplace=True))
gate = nn.Sequential(nn.Linear(32, 32), nn.Sigmoid())
