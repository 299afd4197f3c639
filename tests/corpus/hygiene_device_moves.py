"""Device moves inside training and evaluation loops."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(model, train_loader, optimizer, criterion, epochs):
    for epoch in range(epochs):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            model.to(device)  # expect: MEM703
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = criterion(output, target)
            loss.backward()
            optimizer.step()


def evaluate(model, test_loader, criterion):
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in test_loader:
            criterion = criterion.cuda()  # expect: MEM703
            std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1).cuda()  # expect: MEM703
            outputs = model(images.cuda() / std)
            correct += (outputs.argmax(1) == labels.cuda()).sum().item()
    return correct


def run_experiments(configs, dataset):
    results = {}
    for name, cfg in configs.items():
        model = build_model(cfg)
        model.to(device)
        loader = DataLoader(dataset, batch_size=cfg["batch_size"])
        optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
        results[name] = loss.item()
    return results


def ensemble_predict(models, loader):
    preds = []
    for model in models:
        model.to(device)
        model.eval()
        with torch.no_grad():
            preds.append(torch.cat([model(x.to(device)).cpu() for x, _ in loader]))
    return torch.stack(preds).mean(0)


def offload_teacher(student, teacher, loader, optimizer):
    for x, y in loader:
        teacher.to(device)
        with torch.no_grad():
            soft = teacher(x.to(device)).softmax(-1)
        teacher.cpu()
        loss = nn.functional.kl_div(student(x.to(device)).log_softmax(-1), soft, reduction="batchmean")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def train_tuple_moves(model, train_loader, optimizer, criterion):
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target, model = data.to(device), target.to(device), model.to(device)  # expect: MEM703
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()


def train_with_fallback(model, train_loader, optimizer, criterion):
    for data, target in train_loader:
        try:
            data, target = data.to(device), target.to(device)
        except RuntimeError:
            data, target = data.cpu(), target.cpu()
            model.cpu()
        optimizer.zero_grad()
        loss = criterion(model(data), target)
        loss.backward()
        optimizer.step()


def build_model(cfg):
    return nn.Linear(cfg["in"], cfg["out"])
