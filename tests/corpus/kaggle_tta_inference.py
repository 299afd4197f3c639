import numpy as np
import pandas as pd
import torch
from tqdm import tqdm

models = []
for fold in range(5):
    m = build_model()
    m.load_state_dict(torch.load(f"fold{fold}.pth"))
    m.eval()
    models.append(m.cuda())

predictions = []
with torch.no_grad():
    for i, (images, _) in enumerate(tqdm(test_loader)):
        images = images.cuda()
        preds = torch.zeros(images.size(0), 5, device="cuda")
        for m in models:
            for flip in (None, [-1], [-2]):
                x = images if flip is None else torch.flip(images, flip)
                preds += m(x).softmax(1)
        predictions.append(preds.cpu().numpy() / (len(models) * 3))
sub = pd.DataFrame(np.concatenate(predictions))
sub.to_csv("submission.csv", index=False)
