import torch
import torch.nn as nn


def compute_loss(model, batch, criterion):
    logits = model(batch["x"])
    loss = criterion(logits, batch["y"])
    return loss, loss.item()


def train(model, loader, optimizer, epochs):
    criterion = nn.CrossEntropyLoss()
    history = []
    for epoch in range(epochs):
        epoch_total = 0.0
        for batch in loader:
            loss, loss_value = compute_loss(model, batch, criterion)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_total += loss_value
            history.append(loss_value)
        print(epoch, epoch_total / len(loader))
    return history


def score(model, loader):
    model.eval()
    scores = []
    for batch in loader:  # expect: MEM201
        scores.extend(model(batch["x"]).softmax(-1)[:, 1].tolist())
    return scores
