import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self, backbone, heads):
        super().__init__()
        self.backbone = backbone
        self.heads = nn.ModuleDict(heads)

    def forward(self, x):
        feat = self.backbone(x)
        return {name: head(feat) for name, head in self.heads.items()}


def train(model, loader, optimizer, criteria, weights, epochs):
    log = {name: 0.0 for name in criteria}
    for epoch in range(epochs):
        for x, targets in loader:
            outputs = model(x)
            total = 0
            for name, criterion in criteria.items():
                task_loss = criterion(outputs[name], targets[name])
                total = total + weights[name] * task_loss
                log[name] += task_loss.item()
            optimizer.zero_grad()
            total.backward()
            optimizer.step()
        print(epoch, {k: v / len(loader) for k, v in log.items()})
