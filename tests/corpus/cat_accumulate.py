import numpy as np
import torch


def get_predictions(model, loader, device):
    model.eval()
    all_preds = torch.tensor([], device=device)
    all_labels = torch.tensor([], device=device)
    for images, labels in loader:  # expect: MEM201
        images, labels = images.to(device), labels.to(device)
        preds = model(images)
        all_preds = torch.cat((all_preds, preds), dim=0)  # expect: MEM102
        all_labels = torch.cat((all_labels, labels), dim=0)
    return all_preds, all_labels


@torch.no_grad()
def get_all_preds(model, loader):
    all_preds = torch.tensor([])
    for batch in loader:
        images, labels = batch
        preds = model(images)
        all_preds = torch.cat((all_preds, preds), dim=0)
    return all_preds
