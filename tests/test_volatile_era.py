"""MEM201 and ``Variable(x, volatile=True)`` (analysis/autograd/volatile_era.py):
a loop that wraps its data so is grad-off only in code that runs on a torch
before 0.4, told by the project's pin or by a loss's ``.data[0]`` in the
same function; otherwise the flag is taken as ignored and the loop reported."""

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


def test_a_loss_indexed_with_data_0_marks_torch_before_0_4():
    loss = "F.cross_entropy(output, target, size_average=False)"
    assert _lines(TEST.format(flag="True", read=f"{loss}.data[0]")) == []
    assert _lines(TEST.format(flag="True", read=f"{loss}.item()")) == [8]


def test_a_name_bound_to_a_loss_counts_and_one_bound_elsewhere_does_not():
    source = TEST.replace("total += {read}", "loss = {read}\n        total += loss.data[0]")
    assert _lines(source.format(flag="True", read="F.nll_loss(output, target)")) == []
    assert _lines(source.format(flag="True", read="output.sum(1)")) == [8]


def test_unreduced_losses_and_other_tensors_do_not_count():
    unreduced = "F.cross_entropy(output, target, reduction='none').data[0]"
    assert _lines(TEST.format(flag="True", read=unreduced)) == [8]
    assert _lines(TEST.format(flag="True", read="output.cpu().data[0]")) == [8]


def test_volatile_false_or_absent_is_no_evidence():
    loss = "F.cross_entropy(output, target).data[0]"
    assert _lines(TEST.format(flag="False", read=loss)) == [8]


def test_a_project_pinned_before_0_4_needs_no_data_0():
    source = TEST.format(flag="True", read="output.sum()")
    assert _lines(source, range_of_requirement("torch==0.3.1", "requirements.txt:1")) == []
    assert _lines(source, range_of_requirement("torch<0.4", "requirements.txt:1")) == []
    assert _lines(source, range_of_requirement("torch>=0.3", "requirements.txt:1")) == [8]
    assert _lines(source) == [8]
