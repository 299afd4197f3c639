"""A training script that half-follows the GradScaler recipe."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device("cuda")


def build_model():
    return nn.Sequential(nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.ReLU(inplace=True), nn.Linear(512, 10)).to(device)


def train_missing_update(loader, epochs):
    model = build_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x.to(device)), y.to(device))
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # expect: MEM503


def train_bypass(loader, epochs):
    net = build_model()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    grad_scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(net(x.to(device)), y.to(device))
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()  # expect: MEM504
            grad_scaler.update()


def train_unscaled(loader, epochs, use_amp=True):
    model = build_model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda", enabled=use_amp):
                loss = criterion(model(x.to(device)), y.to(device))
            optimizer.zero_grad()
            loss.backward()  # expect: MEM505
            scaler.step(optimizer)
            scaler.update()


def main():
    loader = DataLoader(torch.utils.data.TensorDataset(torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))), batch_size=8)
    train_missing_update(loader, 1)
    train_bypass(loader, 1)
    train_unscaled(loader, 1)
