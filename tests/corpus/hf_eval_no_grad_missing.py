import numpy as np
import torch
from tqdm import tqdm
from transformers import BertForSequenceClassification

model = BertForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=3)
model.cuda()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5)

for epoch in range(4):
    model.train()
    total_train_loss = 0
    for step, batch in enumerate(train_dataloader):
        b_input_ids, b_input_mask, b_labels = (t.cuda() for t in batch)
        model.zero_grad()
        result = model(b_input_ids, attention_mask=b_input_mask, labels=b_labels, return_dict=True)
        loss = result.loss
        total_train_loss += loss.item()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    model.eval()
    eval_loss = 0
    predictions, true_labels = [], []
    for batch in tqdm(validation_dataloader, desc="Evaluating"):  # expect: MEM201
        b_input_ids, b_input_mask, b_labels = (t.cuda() for t in batch)
        outputs = model(input_ids=b_input_ids, attention_mask=b_input_mask, labels=b_labels)
        eval_loss += outputs.loss.item()
        logits = outputs.logits.detach().cpu().numpy()
        predictions.append(logits)
        true_labels.append(b_labels.to("cpu").numpy())
    flat_predictions = np.argmax(np.concatenate(predictions, axis=0), axis=1)
    print("val loss", eval_loss / len(validation_dataloader))
