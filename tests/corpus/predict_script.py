"""Batch inference over a folder of images."""
import sys

import pandas as pd
import timm
import torch
from torch.utils.data import DataLoader

model = timm.create_model("efficientnet_b0", num_classes=5)
model.load_state_dict(torch.load(sys.argv[1], map_location="cpu"))
model.eval()
loader = DataLoader(ImageFolderDataset(sys.argv[2]), batch_size=64, num_workers=4)

probabilities = []
names = []
for images, paths in loader:  # expect: MEM201
    logits = model(images)
    probabilities.append(logits.softmax(dim=1))  # expect: MEM102
    names.extend(paths)

probs = torch.cat(probabilities).numpy()
pd.DataFrame(probs, index=names).to_csv("submission.csv")
