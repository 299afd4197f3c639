import torch
import torch.nn as nn


class LSTMLM(nn.Module):
    def __init__(self, vocab, dim=256, layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, layers, batch_first=True)
        self.head = nn.Linear(dim, vocab)

    def forward(self, x, state):
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def train(model, batches, optimizer, vocab, epochs=5, batch_size=32):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        h = torch.zeros(2, batch_size, 256)
        c = torch.zeros(2, batch_size, 256)
        epoch_loss = 0.0
        for x, y in batches:
            optimizer.zero_grad()
            logits, (h, c) = model(x, (h, c))  # expect: MEM104
            loss = criterion(logits.view(-1, vocab), y.view(-1))
            loss.backward(retain_graph=True)
            optimizer.step()
            epoch_loss += loss.item()
        print(f"epoch {epoch}: {epoch_loss / len(batches):.3f}")
