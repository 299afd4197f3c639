"""Fine-tuning in the style of the 2017 transfer-learning tutorial (phases, StepLR, best weights)."""
import time

import torch
import torch.nn as nn
import torch.optim as optim
import torchvision
from torch.optim import lr_scheduler


def train_model(model, criterion, optimizer, scheduler, dataloaders, dataset_sizes, num_epochs=25):
    since = time.time()
    best_model_wts = model.state_dict()
    best_acc = 0.0
    for epoch in range(num_epochs):
        print(f"Epoch {epoch}/{num_epochs - 1}")
        for phase in ["train", "val"]:
            if phase == "train":
                scheduler.step()  # expect: MEM802
                model.train(True)
            else:
                model.train(False)
            running_loss = 0.0
            running_corrects = 0
            for inputs, labels in dataloaders[phase]:
                mean = torch.FloatTensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1).cuda()  # expect: MEM703
                inputs = (inputs.cuda() - mean)
                labels = labels.cuda()
                optimizer.zero_grad()
                outputs = model(inputs)
                _, preds = torch.max(outputs.data, 1)
                loss = criterion(outputs, labels)
                if phase == "train":
                    loss.backward()
                    optimizer.step()
                running_loss += loss.item() * inputs.size(0)
                running_corrects += torch.sum(preds == labels.data).item()
            epoch_acc = running_corrects / dataset_sizes[phase]
            if phase == "val" and epoch_acc > best_acc:
                best_acc = epoch_acc
                best_model_wts = model.state_dict()  # expect: MEM801
    print(f"Training complete in {time.time() - since:.0f}s, best val acc {best_acc:4f}")
    model.load_state_dict(best_model_wts)
    return model


def main(dataloaders, dataset_sizes):
    model_ft = torchvision.models.resnet18(weights="IMAGENET1K_V1")
    model_ft.fc = nn.Linear(model_ft.fc.in_features, 2)
    model_ft = model_ft.cuda()
    criterion = nn.CrossEntropyLoss()
    optimizer_ft = optim.SGD(model_ft.parameters(), lr=0.001, momentum=0.9)
    exp_lr_scheduler = lr_scheduler.StepLR(optimizer_ft, step_size=7, gamma=0.1)
    return train_model(model_ft, criterion, optimizer_ft, exp_lr_scheduler, dataloaders, dataset_sizes)
