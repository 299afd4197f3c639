import torch
import torch.nn as nn


def generate(model, start_tokens, length, temperature=0.8):
    model.eval()
    hidden = model.init_hidden(1)
    inp = start_tokens
    out_tokens = []
    for _ in range(length):  # expect: MEM201
        logits, hidden = model(inp, hidden)
        probs = (logits[-1] / temperature).softmax(-1)
        nxt = torch.multinomial(probs, 1)
        out_tokens.append(nxt.item())
        inp = nxt.view(1, 1)
    return out_tokens


def train(model, batches, opt, epochs):
    crit = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for x, y in batches:
            hidden = model.init_hidden(x.size(0))
            logits, _ = model(x, hidden)
            loss = crit(logits.view(-1, logits.size(-1)), y.view(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(generate(model, torch.tensor([[0]]), 50))
