"""Grad-CAM heatmaps over a validation set: evaluation that needs gradients."""
import cv2
import numpy as np
import torch
import torch.nn.functional as F
from torchvision import models


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.gradients = None
        self.activations = None
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, inp, out):
        self.activations = out

    def save_gradient(self, module, grad_in, grad_out):
        self.gradients = grad_out[0]

    def __call__(self, x, class_idx=None):
        logits = self.model(x)
        if class_idx is None:
            class_idx = logits.argmax(dim=1)
        self.model.zero_grad()
        score = logits.gather(1, class_idx.view(-1, 1)).sum()
        score.backward()
        weights = self.gradients.mean(dim=(2, 3), keepdim=True)
        cam = F.relu((weights * self.activations).sum(dim=1))
        return cam.detach()


def evaluate_cams(model, val_loader, device):
    model.eval()
    cam = GradCAM(model, model.layer4[-1])
    heatmaps = []
    for images, labels in val_loader:
        images = images.to(device)
        logits = model(images)
        logits.max(1).values.sum().backward()
        heatmaps.append(cam(images, labels.to(device)).cpu().numpy())
    return np.concatenate(heatmaps)


if __name__ == "__main__":
    model = models.resnet50(weights="IMAGENET1K_V2").cuda()
    maps = evaluate_cams(model, val_loader, "cuda")
    for m in maps[:4]:
        cv2.imwrite("cam.png", (m * 255).astype("uint8"))
