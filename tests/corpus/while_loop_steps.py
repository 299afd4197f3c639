import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
mse = nn.MSELoss()
data_iter = iter(loader)
step = 0
max_steps = 10000
total_loss = 0.0
while step < max_steps:
    try:
        x, y = next(data_iter)
    except StopIteration:
        data_iter = iter(loader)
        x, y = next(data_iter)
    loss = mse(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    total_loss = total_loss + loss  # expect: MEM101
    step += 1
    if step % 1000 == 0:
        print("step", step, "avg loss", float(total_loss) / step)
