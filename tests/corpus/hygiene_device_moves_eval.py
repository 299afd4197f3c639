"""Evaluation and training helpers that move things inside the batch loop."""
import torch
import torch.nn as nn


def validate(model, val_loader, criterion, device):
    model.eval()
    total_loss = 0.0
    with torch.no_grad():
        for inputs, targets in val_loader:
            model = model.to(device)  # expect: MEM703
            inputs, targets = inputs.to(device), targets.to(device)
            total_loss += criterion(model(inputs), targets).item()
    return total_loss / len(val_loader)


def train_weighted(model, train_loader, optimizer, class_weights, device):
    model.train()
    for inputs, targets in train_loader:
        weights = torch.tensor(class_weights, dtype=torch.float32).to(device)
        criterion = nn.CrossEntropyLoss(weight=weights)
        reg = torch.tensor(0.0).to(device)  # expect: MEM703
        for p in model.parameters():
            reg = reg + p.pow(2).sum()
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets) + 1e-5 * reg
        loss.backward()
        optimizer.step()


def train_gan_labels(netD, netG, loader, opt_d, nz=100, device="cuda"):
    criterion = nn.BCELoss()
    for real, _ in loader:
        real = real.to(device)
        valid = torch.ones(real.size(0), 1, device=device)
        fake_label = torch.zeros(real.size(0), 1).to(device)
        opt_d.zero_grad()
        loss = criterion(netD(real), valid) + criterion(netD(netG(torch.randn(real.size(0), nz, device=device)).detach()), fake_label)
        loss.backward()
        opt_d.step()


def epochwise_moves(model, loaders, optimizer, epochs, device):
    for epoch in range(epochs):
        model.to(device)
        for x, y in loaders["train"]:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x.to(device)), y.to(device)).backward()
            optimizer.step()
