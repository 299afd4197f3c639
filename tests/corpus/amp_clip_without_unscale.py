"""Transformer language-model training with AMP and gradient clipping."""
import math

import torch
import torch.nn as nn


class TransformerLM(nn.Module):
    def __init__(self, vocab, d_model=512, nhead=8, layers=6):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.encoder(self.embed(tokens) * math.sqrt(self.embed.embedding_dim)))


def train(model, train_iter, optimizer, scheduler, args):
    scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for step, (src, tgt) in enumerate(train_iter):
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
            logits = model(src.cuda())
            loss = criterion(logits.view(-1, logits.size(-1)), tgt.cuda().view(-1))
            loss = loss / args.accum
        scaler.scale(loss).backward()
        if (step + 1) % args.accum == 0:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)  # expect: MEM506
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            if step % args.log_interval == 0:
                print(f"step {step} loss {loss.item() * args.accum:.3f} grad_norm {grad_norm:.2f}")


def train_correct(model, train_iter, optimizer, args):
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.CrossEntropyLoss()
    for src, tgt in train_iter:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(src.cuda())
            loss = criterion(logits.view(-1, logits.size(-1)), tgt.cuda().view(-1))
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_value_(model.parameters(), 0.5)
        scaler.step(optimizer)
        scaler.update()
