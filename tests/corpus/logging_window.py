import statistics

import torch


def train(model, loader, optimizer, criterion, log_every=20):
    window = []
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        window.append(loss)  # expect: MEM102
        if len(window) == log_every:
            print(step, torch.stack(window).mean().item())
            window.clear()


def train_chunks(model, loader, optimizer, criterion):
    for x, y in loader:
        parts = []
        for xc, yc in zip(x.chunk(4), y.chunk(4)):
            parts.append(criterion(model(xc), yc))
        total = sum(parts) / len(parts)
        optimizer.zero_grad()
        total.backward()
        optimizer.step()
        print(statistics.mean(p.item() for p in parts))
