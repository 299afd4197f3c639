import wandb
import torch


def train(model, loader, optimizer, scheduler, epochs, device):
    step = 0
    for epoch in range(epochs):
        model.train()
        for batch in loader:
            batch = {k: v.to(device) for k, v in batch.items()}
            out = model(**batch)
            loss = out.loss
            loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            losses = {}
            losses["loss"] = loss
            losses["lr"] = scheduler.get_last_lr()[0]
            wandb.log({"train/loss": loss.item(), "step": step})
            step += 1
            metrics = {"loss": 0.0}
            metrics["loss"] += loss.item()
