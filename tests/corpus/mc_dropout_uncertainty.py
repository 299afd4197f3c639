import torch
import torch.nn as nn


def enable_dropout(model):
    for m in model.modules():
        if m.__class__.__name__.startswith("Dropout"):
            m.train()


def mc_dropout_predict(model, loader, n_samples=30):
    model.eval()
    enable_dropout(model)
    all_means, all_vars = [], []
    with torch.no_grad():
        for x, _ in loader:
            samples = torch.stack([model(x).softmax(-1) for _ in range(n_samples)])
            all_means.append(samples.mean(0))
            all_vars.append(samples.var(0))
    return torch.cat(all_means), torch.cat(all_vars)


def predictive_entropy(model, x, T=50):
    model.train()  # dropout on at test time, on purpose
    with torch.no_grad():
        probs = []
        for _ in range(T):
            probs.append(model(x).softmax(-1))
    p = torch.stack(probs).mean(0)
    return -(p * p.log()).sum(-1)


def recalibrate_bn(model, loader):
    model.train()
    with torch.no_grad():
        for x, _ in loader:
            model(x)
    model.eval()
