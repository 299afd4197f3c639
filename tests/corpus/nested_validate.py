import torch
import torch.nn as nn


def train(model, train_loader, val_loader, epochs, lr):
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criterion = nn.MSELoss()

    def validate():
        model.eval()
        losses = []
        with torch.no_grad():
            for xb, yb in val_loader:
                losses.append(criterion(model(xb), yb))
        model.train()
        return torch.stack(losses).mean().item()

    best = float("inf")
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
        val = validate()
        if val < best:
            best = val
            torch.save(model.state_dict(), "best.pt")
    return best
