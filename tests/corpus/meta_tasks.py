import torch


def outer_step(model, tasks, meta_optimizer, inner_loop):
    losses = []
    for support, query in tasks:
        fast_weights = inner_loop(model, support)
        losses.append(model.loss(query, fast_weights))
    meta_loss = torch.stack(losses).mean()
    meta_optimizer.zero_grad()
    meta_loss.backward()
    meta_optimizer.step()
    return meta_loss.item()


def train(model, task_loader, meta_optimizer, inner_loop, epochs):
    for epoch in range(epochs):
        running = 0.0
        for tasks in task_loader:
            running += outer_step(model, tasks, meta_optimizer, inner_loop)
        print(epoch, running / len(task_loader))
