"""Learning-rate schedulers stepped per epoch and per batch."""
import torch
import torch.nn as nn
import torch.optim as optim
from torch.optim.lr_scheduler import CosineAnnealingLR, OneCycleLR, ReduceLROnPlateau, StepLR

model = nn.Sequential(nn.Linear(10, 10))
optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
criterion = nn.MSELoss()


def train(epoch, loader):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def test(loader):
    model.eval()
    return sum(criterion(model(x), y).item() for x, y in loader) / len(loader)


def main_step_lr(train_loader, test_loader, epochs=30):
    scheduler = StepLR(optimizer, step_size=10, gamma=0.1)
    for epoch in range(1, epochs + 1):
        scheduler.step()  # expect: MEM802
        train(epoch, train_loader)
        test(test_loader)


def main_plateau(train_loader, val_loader, epochs=30):
    scheduler = ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=3)
    for epoch in range(epochs):
        train(epoch, train_loader)
        val_loss = test(val_loader)
        scheduler.step()  # expect: MEM803
        print(f"epoch {epoch} val {val_loss:.4f}")


def main_cosine_with_metric(train_loader, val_loader, epochs=30):
    scheduler = CosineAnnealingLR(optimizer, T_max=epochs)
    for epoch in range(epochs):
        train(epoch, train_loader)
        val_loss = test(val_loader)
        scheduler.step(val_loss)  # expect: MEM803


def main_one_cycle(train_loader, epochs=5):
    scheduler = OneCycleLR(optimizer, max_lr=0.1, epochs=epochs, steps_per_epoch=len(train_loader))
    for epoch in range(epochs):
        for x, y in train_loader:
            scheduler.step()  # expect: MEM802
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()


def main_correct(train_loader, val_loader, epochs=30):
    step_sched = StepLR(optimizer, step_size=10)
    plateau = ReduceLROnPlateau(optimizer, "min")
    for epoch in range(epochs):
        train(epoch, train_loader)
        step_sched.step()
        plateau.step(test(val_loader))


def main_warm_restarts(train_loader, epochs=30):
    scheduler = optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=10)
    iters = len(train_loader)
    for epoch in range(epochs):
        for i, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            scheduler.step(epoch + i / iters)


def main_timm(train_loader, val_loader, lr_scheduler, epochs=30):
    num_updates = 0
    for epoch in range(epochs):
        lr_scheduler.step(epoch)
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            num_updates += 1
            lr_scheduler.step_update(num_updates=num_updates)
        eval_metrics = {"loss": test(val_loader)}
        lr_scheduler.step(epoch + 1, eval_metrics["loss"])
