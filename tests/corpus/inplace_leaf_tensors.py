"""Polynomial fit with raw tensors (the classic autograd tutorial), with and without no_grad."""
import math

import torch

dtype = torch.float
x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
y = torch.sin(x)

a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)

learning_rate = 1e-6
for t in range(2000):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    loss.backward()
    a -= learning_rate * a.grad  # expect: MEM401
    b -= learning_rate * b.grad  # expect: MEM401
    with torch.no_grad():
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
    a.grad = None
    b.grad = None
    c.grad = None
    d.grad = None


def fit_logistic(features, labels, steps=100, lr=0.1):
    w = torch.zeros(features.shape[1])
    w.requires_grad_()
    bias = torch.zeros(1, requires_grad=True)
    for _ in range(steps):
        logits = features @ w + bias
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, labels)
        loss.backward()
        w.sub_(lr * w.grad)  # expect: MEM401
        with torch.no_grad():
            bias.sub_(lr * bias.grad)
        w.grad.zero_()
        bias.grad.zero_()
    return w.detach(), bias.detach()


def running_stats(batches):
    mean = torch.zeros(3)
    count = 0
    for batch in batches:
        mean += batch.mean(0)
        count += 1
    mean /= count
    return mean
