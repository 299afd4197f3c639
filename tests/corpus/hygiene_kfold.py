"""K-fold cross-validation: per-fold models moved to the device, best states copied."""
import copy

import torch
import torch.nn as nn
from sklearn.model_selection import KFold
from torch.utils.data import DataLoader, Subset

device = "cuda"


def cross_validate(dataset, make_model, folds=5, epochs=10):
    kfold = KFold(n_splits=folds, shuffle=True)
    fold_states = []
    for fold, (train_ids, val_ids) in enumerate(kfold.split(dataset)):
        model = make_model()
        model.to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.95)
        train_loader = DataLoader(Subset(dataset, train_ids), batch_size=64, shuffle=True)
        best_loss, best_state = float("inf"), None
        for epoch in range(epochs):
            for x, y in train_loader:
                x, y = x.to(device), y.to(device)
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(model(x), y)
                loss.backward()
                optimizer.step()
            scheduler.step()
            if loss.item() < best_loss:
                best_loss = loss.item()
                best_state = copy.deepcopy(model.state_dict())
        fold_states.append(best_state)
    return fold_states
