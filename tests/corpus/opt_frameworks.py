"""Loops where a framework owns accumulation, zeroing and scaling: all silent."""
import torch
from accelerate import Accelerator


def train_accelerate(model, optimizer, train_dataloader, lr_scheduler, epochs):
    accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="fp16")
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler
    )
    for epoch in range(epochs):
        model.train()
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                accelerator.backward(loss)
                if accelerator.sync_gradients:
                    accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()


def train_deepspeed(model_engine, train_loader, epochs):
    for epoch in range(epochs):
        for step, batch in enumerate(train_loader):
            loss = model_engine(batch["input_ids"], labels=batch["labels"]).loss
            model_engine.backward(loss)
            model_engine.step()
            if step % 10 == 0:
                print(step, loss.item())
