"""Model definitions: an in-place activation after an op that saves its output."""
from collections import OrderedDict

import torch.nn as nn


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.block(x)


class GatedHead(nn.Module):
    def __init__(self, dim, num_classes):
        super().__init__()
        self.gate = nn.Sequential(
            nn.Linear(dim, dim),
            nn.Sigmoid(),
            nn.Dropout(p=0.2, inplace=True),  # expect: MEM402
        )
        self.proj = nn.Sequential(
            nn.Linear(dim, dim),
            nn.Tanh(),
            nn.LeakyReLU(0.1, inplace=True),  # expect: MEM402
            nn.Linear(dim, num_classes),
        )

    def forward(self, x):
        return self.proj(x * self.gate(x))


def make_classifier(in_features, hidden, num_classes):
    return nn.Sequential(
        OrderedDict(
            [
                ("fc1", nn.Linear(in_features, hidden)),
                ("relu1", nn.ReLU()),
                ("relu2", nn.ReLU(inplace=True)),  # expect: MEM402
                ("fc2", nn.Linear(hidden, num_classes)),
            ]
        )
    )


def make_vgg_features():
    layers = [nn.Conv2d(3, 64, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2)]
    return nn.Sequential(*layers)


encoder = nn.Sequential(
    nn.Linear(784, 256),
    nn.GELU(),
    nn.Dropout(0.1, inplace=True),
    nn.Linear(256, 64),
    nn.ELU(),
    nn.ReLU(inplace=True),
)
