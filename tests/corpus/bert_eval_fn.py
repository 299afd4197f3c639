import numpy as np
import torch
from sklearn.metrics import f1_score


def evaluate(model, val_dataloader, device):
    model.eval()
    loss_val_total = 0
    predictions, true_vals = [], []
    for batch in val_dataloader:
        batch = tuple(b.to(device) for b in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[2]}
        with torch.no_grad():
            outputs = model(**inputs)
        loss = outputs[0]
        logits = outputs[1]
        loss_val_total += loss.item()
        logits = logits.detach().cpu().numpy()
        label_ids = inputs["labels"].cpu().numpy()
        predictions.append(logits)
        true_vals.append(label_ids)
    loss_val_avg = loss_val_total / len(val_dataloader)
    predictions = np.concatenate(predictions, axis=0)
    true_vals = np.concatenate(true_vals, axis=0)
    return loss_val_avg, predictions, true_vals


def f1_score_func(preds, labels):
    preds_flat = np.argmax(preds, axis=1).flatten()
    return f1_score(labels.flatten(), preds_flat, average="weighted")
