import torch
import torch.nn as nn


def softmax_entropy(x):
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


def configure_model(model):
    model.train()
    model.requires_grad_(False)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.requires_grad_(True)
            m.track_running_stats = False
    return model


def evaluate_tent(model, loader, optimizer, steps=1):
    correct = 0
    for x, y in loader:
        for _ in range(steps):
            outputs = model(x)
            loss = softmax_entropy(outputs).mean(0)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        correct += (outputs.argmax(1) == y).float().sum().item()
    return correct / len(loader.dataset)
