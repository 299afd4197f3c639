"""AMP through wrappers (timm-style NativeScaler), a disabled scaler, and a GAN with one update."""
import torch
import torch.nn as nn
from timm.utils import NativeScaler


def train_one_epoch_timm(model, loader, optimizer, loss_scaler, criterion, clip_grad=None):
    model.train()
    for samples, targets in loader:
        samples, targets = samples.cuda(non_blocking=True), targets.cuda(non_blocking=True)
        with torch.autocast("cuda"):
            outputs = model(samples)
            loss = criterion(outputs, targets)
        optimizer.zero_grad()
        loss_scaler(loss, optimizer, clip_grad=clip_grad, parameters=model.parameters())
        torch.cuda.synchronize()


def train_gan_amp(netG, netD, loader, opt_g, opt_d, nz=128):
    scaler = torch.amp.GradScaler("cuda")
    criterion = nn.BCEWithLogitsLoss()
    for real, _ in loader:
        real = real.cuda()
        z = torch.randn(real.size(0), nz, device="cuda")
        opt_d.zero_grad(set_to_none=True)
        with torch.autocast("cuda"):
            fake = netG(z)
            d_loss = criterion(netD(real), torch.ones(real.size(0), 1, device="cuda")) + criterion(
                netD(fake.detach()), torch.zeros(real.size(0), 1, device="cuda")
            )
        scaler.scale(d_loss).backward()
        scaler.step(opt_d)
        opt_g.zero_grad(set_to_none=True)
        with torch.autocast("cuda"):
            g_loss = criterion(netD(fake), torch.ones(real.size(0), 1, device="cuda"))
        scaler.scale(g_loss).backward()
        scaler.step(opt_g)
        scaler.update()


def train_amp_off(model, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)


if __name__ == "__main__":
    loss_scaler = NativeScaler()
