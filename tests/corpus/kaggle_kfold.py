import gc

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader
from tqdm import tqdm

DEVICE = "cuda"
EPOCHS = 10


class TabularModel(nn.Module):
    def __init__(self, n_features, n_targets):
        super().__init__()
        self.net = nn.Sequential(
            nn.BatchNorm1d(n_features), nn.Dropout(0.2), nn.Linear(n_features, 512), nn.ReLU(),
            nn.BatchNorm1d(512), nn.Dropout(0.3), nn.Linear(512, n_targets),
        )

    def forward(self, x):
        return self.net(x)


def train_fn(model, optimizer, scheduler, loss_fn, dataloader, device):
    model.train()
    final_loss = 0
    for data in dataloader:
        optimizer.zero_grad()
        inputs, targets = data['x'].to(device), data['y'].to(device)
        outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        final_loss += loss.item()
    final_loss /= len(dataloader)
    return final_loss


def valid_fn(model, loss_fn, dataloader, device):
    model.eval()
    final_loss = 0
    valid_preds = []
    for data in dataloader:
        inputs, targets = data['x'].to(device), data['y'].to(device)
        with torch.no_grad():
            outputs = model(inputs)
        loss = loss_fn(outputs, targets)
        final_loss += loss.item()
        valid_preds.append(outputs.sigmoid().detach().cpu().numpy())
    final_loss /= len(dataloader)
    valid_preds = np.concatenate(valid_preds)
    return final_loss, valid_preds


def inference_fn(model, dataloader, device):
    model.eval()
    preds = []
    for data in tqdm(dataloader):  # expect: MEM201
        inputs = data['x'].to(device)
        outputs = model(inputs)
        preds.append(outputs.sigmoid().detach().cpu().numpy())
    preds = np.concatenate(preds)
    return preds


def run_training(fold, train_df, valid_df, test_loader):
    train_loader = DataLoader(train_df, batch_size=256, shuffle=True)
    valid_loader = DataLoader(valid_df, batch_size=256)
    model = TabularModel(n_features=875, n_targets=206).to(DEVICE)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer=optimizer, pct_start=0.1, max_lr=1e-2,
                                                    epochs=EPOCHS, steps_per_epoch=len(train_loader))
    loss_fn = nn.BCEWithLogitsLoss()
    best_loss = np.inf
    for epoch in range(EPOCHS):
        train_loss = train_fn(model, optimizer, scheduler, loss_fn, train_loader, DEVICE)
        valid_loss, valid_preds = valid_fn(model, loss_fn, valid_loader, DEVICE)
        print(f"FOLD: {fold}, EPOCH: {epoch}, train_loss: {train_loss}, valid_loss: {valid_loss}")
        if valid_loss < best_loss:
            best_loss = valid_loss
            torch.save(model.state_dict(), f"FOLD{fold}_.pth")
    model.load_state_dict(torch.load(f"FOLD{fold}_.pth"))
    predictions = inference_fn(model, test_loader, DEVICE)
    del model
    gc.collect()
    return predictions


kf = KFold(n_splits=5)
oof = []
for fold, (trn_idx, val_idx) in enumerate(kf.split(train)):
    oof.append(run_training(fold, train.iloc[trn_idx], train.iloc[val_idx], test_loader))
