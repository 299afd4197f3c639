import segmentation_models_pytorch as smp
import torch
from tqdm.auto import tqdm

model = smp.Unet("resnet34", encoder_weights="imagenet", classes=1)
loss_fn = smp.losses.DiceLoss(mode="binary")
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
device = "cuda"
model.to(device)


def train_epoch(loader):
    model.train()
    running = []
    pbar = tqdm(loader)
    for images, masks in pbar:
        images, masks = images.to(device), masks.to(device)
        logits = model(images)
        loss = loss_fn(logits, masks)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running.append(loss.item())
        pbar.set_postfix(loss=sum(running[-50:]) / len(running[-50:]))
    return sum(running) / len(running)


def valid_epoch(loader):
    model.eval()
    losses = []
    ious = []
    for images, masks in loader:  # expect: MEM201
        images, masks = images.to(device), masks.to(device)
        logits = model(images)
        losses.append(loss_fn(logits, masks))  # expect: MEM102
        preds = (logits.sigmoid() > 0.5).float()
        inter = (preds * masks).sum()
        union = preds.sum() + masks.sum() - inter
        ious.append((inter / (union + 1e-7)).item())
    return torch.stack(losses).mean().item(), sum(ious) / len(ious)


for epoch in range(25):
    tl = train_epoch(train_loader)
    vl, viou = valid_epoch(valid_loader)
    print(epoch, tl, vl, viou)
