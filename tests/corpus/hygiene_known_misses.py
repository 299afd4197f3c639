"""An epoch runner object, and a best checkpoint kept as a dict (``missed`` marks what the analysis does not see)."""
import torch


class EpochRunner:
    def __init__(self, model, loader, optimizer):
        self.model = model
        self.loader = loader
        self.optimizer = optimizer

    def run_epoch(self):
        for x, y in self.loader:
            self.optimizer.zero_grad()
            torch.nn.functional.cross_entropy(self.model(x), y).backward()
            self.optimizer.step()


def main(model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)
    runner = EpochRunner(model, loader, optimizer)
    best, best_ckpt = 0.0, None
    for epoch in range(epochs):
        scheduler.step()  # missed: MEM802
        runner.run_epoch()
        acc = evaluate(model)
        if acc > best:
            best = acc
            best_ckpt = {"epoch": epoch, "model": model.state_dict()}  # expect: MEM801
    torch.save(best_ckpt, "best.pt")


@torch.no_grad()
def evaluate(model):
    return 0.0
