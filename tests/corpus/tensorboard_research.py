import argparse

import torch
import torch.nn.functional as F
from torch.utils.tensorboard import SummaryWriter


def train(args, model, loader, optimizer, epoch, writer):
    model.train()
    loss_avg = 0
    for i, (x, y) in enumerate(loader):
        x, y = x.cuda(), y.cuda()
        out = model(x)
        loss = F.cross_entropy(out, y, label_smoothing=args.smoothing)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        global_step = epoch * len(loader) + i
        writer.add_scalar("train/loss", loss, global_step)
        loss_avg += loss  # expect: MEM101
        if i % args.log_interval == 0:
            writer.add_scalar("train/avg_loss", loss_avg / (i + 1), global_step)


def test(args, model, loader, epoch, writer):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.cuda(), y.cuda()
            correct += model(x).argmax(dim=1).eq(y).sum().item()
    acc = correct / len(loader.dataset)
    writer.add_scalar("test/acc", acc, epoch)
    return acc
