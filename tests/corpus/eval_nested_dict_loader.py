import torch


def evaluate_all(model, dataloaders, device):
    model.eval()
    results = {}
    with torch.no_grad():
        for split in ["valid", "test"]:
            logits_all = []
            for batch in dataloaders[split]:
                batch = [t.to(device) for t in batch]
                logits = model(batch[0])
                logits_all.append(logits)
            results[split] = torch.cat(logits_all)
    return results
