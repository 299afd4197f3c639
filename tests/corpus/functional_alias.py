import torch
import torch.nn as nn

criterion = torch.nn.functional.mse_loss


class Regressor(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.lin = nn.Linear(d, 1)

    def forward(self, x):
        return self.lin(x).squeeze(-1)


reg = Regressor(16)
opt = torch.optim.SGD(reg.parameters(), lr=0.01)
for epoch in range(100):
    loss_sum = 0
    for xb, yb in train_dl:
        pred = reg(xb)
        loss = criterion(pred, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss_sum += criterion(pred, yb)  # expect: MEM101
    print(epoch, loss_sum / len(train_dl))
