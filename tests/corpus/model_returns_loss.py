import torch
import torch.nn as nn


class LossModel(nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder = encoder
        self.head = head

    def forward(self, x, y):
        return nn.functional.cross_entropy(self.head(self.encoder(x)), y)


def run(model, loader, opt, epochs=3):
    for epoch in range(epochs):
        total = 0
        n = 0
        for x, y in loader:
            loss = model(x, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss * x.size(0)  # expect: MEM101
            n += x.size(0)
            acc_val = 0.0
            acc_val += loss.item() if isinstance(loss, torch.Tensor) else loss
        print(f"epoch {epoch}: {total / n}")
