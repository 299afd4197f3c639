import torch


def validate(model, val_loader, criterion, device):
    model.eval()
    total, correct, loss_total = 0, 0, 0.0
    with torch.cuda.amp.autocast():
        for images, target in val_loader:  # expect: MEM201
            images = images.to(device, non_blocking=True)
            target = target.to(device, non_blocking=True)
            output = model(images)
            loss_total += criterion(output, target).item() * images.size(0)
            correct += (output.argmax(-1) == target).sum().item()
            total += images.size(0)
    return loss_total / total, correct / total


def predict_one(model, image):  # expect: MEM201
    model.eval()
    return model(image.unsqueeze(0)).softmax(-1)
