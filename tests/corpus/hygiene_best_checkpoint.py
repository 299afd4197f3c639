"""Tracking the best checkpoint during training, four ways."""
import copy

import torch
import torch.nn as nn


class EarlyStopper:
    def __init__(self, patience=10, restore_best_weights=True):
        self.patience = patience
        self.restore_best_weights = restore_best_weights
        self.best = None
        self.wait = 0
        self.best_weights = None

    def step(self, metric, model):
        if self.best is None or metric < self.best:
            self.best = metric
            self.wait = 0
            if self.restore_best_weights:
                self.best_weights = model.state_dict()  # expect: MEM801
            return False
        self.wait += 1
        if self.wait >= self.patience:
            if self.restore_best_weights:
                model.load_state_dict(self.best_weights)
            return True
        return False


def fit_and_save_best(model, train_fn, eval_fn, epochs, path="best.pt"):
    best_loss = float("inf")
    best_state = None
    for epoch in range(epochs):
        train_fn(model)
        val_loss = eval_fn(model)
        if val_loss < best_loss:
            best_loss = val_loss
            best_state = model.state_dict()  # expect: MEM801
    torch.save(best_state, path)
    return best_loss


def fit_and_return_module(model, train_fn, eval_fn, epochs):
    best_score, best_model = -1.0, None
    for epoch in range(epochs):
        train_fn(model)
        score = eval_fn(model)
        if score > best_score:
            best_score = score
            best_model = copy.deepcopy(model)
    return best_model


def fit_keep_cpu_copy(model: nn.Module, train_fn, eval_fn, epochs):
    best_score, snapshot = -1.0, None
    for epoch in range(epochs):
        train_fn(model)
        score = eval_fn(model)
        if score > best_score:
            best_score = score
            snapshot = {name: t.detach().to("cpu", copy=True) for name, t in model.state_dict().items()}
        last_state = model.state_dict()
        torch.save({"epoch": epoch, "model": last_state}, "last.pt")
    model.load_state_dict(snapshot)
    return model
