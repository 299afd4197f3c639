import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3)
        self.fc = nn.Linear(16 * 26 * 26, 10)

    def forward(self, x):
        x = F.relu(self.conv(x))
        return self.fc(x.flatten(1))


def train_epoch(model, loader, optimizer, device):
    model.train()
    running_loss = 0.0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        loss.backward()
        optimizer.step()
        running_loss += loss.item() * images.size(0)
    return running_loss / len(loader.dataset)


def test(model, loader, device):
    model.eval()
    test_loss = 0
    correct = 0
    for images, labels in loader:  # expect: MEM201
        images, labels = images.to(device), labels.to(device)
        output = model(images)
        test_loss += F.cross_entropy(output, labels, reduction="sum")  # expect: MEM101
        correct += (output.argmax(1) == labels).sum().item()
    test_loss /= len(loader.dataset)
    print(f"test loss {test_loss:.4f} acc {correct / len(loader.dataset):.3f}")
    return correct


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=256)
    for epoch in range(5):
        loss = train_epoch(model, train_loader, optimizer, device)
        acc = test(model, test_loader, device)
        print(epoch, loss, acc)
