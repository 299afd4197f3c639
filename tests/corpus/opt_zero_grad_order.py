"""A beginner's regression loop with zero_grad in the wrong place, and a train_step helper."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(13, 64)
        self.fc2 = nn.Linear(64, 1)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = nn.MSELoss()


def fit(train_loader, epochs):
    for epoch in range(epochs):
        for xb, yb in train_loader:
            pred = model(xb)
            loss = loss_fn(pred, yb)
            loss.backward()
            optimizer.zero_grad()  # expect: MEM303
            optimizer.step()
        print(f"epoch {epoch}: {loss.item():.3f}")


def train_step(batch, scaler):
    x, y = batch
    with torch.autocast("cuda", dtype=torch.float16):
        loss = loss_fn(model(x), y)
    scaler.scale(loss).backward()
    model.zero_grad(set_to_none=True)  # expect: MEM303
    scaler.step(optimizer)
    scaler.update()
    return loss.detach()


def fit_correct(train_loader, epochs):
    for epoch in range(epochs):
        for xb, yb in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
