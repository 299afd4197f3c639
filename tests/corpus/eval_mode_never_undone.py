import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))

    def forward(self, x):
        return self.layers(x.view(x.size(0), -1))


def evaluate(model, loader):
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


model = MLP()
opt = torch.optim.Adam(model.parameters())
loss_fn = nn.CrossEntropyLoss()
train_dl = DataLoader(train_ds, batch_size=128, shuffle=True)
val_dl = DataLoader(val_ds, batch_size=512)

model.train()
for epoch in range(30):
    for x, y in train_dl:
        opt.zero_grad()
        loss_fn(model(x), y).backward()
        opt.step()
    model.eval()  # expect: MEM203
    acc = evaluate(model, val_dl)
    print(f"epoch {epoch}: val acc {acc:.3f}")
