import numpy as np
import torch
import torch.nn as nn


class LSTMForecaster(nn.Module):
    def __init__(self, n_features, hidden=64, layers=2):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, layers, batch_first=True, dropout=0.2)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


model = LSTMForecaster(8)
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_hist = np.zeros(100)
for t in range(100):
    y_pred = model(X_train)
    loss = criterion(y_pred.float(), y_train)
    train_hist[t] = loss.item()
    if t % 10 == 0:
        with torch.no_grad():
            y_val = model(X_val)
            val_loss = criterion(y_val.float(), y_val_true)
        print(f"Epoch {t} train loss: {loss.item()} val loss: {val_loss.item()}")
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    preds = []
    test_seq = X_test[:1]
    for _ in range(len(X_test)):  # expect: MEM202
        y_test_pred = model(test_seq)
        pred = torch.flatten(y_test_pred).item()
        preds.append(pred)
        new_seq = test_seq.numpy().flatten()
        new_seq = np.append(new_seq, [pred])
        new_seq = new_seq[1:]
        test_seq = torch.as_tensor(new_seq).view(1, -1, 1).float()
