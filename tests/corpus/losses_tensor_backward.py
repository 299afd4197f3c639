import torch


def train_multiscale(model, loader, optimizer, scales=(1.0, 0.5, 0.25)):
    for images, targets in loader:
        losses = 0
        for s in scales:
            x = torch.nn.functional.interpolate(images, scale_factor=s)
            losses += model.criterion(model(x), targets)
        optimizer.zero_grad()
        losses.backward()
        optimizer.step()


def train_deep_supervision(model, loader, optimizer, criterion):
    epoch_losses = []
    for images, masks in loader:
        outputs = model(images)
        loss = 0
        for out in outputs:
            loss = loss + criterion(out, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_losses.append(loss.item())
    return sum(epoch_losses) / len(epoch_losses)
