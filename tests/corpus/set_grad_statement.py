import torch

torch.set_grad_enabled(False)


def evaluate(model, loader):
    model.eval()
    outs = []
    for x, _ in loader:
        outs.append(model(x))
    return torch.cat(outs)


if __name__ == "__main__":
    model = torch.jit.load("model.pt")
    preds = evaluate(model, loader)
    print(preds.shape)
