import torch
import torch.nn as nn
from torchvision.utils import save_image

latent_dim = 100
adversarial_loss = nn.BCELoss()


def sample_images(generator, n_rows, batches_done):
    generator.eval()
    images = []
    for row in range(n_rows):  # expect: MEM201
        z = torch.randn(n_rows, latent_dim)
        images.append(generator(z))  # expect: MEM102
    save_image(torch.cat(images).data, "images/%d.png" % batches_done, nrow=n_rows, normalize=True)
    generator.train()


def train(generator, discriminator, dataloader, optimizer_G, optimizer_D, n_epochs):
    d_losses = []
    g_losses = []
    for epoch in range(n_epochs):
        for i, (imgs, _) in enumerate(dataloader):
            valid = torch.ones(imgs.size(0), 1)
            fake = torch.zeros(imgs.size(0), 1)
            optimizer_G.zero_grad()
            z = torch.randn(imgs.shape[0], latent_dim)
            gen_imgs = generator(z)
            g_loss = adversarial_loss(discriminator(gen_imgs), valid)
            g_loss.backward()
            optimizer_G.step()

            optimizer_D.zero_grad()
            real_loss = adversarial_loss(discriminator(imgs), valid)
            fake_loss = adversarial_loss(discriminator(gen_imgs.detach()), fake)
            d_loss = (real_loss + fake_loss) / 2
            d_loss.backward()
            optimizer_D.step()

            d_losses.append(d_loss)  # expect: MEM102
            g_losses += [g_loss]  # expect: MEM102
            batches_done = epoch * len(dataloader) + i
            if batches_done % 400 == 0:
                sample_images(generator, 10, batches_done)
    return d_losses, g_losses
