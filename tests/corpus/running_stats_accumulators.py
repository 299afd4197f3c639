import collections

import torch
import torch.nn as nn


def train(model, loader, optimizer, epochs=10, log_every=50):
    criterion = nn.SmoothL1Loss()
    smoothed = 0.0
    stats = collections.defaultdict(float)
    history = []
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            pred = model(x)
            loss = criterion(pred, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            smoothed = 0.9 * smoothed + 0.1 * loss  # expect: MEM101
            stats["loss"] += loss  # expect: MEM101
            stats["n"] += 1
            history.append({"step": step, "loss": loss})  # expect: MEM102
            if step % log_every == 0:
                print(f"epoch {epoch} step {step} smoothed {smoothed:.4f}")
    return history
