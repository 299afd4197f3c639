import pytorch_lightning as pl
import torch
import torch.nn as nn
import torch.nn.functional as F


class LitClassifier(pl.LightningModule):
    def __init__(self, backbone, lr=1e-3):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(512, 10)
        self.lr = lr
        self.validation_step_outputs = []
        self.test_preds = []

    def forward(self, x):
        return self.head(self.backbone(x))

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.cross_entropy(logits, y)
        self.validation_step_outputs.append(loss)
        self.log("val_loss", loss, prog_bar=True)

    def on_validation_epoch_end(self):
        avg = torch.stack(self.validation_step_outputs).mean()
        self.log("val_loss_epoch", avg)
        self.validation_step_outputs.clear()

    def test_step(self, batch, batch_idx):
        x, y = batch
        for chunk in x.split(16):
            self.test_preds.append(self(chunk).argmax(-1))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)
