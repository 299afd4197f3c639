import torch
import torch.nn.functional as F


def p_losses(denoise_model, x_start, t, noise):
    x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
    predicted_noise = denoise_model(x_noisy, t)
    return F.smooth_l1_loss(noise, predicted_noise)


@torch.no_grad()
def p_sample(model, x, t, t_index):
    betas_t = extract(betas, t, x.shape)
    model_mean = sqrt_recip_alphas_t * (x - betas_t * model(x, t) / sqrt_one_minus_alphas_cumprod_t)
    if t_index == 0:
        return model_mean
    return model_mean + torch.sqrt(posterior_variance_t) * torch.randn_like(x)


@torch.no_grad()
def p_sample_loop(model, shape, timesteps):
    img = torch.randn(shape)
    imgs = []
    for i in reversed(range(0, timesteps)):
        img = p_sample(model, img, torch.full((shape[0],), i, dtype=torch.long), i)
        imgs.append(img.cpu().numpy())
    return imgs


optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(6):
    for step, batch in enumerate(dataloader):
        optimizer.zero_grad()
        batch_size = batch["pixel_values"].shape[0]
        t = torch.randint(0, 300, (batch_size,)).long()
        loss = p_losses(model, batch["pixel_values"], t, torch.randn_like(batch["pixel_values"]))
        if step % 100 == 0:
            print("Loss:", loss.item())
        loss.backward()
        optimizer.step()
