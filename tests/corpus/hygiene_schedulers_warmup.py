"""Warmup and per-iteration schedules in a classification project."""
import math

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR, MultiStepLR, ReduceLROnPlateau
from transformers import get_cosine_schedule_with_warmup


class NoamOpt:
    """The Annotated Transformer's wrapper: sets the rate for the coming step."""

    def __init__(self, model_size, factor, warmup, optimizer):
        self.optimizer = optimizer
        self._step = 0
        self.warmup = warmup
        self.factor = factor
        self.model_size = model_size

    def rate(self, step):
        return self.factor * (self.model_size ** -0.5 * min(step ** -0.5, step * self.warmup ** -1.5))

    def step(self):
        self._step += 1
        for p in self.optimizer.param_groups:
            p["lr"] = self.rate(self._step)


def train_transformers_schedule(model, loader, epochs, lr=5e-5):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = get_cosine_schedule_with_warmup(optimizer, 500, epochs * len(loader))
    for epoch in range(epochs):
        for batch in loader:
            scheduler.step()  # expect: MEM802
            loss = model(**batch).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()


def train_noam(model, loader, epochs):
    base = torch.optim.Adam(model.parameters(), lr=0, betas=(0.9, 0.98), eps=1e-9)
    scheduler = NoamOpt(512, 2, 4000, base)
    for epoch in range(epochs):
        for src, tgt in loader:
            scheduler.step()
            loss = model(src, tgt)
            loss.backward()
            base.step()
            base.zero_grad()


def train_skip_first(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = MultiStepLR(optimizer, milestones=[30, 60])
    for epoch in range(epochs):
        if epoch > 0:
            scheduler.step()
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()


def train_lambda(model, loader, epochs, warmup_epochs=5):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = LambdaLR(optimizer, lambda e: min(1.0, (e + 1) / warmup_epochs) * 0.5 * (1 + math.cos(math.pi * e / epochs)))
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        scheduler.step()


class Experiment:
    def __init__(self, model, lr=0.01):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.scheduler = ReduceLROnPlateau(self.optimizer, mode="max", patience=3)
        self.milestones = MultiStepLR(self.optimizer, milestones=[10, 20])

    def end_of_epoch(self, val_acc):
        self.scheduler.step()  # expect: MEM803
        self.milestones.step(val_acc)  # expect: MEM803
