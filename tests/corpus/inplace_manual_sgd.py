"""Manual SGD on an MLP, as written in many autograd tutorials."""
import torch
import torch.nn as nn
import torch.nn.functional as F

learning_rate = 1e-2


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


model = MLP()


def train_manual(loader, epochs=5):
    for epoch in range(epochs):
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            model.zero_grad()
            loss.backward()
            for param in model.parameters():
                param -= learning_rate * param.grad  # expect: MEM401


def train_manual_momentum(loader, momentum=0.9):
    velocity = [torch.zeros_like(p) for p in model.parameters()]
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        for p, v in zip(model.parameters(), velocity):
            v.mul_(momentum).add_(p.grad)
            p.add_(v, alpha=-learning_rate)  # expect: MEM401


def train_manual_correct(loader):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad


def train_manual_data(loader):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        model.zero_grad()
        loss.backward()
        for f in model.parameters():
            f.data.sub_(f.grad.data * learning_rate)


@torch.no_grad()
def sgd_step(params, lr):
    for p in params:
        if p.grad is not None:
            p.add_(p.grad, alpha=-lr)
