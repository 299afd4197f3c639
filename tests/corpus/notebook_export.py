#!/usr/bin/env python
# coding: utf-8

# In[1]:


import torch
import torch.nn as nn
import matplotlib.pyplot as plt
from torch.utils.data import DataLoader, TensorDataset


# In[2]:


X = torch.randn(1000, 20)
y = (X.sum(1) > 0).long()
train_loader = DataLoader(TensorDataset(X[:800], y[:800]), batch_size=32, shuffle=True)
test_loader = DataLoader(TensorDataset(X[800:], y[800:]), batch_size=32)


# In[3]:


model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.2), nn.Linear(64, 2))
loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)


# In[4]:


losses = []
for epoch in range(20):
    for xb, yb in train_loader:
        pred = model(xb)
        loss = loss_fn(pred, yb)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss)  # expect: MEM102


# In[5]:


plt.plot([l.item() for l in losses])


# In[6]:


model.eval()
predictions = []
for xb, yb in test_loader:  # expect: MEM201
    out = model(xb)
    predictions.append(out)  # expect: MEM102
preds = torch.cat(predictions).argmax(1)
print((preds == y[800:]).float().mean())
