import torch
from sklearn.metrics import roc_auc_score


def train_one_epoch(model, loader, optimizer, criterion, device):
    model.train()
    epoch_outputs, epoch_targets = [], []
    for batch in loader:
        x, y = batch["image"].to(device), batch["target"].to(device)
        outputs = model(x)
        loss = criterion(outputs, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_outputs.append(outputs)  # expect: MEM102
        epoch_targets.append(y)
    probs = torch.cat(epoch_outputs).sigmoid().detach().cpu().numpy()
    return roc_auc_score(torch.cat(epoch_targets).cpu().numpy(), probs)


def valid_one_epoch(model, loader, criterion, device):
    model.eval()
    torch.set_grad_enabled(False)
    val_loss = 0
    outs = []
    for batch in loader:
        x, y = batch["image"].to(device), batch["target"].to(device)
        outputs = model(x)
        val_loss = val_loss + criterion(outputs, y)
        outs.append(outputs)
    torch.set_grad_enabled(True)
    return val_loss / len(loader), torch.cat(outs)
