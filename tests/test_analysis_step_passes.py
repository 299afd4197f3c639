"""step_passes.in_every_step: inner loops that are part of every training step."""

from analysis_helpers import facts_of

from memlint.analysis.training.step_passes import in_every_step


def _inner_loops(src: str):
    facts = facts_of(src)
    loops = facts.loops
    return loops, [info for info in loops.all if info.parent is not None]


def test_monte_carlo_passes_before_the_iterations_backward():
    src = """
    import torch
    for x in loader:
        preds = []
        for i in range(8):
            with torch.no_grad():
                preds.append(teacher(x + torch.randn_like(x)))
        loss = (student(x) - torch.stack(preds).mean(0)).pow(2).mean()
        loss.backward()
        optimizer.step()
    """
    loops, (inner,) = _inner_loops(src)
    assert in_every_step(inner, loops)


def test_not_under_a_branch_after_the_backward_or_over_data():
    src = """
    import torch
    for i, x in enumerate(loader):
        if i % 100 == 0:
            with torch.no_grad():
                for k in range(4):
                    teacher(x)
        student(x).mean().backward()
    for x in loader:
        student(x).mean().backward()
        with torch.no_grad():
            for k in range(4):
                teacher(x)
    for x in loader:
        with torch.no_grad():
            for v in val_loader:
                teacher(v)
        student(x).mean().backward()
    """
    loops, inner = _inner_loops(src)
    assert len(inner) == 3
    assert not any(in_every_step(info, loops) for info in inner)


def test_the_backward_of_a_nested_loop_is_not_the_iterations():
    src = """
    import torch
    for epoch in range(3):
        with torch.no_grad():
            for k in range(4):
                model(fixed)
        for x in loader:
            model(x).mean().backward()
    """
    loops, inner = _inner_loops(src)
    first = min(inner, key=lambda info: info.start)
    assert not in_every_step(first, loops)
