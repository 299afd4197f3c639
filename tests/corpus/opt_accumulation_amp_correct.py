"""Image classification with AMP, gradient accumulation and clipping, written correctly."""
import torch
import torch.nn as nn
import torchvision
from torch.utils.data import DataLoader

ACCUM_STEPS = 8
MAX_NORM = 1.0


def build(num_classes):
    model = torchvision.models.resnet50(num_classes=num_classes)
    return model.cuda()


def train_one_epoch(model, loader, optimizer, scaler, criterion, epoch):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    running = 0.0
    for i, (images, targets) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        targets = targets.cuda(non_blocking=True)
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            output = model(images)
            loss = criterion(output, targets) / ACCUM_STEPS
        scaler.scale(loss).backward()
        if (i + 1) % ACCUM_STEPS == 0:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
        running += loss.item() * ACCUM_STEPS
    return running / len(loader)


def main():
    model = build(1000)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(torchvision.datasets.FakeData(transform=torchvision.transforms.ToTensor()), batch_size=32)
    for epoch in range(90):
        train_one_epoch(model, loader, optimizer, scaler, criterion, epoch)


if __name__ == "__main__":
    main()
