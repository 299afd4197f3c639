import copy

import torch
import torch.nn as nn


class ModelEMA:
    def __init__(self, model, decay=0.999):
        self.ema = copy.deepcopy(model).eval()
        self.decay = decay
        for p in self.ema.parameters():
            p.requires_grad_(False)

    def update(self, model):
        with torch.no_grad():
            msd = model.state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v.mul_(self.decay).add_(msd[k].detach(), alpha=1 - self.decay)


def evaluate(ema_model, loader):
    correct = 0
    for x, y in loader:
        correct += (ema_model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def fit(model, loader, val_loader, optimizer, epochs=10):
    criterion = nn.CrossEntropyLoss()
    ema = ModelEMA(model)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            ema.update(model)
        print(epoch, evaluate(ema.ema, val_loader))
