"""A small GPT trained on random token batches: micro-steps, AMP, clipping."""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F

block_size = 128
batch_size = 12
grad_accum = 8
max_iters = 2000
device = "cuda"


class TinyGPT(nn.Module):
    def __init__(self, vocab=50304, d=384):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.blocks = nn.TransformerEncoder(nn.TransformerEncoderLayer(d, 6, batch_first=True), 6)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets=None):
        x = self.blocks(self.tok(idx))
        logits = self.head(x)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def get_batch(data):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device, non_blocking=True), y.to(device, non_blocking=True)


def get_lr(it, warmup=100, lr=6e-4, min_lr=6e-5):
    if it < warmup:
        return lr * it / warmup
    ratio = (it - warmup) / (max_iters - warmup)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (lr - min_lr)


def train(data):
    model = TinyGPT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4, betas=(0.9, 0.95))
    scaler = torch.amp.GradScaler("cuda")
    X, Y = get_batch(data)
    for it in range(max_iters):
        for group in optimizer.param_groups:
            group["lr"] = get_lr(it)
        for micro_step in range(grad_accum):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits, loss = model(X, Y)
                loss = loss / grad_accum
            X, Y = get_batch(data)
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)


def train_flat(data):
    """The same run written as one loop over micro-batches, forgetting to scale."""
    model = TinyGPT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=6e-4)
    for it in range(max_iters * grad_accum):
        X, Y = get_batch(data)
        logits, loss = model(X, Y)
        loss.backward()  # expect: MEM302
        if (it + 1) % grad_accum == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def train_flag(data, accum_steps=4):
    model = TinyGPT().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    for step in range(max_iters):
        sync = (step + 1) % accum_steps == 0
        optimizer.zero_grad(set_to_none=True)  # expect: MEM301
        X, Y = get_batch(data)
        _, loss = model(X, Y)
        (loss / accum_steps).backward()
        if sync:
            optimizer.step()
