import torch
import torch.nn as nn
import torch.nn.functional as F


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2]), dim=1)
    sim = z @ z.t() / temperature
    n = z1.size(0)
    sim.fill_diagonal_(float("-inf"))
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)]).to(z.device)
    return F.cross_entropy(sim, targets)


def train(net, data_loader, train_optimizer, epoch, epochs):
    net.train()
    total_loss, total_num = 0.0, 0
    for (pos_1, pos_2), target in data_loader:
        pos_1, pos_2 = pos_1.cuda(non_blocking=True), pos_2.cuda(non_blocking=True)
        feature_1, out_1 = net(pos_1)
        feature_2, out_2 = net(pos_2)
        loss = nt_xent(out_1, out_2)
        train_optimizer.zero_grad()
        loss.backward()
        train_optimizer.step()
        total_num += data_loader.batch_size
        total_loss += loss.item() * data_loader.batch_size
    return total_loss / total_num


def test(net, memory_data_loader, test_data_loader, k=200):
    net.eval()
    total_top1, total_num, feature_bank = 0.0, 0, []
    with torch.no_grad():
        for data, target in memory_data_loader:
            feature, out = net(data.cuda(non_blocking=True))
            feature_bank.append(feature)
        feature_bank = torch.cat(feature_bank, dim=0).t().contiguous()
        feature_labels = torch.tensor(memory_data_loader.dataset.targets, device=feature_bank.device)
        for data, target in test_data_loader:
            data, target = data.cuda(non_blocking=True), target.cuda(non_blocking=True)
            feature, out = net(data)
            total_num += data.size(0)
            sim_matrix = torch.mm(feature, feature_bank)
            sim_weight, sim_indices = sim_matrix.topk(k=k, dim=-1)
            sim_labels = torch.gather(feature_labels.expand(data.size(0), -1), dim=-1, index=sim_indices)
            pred_labels = sim_labels[:, 0]
            total_top1 += (pred_labels == target).float().sum().item()
    return total_top1 / total_num * 100
