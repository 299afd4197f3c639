import torch
import torch.nn as nn
from torch.autograd import Variable


class CharRNN(nn.Module):
    def __init__(self, n_chars, n_hidden=256, n_layers=2):
        super().__init__()
        self.n_layers, self.n_hidden = n_layers, n_hidden
        self.lstm = nn.LSTM(n_chars, n_hidden, n_layers, dropout=0.5, batch_first=True)
        self.fc = nn.Linear(n_hidden, n_chars)

    def forward(self, x, hc):
        x, (h, c) = self.lstm(x, hc)
        return self.fc(x.contiguous().view(-1, self.n_hidden)), (h, c)

    def init_hidden(self, n_seqs):
        weight = next(self.parameters()).data
        return (Variable(weight.new(self.n_layers, n_seqs, self.n_hidden).zero_()),
                Variable(weight.new(self.n_layers, n_seqs, self.n_hidden).zero_()))


def train(net, data, epochs=10, n_seqs=10, n_steps=50, lr=0.001, clip=5):
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    criterion = nn.CrossEntropyLoss()
    counter = 0
    for e in range(epochs):
        h = net.init_hidden(n_seqs)
        for x, y in get_batches(data, n_seqs, n_steps):
            counter += 1
            inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
            h = tuple([each.data for each in h])
            net.zero_grad()
            output, h = net.forward(inputs, h)
            loss = criterion(output, targets.view(n_seqs * n_steps))
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), clip)
            opt.step()
            if counter % 10 == 0:
                val_h = net.init_hidden(n_seqs)
                val_losses = []
                for x, y in get_batches(val_data, n_seqs, n_steps):  # expect: MEM201
                    inputs, targets = torch.from_numpy(x), torch.from_numpy(y)
                    val_h = tuple([each.data for each in val_h])
                    output, val_h = net.forward(inputs, val_h)
                    val_loss = criterion(output, targets.view(n_seqs * n_steps))
                    val_losses.append(val_loss.item())
                print("Epoch: {}/{}...".format(e + 1, epochs), "Loss: {:.4f}...".format(loss.item()))
