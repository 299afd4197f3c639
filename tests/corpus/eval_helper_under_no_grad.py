import torch
import torch.nn as nn


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


def run_validation(model, loader, criterion):
    model.eval()
    losses, top1 = [], []
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        acc1, = accuracy(output, target)
        losses.append(loss.item())
        top1.append(acc1.item())
    return sum(losses) / len(losses), sum(top1) / len(top1)


def train_one_epoch(model, loader, criterion, optimizer):
    model.train()
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(model, train_loader, val_loader, epochs):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9, weight_decay=1e-4)
    best = 0
    for epoch in range(epochs):
        train_one_epoch(model, train_loader, criterion, optimizer)
        with torch.no_grad():
            val_loss, acc = run_validation(model, val_loader, criterion)
        best = max(best, acc)
        print(f"epoch {epoch} val_loss {val_loss:.3f} acc {acc:.2f} best {best:.2f}")
