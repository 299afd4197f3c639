"""Pure float16 training, and .half() used only for inference."""
import torch
import torch.nn as nn
import torchvision


def train_fp16(args, train_loader):
    model = torchvision.models.resnet18(num_classes=10)
    model = model.cuda().half()  # expect: MEM507
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(args.epochs):
        for inputs, targets in train_loader:
            inputs, targets = inputs.cuda().half(), targets.cuda()
            optimizer.zero_grad()
            loss = criterion(model(inputs), targets)
            loss.backward()
            optimizer.step()
    return model


def benchmark_inference(loader):
    model = torchvision.models.resnet50(weights="IMAGENET1K_V1").cuda().half().eval()
    with torch.inference_mode():
        for images, _ in loader:
            preds = model(images.cuda().half()).argmax(1)
            print(preds[:5])


def train_bf16(args, train_loader):
    model = torchvision.models.resnet18(num_classes=10).cuda().to(torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    for inputs, targets in train_loader:
        loss = nn.functional.cross_entropy(model(inputs.cuda().to(torch.bfloat16)), targets.cuda())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
