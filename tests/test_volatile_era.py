"""MEM201 and ``Variable(x, volatile=True)`` (analysis/autograd/volatile_era.py):
a loop that wraps its data so is grad-off where the project accepts no torch
from 0.4 on; otherwise the flag is taken as ignored and the loop reported,
``<loss>.data[0]`` in the function or not (the batches label that shape both
ways, see the module's docstring)."""

import textwrap

from memlint.find.torch_floor import range_of_requirement
from memlint.lint.engine import lint
from memlint.rule.registry import rule_by_code

TEST = textwrap.dedent(
    """\
    import torch
    import torch.nn.functional as F
    from torch.autograd import Variable

    def test(model, loader):
        model.eval()
        total = 0
        for data, target in loader:
            output = model(Variable(data, volatile={flag}))
            total += {read}
        return total
    """
)


def _lines(source, torch=None):
    return [f.line for f in lint(source, "train.py", [rule_by_code("MEM201")], torch=torch)[0]]


def _range(spec):
    return range_of_requirement(spec, "requirements.txt:1")


def test_a_project_pinned_or_capped_before_0_4_evaluates_without_a_graph():
    source = TEST.format(flag="True", read="output.sum()")
    assert _lines(source, _range("torch==0.3.1")) == []
    assert _lines(source, _range("torch<0.4")) == []


def test_a_project_that_may_run_a_current_torch_is_reported():
    source = TEST.format(flag="True", read="output.sum()")
    assert _lines(source, _range("torch>=0.3")) == [8]
    assert _lines(source, _range("torch==0.4.1")) == [8]
    assert _lines(source) == [8]


def test_without_volatile_true_the_pin_says_nothing():
    for flag in ("False", "flag"):
        assert _lines(TEST.format(flag=flag, read="output.sum()"), _range("torch==0.3.1")) == [8], flag


def test_a_loss_s_data_0_alone_is_not_read_as_the_era():
    loss = "F.cross_entropy(output, target, size_average=False)"
    assert _lines(TEST.format(flag="True", read=f"{loss}.data[0]")) == [8]
    assert _lines(TEST.format(flag="True", read=f"{loss}.item()")) == [8]
