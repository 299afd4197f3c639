import matplotlib.pyplot as plt
import torch
import torchvision


def compute_saliency_maps(X, y, model):
    model.eval()
    X.requires_grad_()
    scores = model(X)
    scores = scores.gather(1, y.view(-1, 1)).squeeze()
    scores.backward(torch.ones_like(scores))
    saliency, _ = torch.max(X.grad.data.abs(), dim=1)
    return saliency


def show_saliency(model, loader, n_batches=3):
    model.eval()
    for i, (X, y) in enumerate(loader):
        if i == n_batches:
            break
        X = X.clone().requires_grad_(True)
        saliency = compute_saliency_maps(X, y, model)
        plt.imshow(saliency[0].numpy(), cmap=plt.cm.hot)
        plt.savefig(f"saliency_{i}.png")


@torch.no_grad()
def test_accuracy(model, loader):
    model.eval()
    correct = total = 0
    for X, y in loader:
        pred = model(X).argmax(1)
        correct += (pred == y).sum().item()
        total += y.numel()
    return correct / total


model = torchvision.models.squeezenet1_1(weights="DEFAULT")
for param in model.parameters():
    param.requires_grad = False
show_saliency(model, val_loader)
print(test_accuracy(model, val_loader))
