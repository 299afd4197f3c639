import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, train_loader, val_loader, device="cuda"):
        self.model = model.to(device)
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.device = device
        self.epoch_losses = []
        self.history = {"train": [], "val": []}

    def train_epoch(self):
        total = 0.0
        for x, y in self.train_loader:
            x, y = x.to(self.device), y.to(self.device)
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.epoch_losses.append(loss)  # expect: MEM102
            total += loss.item()
        return total / len(self.train_loader)

    def validate(self):
        self.model.eval()
        total = 0.0
        for x, y in self.val_loader:  # expect: MEM201
            x, y = x.to(self.device), y.to(self.device)
            total += F.cross_entropy(self.model(x), y).item()
        return total / len(self.val_loader)

    def fit(self, epochs):
        self.model.train()
        for epoch in range(epochs):
            train_loss = self.train_epoch()
            val_loss = self.validate()  # expect: MEM203
            self.history["train"].append(train_loss)
            self.history["val"].append(val_loss)
            print(f"{epoch}: {train_loss:.3f} / {val_loss:.3f}")
