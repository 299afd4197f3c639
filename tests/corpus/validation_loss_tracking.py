import torch
import torch.nn as nn


class EarlyStopper:
    def __init__(self, patience=5):
        self.patience = patience
        self.best = float("inf")
        self.count = 0

    def step(self, val_loss):
        if val_loss < self.best:
            self.best, self.count = val_loss, 0
        else:
            self.count += 1
        return self.count >= self.patience


def fit(model, train_loader, val_loader, optimizer, epochs=100):
    criterion = nn.MSELoss()
    stopper = EarlyStopper()
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
        model.eval()
        val_loss = 0.0
        with torch.no_grad():
            for x, y in val_loader:
                val_loss += criterion(model(x), y).item() * len(x)
        val_loss /= len(val_loader.dataset)
        if stopper.step(val_loss):
            break
