import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(30, 14), nn.Tanh(), nn.Linear(14, 7), nn.ReLU(), nn.Linear(7, 14), nn.Tanh(), nn.Linear(14, 30))
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
history = {"train": [], "val": []}

for epoch in range(50):
    model.train()
    train_losses = []
    for (x,) in train_loader:
        recon = model(x)
        loss = criterion(recon, x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_losses.append(loss.item())
    model.eval()
    val_losses = []
    for (x,) in val_loader:  # expect: MEM201
        recon = model(x)
        val_losses.append(criterion(recon, x).item())
    history["train"].append(sum(train_losses) / len(train_losses))
    history["val"].append(sum(val_losses) / len(val_losses))

errors = []
for (x,) in test_loader:  # expect: MEM201
    recon = model(x)
    errors.append(((recon - x) ** 2).mean(dim=1))  # expect: MEM102
threshold = torch.cat(errors).quantile(0.99)
