import time

import torch


def benchmark(model, x, iters=50):
    model.eval()
    for _ in range(10):  # expect: MEM201
        model(x)
    torch.cuda.synchronize()
    start = time.time()
    for _ in range(iters):  # expect: MEM201
        model(x)
    torch.cuda.synchronize()
    return (time.time() - start) / iters


def ensemble_predict(models, loader):
    for m in models:
        m.eval()
    preds = []
    with torch.no_grad():
        for x, _ in loader:
            preds.append(torch.stack([m(x).softmax(-1) for m in models]).mean(0))
    return torch.cat(preds)
