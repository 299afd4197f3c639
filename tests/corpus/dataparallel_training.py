import torch
import torch.nn as nn
import torch.backends.cudnn as cudnn
import torchvision.models as models

net = models.resnet34(num_classes=100)
net = nn.DataParallel(net).cuda()
cudnn.benchmark = True
criterion = nn.CrossEntropyLoss(reduction="none")
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)


def train(epoch, trainloader):
    net.train()
    train_loss = 0
    sample_losses = []
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        inputs, targets = inputs.cuda(), targets.cuda()
        optimizer.zero_grad()
        outputs = net(inputs)
        per_sample = criterion(outputs, targets)
        loss = per_sample.mean()
        loss.backward()
        optimizer.step()
        train_loss += loss.mean()  # expect: MEM101
        sample_losses.append(per_sample)  # expect: MEM102
        if batch_idx % 100 == 0:
            print(epoch, batch_idx, train_loss / (batch_idx + 1))
    return torch.cat(sample_losses)
