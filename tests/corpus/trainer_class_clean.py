import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

logger = logging.getLogger(__name__)


@dataclass
class Config:
    lr: float = 3e-4
    epochs: int = 10
    grad_clip: float = 1.0


class Trainer:
    def __init__(self, model: nn.Module, train_loader, val_loader, cfg: Config):
        self.model = model
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.cfg = cfg
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr)
        self.scaler = torch.cuda.amp.GradScaler()
        self.criterion = nn.CrossEntropyLoss()
        self.train_losses = []
        self.val_metrics = []

    def train_epoch(self):
        self.model.train()
        epoch_loss = 0.0
        for step, (x, y) in enumerate(self.train_loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            with torch.autocast("cuda", dtype=torch.float16):
                logits = self.model(x)
                loss = self.criterion(logits, y)
            self.optimizer.zero_grad(set_to_none=True)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.grad_clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            epoch_loss += loss.detach()
            self.train_losses.append(loss.item())
        return (epoch_loss / len(self.train_loader)).item()

    @torch.no_grad()
    def validate(self):
        self.model.eval()
        correct, total, loss_sum = 0, 0, 0.0
        outputs = []
        for x, y in self.val_loader:
            x, y = x.cuda(), y.cuda()
            logits = self.model(x)
            loss_sum += self.criterion(logits, y) * y.size(0)
            correct += (logits.argmax(-1) == y).sum().item()
            total += y.size(0)
            outputs.append(logits)
        self.val_metrics.append(correct / total)
        return loss_sum / total, torch.cat(outputs)

    def fit(self):
        for epoch in range(self.cfg.epochs):
            train_loss = self.train_epoch()
            val_loss, _ = self.validate()
            logger.info("epoch %d train %.4f val %.4f", epoch, train_loss, val_loss)
