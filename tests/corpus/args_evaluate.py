import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--evaluate", action="store_true")
args = parser.parse_args()

model = build(args).cuda()
if args.evaluate:
    model.load_state_dict(torch.load(args.ckpt)["state_dict"])
    model.eval()
    top1 = 0
    for images, target in val_loader:  # expect: MEM201
        output = model(images.cuda())
        top1 += (output.argmax(1) == target.cuda()).sum().item()
    print("top1", top1 / len(val_loader.dataset))
else:
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    for epoch in range(90):
        model.train()
        for images, target in train_loader:
            loss = F.cross_entropy(model(images.cuda()), target.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
