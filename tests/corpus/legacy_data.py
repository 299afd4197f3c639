import torch
from torch.autograd import Variable

train_losses = []
for epoch in range(50):
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = Variable(data), Variable(target)
        optimizer.zero_grad()
        output = model(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        train_losses.append(loss.data[0])
        if batch_idx % 10 == 0:
            print('Train Epoch: {} Loss: {:.6f}'.format(epoch, loss.data[0]))
    epoch_total = 0
    for batch_idx, (data, target) in enumerate(train_loader):
        output = model(Variable(data))
        epoch_total += criterion(output, Variable(target)).detach().cpu()
