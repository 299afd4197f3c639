import numpy as np
import torch
from torch import nn


def train(net, trainloader, valloader, epochs, lr=0.001, device="cpu"):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    train_losses, val_losses = [], []
    for e in range(epochs):
        net.train()
        running_loss = 0
        for images, labels in trainloader:
            images, labels = images.to(device), labels.to(device)
            optimizer.zero_grad()
            log_ps = net(images)
            loss = criterion(log_ps, labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()

        net.eval()
        val_loss = 0
        accuracy = 0
        for images, labels in valloader:  # expect: MEM201
            images, labels = images.to(device), labels.to(device)
            log_ps = net(images)
            val_loss += criterion(log_ps, labels)  # expect: MEM101
            ps = torch.exp(log_ps)
            top_p, top_class = ps.topk(1, dim=1)
            equals = top_class == labels.view(*top_class.shape)
            accuracy += torch.mean(equals.type(torch.FloatTensor))
        train_losses.append(running_loss / len(trainloader))
        val_losses.append(val_loss / len(valloader))  # expect: MEM102
        print("Epoch: {}/{}.. ".format(e + 1, epochs),
              "Training Loss: {:.3f}.. ".format(train_losses[-1]),
              "Val Loss: {:.3f}.. ".format(val_losses[-1]),
              "Val Accuracy: {:.3f}".format(accuracy / len(valloader)))
    return np.array(train_losses)
