"""MAML-style meta-learning: the accumulated query loss is backpropagated on purpose."""
import torch
import torch.nn.functional as F
from torch.func import functional_call


def inner_adapt(model, params, x, y, inner_lr, steps):
    for _ in range(steps):
        loss = F.cross_entropy(functional_call(model, params, (x,)), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        params = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
    return params


def meta_train(model, task_loader, meta_opt, inner_lr=0.01, steps=1, epochs=100):
    for epoch in range(epochs):
        for tasks in task_loader:
            meta_opt.zero_grad()
            meta_loss = 0.0
            for (xs, ys, xq, yq) in tasks:
                params = dict(model.named_parameters())
                adapted = inner_adapt(model, params, xs, ys, inner_lr, steps)
                query_logits = functional_call(model, adapted, (xq,))
                meta_loss += F.cross_entropy(query_logits, yq)
            meta_loss = meta_loss / len(tasks)
            meta_loss.backward()
            meta_opt.step()
            print(f"epoch {epoch} meta-loss {meta_loss.item():.4f}")
