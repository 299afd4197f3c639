"""AMP inside a Trainer class: the scaler lives on self."""
import torch
import torch.nn as nn


class AmpTrainer:
    def __init__(self, model, optimizer, use_amp=True, grad_clip=1.0):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.use_amp = use_amp
        self.grad_clip = grad_clip
        self.criterion = nn.CrossEntropyLoss()

    def train_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", enabled=self.use_amp):
                loss = self.criterion(self.model(x.cuda()), y.cuda())
            self.scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)  # expect: MEM506
            self.scaler.step(self.optimizer)  # expect: MEM503


class FixedAmpTrainer(AmpTrainer):
    def train_epoch(self, loader):
        self.model.train()
        for x, y in loader:
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", enabled=self.use_amp):
                loss = self.criterion(self.model(x.cuda()), y.cuda())
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
            self.finish_step()

    def finish_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
