"""A home-grown Trainer class: steps, hooks and helpers spread over methods."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, train_loader, val_loader, lr=1e-3, max_norm=None):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.criterion = nn.CrossEntropyLoss()
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.max_norm = max_norm

    def _reset_grads(self):
        self.optimizer.zero_grad(set_to_none=True)

    def train_step(self, x, y):
        self.model.train()
        loss = self.criterion(self.model(x), y)
        loss.backward()
        if self.max_norm:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
        self.optimizer.zero_grad()  # expect: MEM303
        self.optimizer.step()
        return loss.item()

    def fit(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_loader:
                self._reset_grads()
                loss = self.criterion(self.model(x), y)
                loss.backward()
                self.optimizer.step()
            print(epoch, self.validate())  # expect: MEM203

    def fit_no_reset(self, epochs):
        for epoch in range(epochs):
            for x, y in self.train_loader:
                loss = self.criterion(self.model(x), y)
                loss.backward()
                self.optimizer.step()  # expect: MEM304

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        total = correct = 0
        for x, y in self.val_loader:
            correct += (self.model(x).argmax(1) == y).sum().item()
            total += y.numel()
        return correct / max(total, 1)


class MultiTaskTrainer(Trainer):
    def step(self, batch):
        self.optimizer.zero_grad()
        loss_a = self.criterion(self.model(batch["a"]), batch["ya"])
        loss_a.backward(retain_graph=True)
        grads_a = [p.grad.clone() for p in self.model.parameters() if p.grad is not None]
        self.optimizer.zero_grad()
        loss_b = self.criterion(self.model(batch["b"]), batch["yb"])
        loss_b.backward()
        self.optimizer.step()
        return grads_a
