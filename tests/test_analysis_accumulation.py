"""analysis/training/accumulation.py: which steps accumulate gradients over N iterations."""

from analysis_helpers import facts_of

from memlint.analysis.training.accumulation import accumulating_steps


def accumulating(src: str) -> list[tuple[str, str]]:
    """(optimizer, N) for every accumulating step of every loop."""
    facts = facts_of(src)
    verbs = facts.verbs
    loops = {id(v.loop): v.loop for v in verbs.verbs if v.loop is not None}
    code = facts.module.code_for_node
    return [(step.target, code(n)) for loop in loops.values() for step, _, n, _ in accumulating_steps(verbs, loop)]


def test_step_every_n_iterations():
    src = """
    import torch
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accum
        loss.backward()
        if (i + 1) % accum == 0:
            opt.step()
            opt.zero_grad()
    """
    assert accumulating(src) == [("opt", "accum")]


def test_guard_through_a_flag():
    src = """
    import torch
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for i, (x, y) in enumerate(loader):
        sync = (i + 1) % 4 == 0
        model(x, y).backward()
        if sync:
            opt.step()
    """
    assert accumulating(src) == [("opt", "4")]


def test_not_accumulation():
    src = """
    import torch
    opt_d = torch.optim.Adam(netD.parameters())
    opt_g = torch.optim.Adam(netG.parameters())
    inner = torch.optim.AdamW(model.parameters())
    outer = torch.optim.SGD(model.parameters())
    for i, x in enumerate(loader):
        opt_d.zero_grad()
        netD(x).mean().backward()
        opt_d.step()
        if i % n_critic == 0:
            opt_g.zero_grad()
            netD(netG(z)).mean().backward()
            opt_g.step()
    for i, (x, y) in enumerate(loader):
        with accelerator.accumulate(model):
            accelerator.backward(model(x, y))
            if (i + 1) % 4 == 0:
                opt_d.step()
    for i, (x, y) in enumerate(loader):
        inner.zero_grad()
        model(x, y).backward()
        inner.step()
        if (i + 1) % 100 == 0:
            outer.step()
    """
    assert accumulating(src) == []
