import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm


def dice_coeff(pred, target, eps=1e-6):
    pred = torch.sigmoid(pred) > 0.5
    inter = (pred & target.bool()).sum(dim=(1, 2, 3)).float()
    union = pred.sum(dim=(1, 2, 3)) + target.sum(dim=(1, 2, 3))
    return ((2 * inter + eps) / (union + eps)).mean()


@torch.inference_mode()
def evaluate(net, dataloader, device, amp):
    net.eval()
    num_val_batches = len(dataloader)
    dice_score = 0
    with torch.autocast(device.type if device.type != 'mps' else 'cpu', enabled=amp):
        for batch in tqdm(dataloader, total=num_val_batches, desc='Validation round', unit='batch', leave=False):
            image, mask_true = batch['image'], batch['mask']
            image = image.to(device=device, dtype=torch.float32)
            mask_true = mask_true.to(device=device, dtype=torch.long)
            mask_pred = net(image)
            dice_score += dice_coeff(mask_pred, mask_true)
    net.train()
    return dice_score / max(num_val_batches, 1)


def train_model(model, device, train_loader, val_loader, epochs=5, learning_rate=1e-5, amp=False):
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=1e-8, momentum=0.999)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'max', patience=5)
    grad_scaler = torch.amp.GradScaler("cuda", enabled=amp)
    criterion = nn.BCEWithLogitsLoss()
    global_step = 0
    for epoch in range(1, epochs + 1):
        model.train()
        epoch_loss = 0
        for batch in train_loader:
            images, true_masks = batch['image'], batch['mask']
            with torch.autocast(device.type, enabled=amp):
                masks_pred = model(images)
                loss = criterion(masks_pred.squeeze(1), true_masks.float())
                loss += 1 - dice_coeff(masks_pred, true_masks)
            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.step(optimizer)
            grad_scaler.update()
            global_step += 1
            epoch_loss += loss.item()
            if global_step % 100 == 0:
                val_score = evaluate(model, device=device, dataloader=val_loader, amp=amp)
                scheduler.step(val_score)
