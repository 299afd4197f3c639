import torch


def train(model, loader, optimizer, scheduler, accum_steps=4, epochs=3):
    tr_loss, logging_loss = 0.0, 0.0
    global_step = 0
    for epoch in range(epochs):
        for step, batch in enumerate(loader):
            outputs = model(**batch)
            loss = outputs[0]
            loss = loss / accum_steps
            loss.backward()
            tr_loss += loss.item()
            if (step + 1) % accum_steps == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                scheduler.step()
                model.zero_grad()
                global_step += 1
                if global_step % 50 == 0:
                    print((tr_loss - logging_loss) / 50)
                    logging_loss = tr_loss
    return global_step, tr_loss / max(global_step, 1)
