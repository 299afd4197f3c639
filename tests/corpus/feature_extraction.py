import numpy as np
import torch
import torchvision


def extract_features(backbone, loader, device="cuda"):
    backbone.eval()
    feats, labels = [], []
    for x, y in loader:  # expect: MEM201
        f = backbone(x.to(device))
        feats.append(f.cpu())  # expect: MEM102
        labels.append(y)
    return torch.cat(feats), torch.cat(labels)


backbone = torchvision.models.resnet50(weights="DEFAULT")
backbone.fc = torch.nn.Identity()
backbone = backbone.cuda()
train_feats, train_labels = extract_features(backbone, train_loader)
