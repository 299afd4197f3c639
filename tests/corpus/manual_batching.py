import torch
import torch.nn as nn

X_train = torch.randn(5000, 30)
y_train = torch.randint(0, 2, (5000,))
model = nn.Sequential(nn.Linear(30, 64), nn.ReLU(), nn.Linear(64, 2))
opt = torch.optim.Adam(model.parameters())
crit = nn.CrossEntropyLoss()
bs = 100
losses = []
for epoch in range(30):
    perm = torch.randperm(len(X_train))
    for i in range(len(X_train) // bs):
        idx = perm[i * bs:(i + 1) * bs]
        out = model(X_train[idx])
        loss = crit(out, y_train[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss)  # expect: MEM102

full_history = []
for epoch in range(200):
    out = model(X_train)
    loss = crit(out, y_train)
    opt.zero_grad()
    loss.backward()
    opt.step()
    full_history.append(loss)  # expect: MEM102
    with torch.no_grad():
        ema_loss = 0.99 * ema_loss + 0.01 * loss
