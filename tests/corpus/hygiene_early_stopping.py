"""Early stopping helpers and best-checkpoint tracking."""
import copy

import numpy as np
import torch


class EarlyStopping:
    """Stops training when the validation loss stops improving."""

    def __init__(self, patience=7, delta=0.0, path="checkpoint.pt"):
        self.patience = patience
        self.delta = delta
        self.path = path
        self.counter = 0
        self.best_score = None
        self.early_stop = False
        self.val_loss_min = np.inf
        self.best_model_state = None

    def __call__(self, val_loss, model):
        score = -val_loss
        if self.best_score is None or score > self.best_score + self.delta:
            self.best_score = score
            self.best_model_state = model.state_dict()  # expect: MEM801
            self.counter = 0
        else:
            self.counter += 1
            if self.counter >= self.patience:
                self.early_stop = True

    def load_best(self, model):
        model.load_state_dict(self.best_model_state)


class CheckpointSaver:
    """Serialises at once: silent."""

    def __init__(self, path):
        self.path = path
        self.best = float("inf")

    def step(self, val_loss, model):
        if val_loss < self.best:
            self.best = val_loss
            torch.save(model.state_dict(), self.path)


def fit(model, train_loader, val_loader, optimizer, criterion, epochs=50):
    best_acc = 0.0
    best_weights = None
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, criterion)
        acc = validate(model, val_loader)
        if acc > best_acc:
            best_acc = acc
            best_weights = model.state_dict()  # expect: MEM801
    model.load_state_dict(best_weights)
    return model


def fit_tutorial(model, dataloaders, optimizer, criterion, num_epochs=25):
    best_model_wts = copy.deepcopy(model.state_dict())
    best_acc = 0.0
    for epoch in range(num_epochs):
        train_one_epoch(model, dataloaders["train"], optimizer, criterion)
        epoch_acc = validate(model, dataloaders["val"])
        if epoch_acc > best_acc:
            best_acc = epoch_acc
            best_model_wts = copy.deepcopy(model.state_dict())
    model.load_state_dict(best_model_wts)
    return model


def fit_cpu_copy(model, train_loader, val_loader, optimizer, criterion, epochs=10):
    best, best_state = 0.0, None
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, optimizer, criterion)
        acc = validate(model, val_loader)
        if acc > best:
            best = acc
            best_state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
            torch.save(model.state_dict(), "best.pt")
    return best_state


def train_one_epoch(model, loader, optimizer, criterion):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def validate(model, loader):
    model.eval()
    correct = total = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
        total += y.numel()
    return correct / total
