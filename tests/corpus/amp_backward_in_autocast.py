"""Mixed-precision training where the backward sits inside the autocast block."""
import torch
import torch.nn as nn
from torch.amp import GradScaler, autocast


def train_epoch(model, loader, optimizer, criterion, device="cuda"):
    scaler = GradScaler("cuda")
    model.train()
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad(set_to_none=True)
        with autocast("cuda"):
            logits = model(images)
            loss = criterion(logits, labels)
            scaler.scale(loss).backward()  # expect: MEM502
            scaler.step(optimizer)
            scaler.update()


def train_bf16(model, loader, optimizer):
    for batch in loader:
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            out = model(batch["input_ids"].cuda(), labels=batch["labels"].cuda())
            loss = out.loss
            loss.backward()  # expect: MEM502
        optimizer.step()
        optimizer.zero_grad()


def train_correct(model, loader, optimizer, criterion):
    scaler = GradScaler("cuda")
    for images, labels in loader:
        optimizer.zero_grad(set_to_none=True)
        with autocast("cuda"):
            loss = criterion(model(images.cuda()), labels.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_with_fp32_loss(model, loader, optimizer):
    """The loss is computed in an autocast(enabled=False) region: silent."""
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            feats = model(x.cuda())
            with torch.autocast("cuda", enabled=False):
                loss = nn.functional.mse_loss(feats.float(), y.cuda())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
