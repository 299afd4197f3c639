"""facts.history: which values carry autograd history, statement by statement."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.history import H


def h(src: str, text: str, index: int = 0, kind=cst.BaseExpression):
    """History state of the ``index``-th expression spelled ``text``."""
    facts = facts_of(src)
    v = facts.history.value(find(facts.module, text, kind, index))
    return v.h if v is not None else None


TRAIN = """
import torch
import torch.nn as nn
import torch.nn.functional as F
model = nn.Linear(2, 2)
criterion = nn.CrossEntropyLoss()
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    as_number = loss.item()
    detached = loss.detach()
    pred = out.argmax(1)
    correct = (pred == y).sum()
    scaled = loss * x.size(0)
    probs = F.softmax(out, dim=1)
    first = out[0]
    use(as_number, detached, pred, correct, scaled, probs, first, x)
"""


@pytest.mark.parametrize(
    "name, expected",
    [
        ("out", H.YES),
        ("loss", H.YES),
        ("as_number", H.NO),
        ("detached", H.NO),
        ("pred", H.NO),
        ("correct", H.NO),
        ("scaled", H.YES),
        ("probs", H.YES),
        ("first", H.YES),
        ("x", H.NO),
    ],
)
def test_sources_and_cuts(name, expected):
    facts = facts_of(TRAIN)
    call = find(facts.module, "use(as_number, detached, pred, correct, scaled, probs, first, x)", cst.Call)
    arg = next(a.value for a in call.args if a.value.value == name) if name not in ("out", "loss") else None
    if arg is None:
        arg = find(facts.module, name, cst.Name, 1)
    assert facts.history.value(arg).h is expected


def test_rebinding_is_flow_sensitive():
    src = """
    import torch
    for x, y in loader:
        loss = criterion(model(x), y)
        a = loss
        loss = loss.item()
        b = loss
    """
    facts = facts_of(src)
    first_read = find(facts.module, "loss", cst.Name, 1)  # in ``a = loss``
    last_read = find(facts.module, "loss", cst.Name, 4)  # in ``b = loss``
    assert facts.history.value(first_read).h is H.YES
    assert facts.history.value(last_read).h is H.NO


def test_tuple_unpacking_of_model_and_torch_max():
    src = """
    import torch
    for x, y in loader:
        out, hidden = rnn(x, hidden)
        _, preds = torch.max(out, 1)
        values, idx = out.topk(3)
        use(out, hidden, preds, values, idx)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(out, hidden, preds, values, idx)", cst.Call)
    got = [facts.history.value(a.value).h for a in call.args]
    assert got == [H.YES, H.YES, H.NO, H.YES, H.NO]


def test_attribute_outputs_hf_style():
    src = """
    import torch
    from transformers import AutoModelForSequenceClassification
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased")
    for batch in loader:
        outputs = model(**batch)
        use(outputs.loss, outputs.logits, outputs.loss.item(), outputs.logits.shape)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(outputs.loss, outputs.logits, outputs.loss.item(), outputs.logits.shape)", cst.Call)
    got = [facts.history.value(a.value) for a in call.args]
    assert [v.h for v in got] == [H.YES, H.YES, H.NO, H.NO]
    assert got[0].scalar


def test_values_returned_from_module_functions():
    src = """
    import torch
    import torch.nn.functional as F
    def compute_loss(model, x, y):
        return F.cross_entropy(model(x), y)
    def compute_both(model, x, y):
        out = model(x)
        return F.cross_entropy(out, y), out.argmax(1)
    def accuracy(out, y):
        return (out.argmax(1) == y).float().mean()
    def log_value(t):
        return t.item()
    for x, y in loader:
        a = compute_loss(model, x, y)
        b, c = compute_both(model, x, y)
        d = accuracy(model(x), y)
        e = log_value(a)
        use(a, b, c, d, e)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(a, b, c, d, e)", cst.Call)
    assert [facts.history.value(x.value).h for x in call.args] == [H.YES, H.YES, H.NO, H.NO, H.NO]


def test_passthrough_function_uses_the_callers_argument():
    src = """
    import torch
    def scale(t, k):
        return t * k
    for x, y in loader:
        loss = criterion(model(x), y)
        use(scale(loss, 2), scale(x, 2))
    """
    facts = facts_of(src)
    call = find(facts.module, "use(scale(loss, 2), scale(x, 2))", cst.Call)
    assert [facts.history.value(a.value).h for a in call.args] == [H.YES, H.NO]


def test_no_grad_block_and_decorated_function_give_no_history():
    src = """
    import torch
    with torch.no_grad():
        a = model(x)
    @torch.no_grad()
    def f(x):
        return model(x)
    b = f(x)
    c = model(x)
    use(a, b, c)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(a, b, c)", cst.Call)
    assert [facts.history.value(x.value).h for x in call.args] == [H.NO, H.NO, H.YES]


def test_container_append_and_loop_carried_values():
    src = """
    import torch
    outs = []
    hidden = None
    for x in loader:
        fed = hidden
        outs.append(model(x))
        stacked = torch.cat(outs)
        out, hidden = model(x, hidden)
    after = torch.cat(outs)
    """
    facts = facts_of(src)
    assert facts.history.value(find(facts.module, "torch.cat(outs)", cst.Call)).h is H.YES
    # Around the loop: None on the first pass, a model output on the next ones.
    assert facts.history.value(find(facts.module, "hidden", cst.Name, 1)).h is H.MAYBE
    # After the loop: the list started empty, so whatever it holds came from
    # iterations that ran (a loop that never ran leaves nothing to carry).
    assert facts.history.value(find(facts.module, "torch.cat(outs)", cst.Call, 1)).h is H.YES


def test_unknown_calls_are_maybe():
    src = """
    import torch
    for x in loader:
        v = mystery(model(x))
        use(v)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(v)", cst.Call)
    assert facts.history.value(call.args[0].value).h is H.MAYBE


def test_reduction_none_is_not_scalar():
    src = """
    import torch.nn as nn
    crit = nn.CrossEntropyLoss(reduction="none")
    mean = nn.CrossEntropyLoss()
    for x, y in loader:
        a = crit(model(x), y)
        b = mean(model(x), y)
        use(a, b)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(a, b)", cst.Call)
    a, b = (facts.history.value(x.value) for x in call.args)
    assert a.h is H.YES and not a.scalar
    assert b.h is H.YES and b.scalar


def test_history_terms_skip_the_accumulator():
    src = """
    import torch
    for x, y in loader:
        loss = criterion(model(x), y)
        avg = 0.9 * avg + 0.1 * loss * x.size(0)
    """
    facts = facts_of(src)
    value = find(facts.module, "0.9 * avg + 0.1 * loss * x.size(0)", cst.BinaryOperation)
    terms = facts.history.history_terms(value, exclude="avg")
    assert [facts.module.code_for_node(t) for t in terms] == ["loss"]


def test_a_name_bound_only_in_a_loop_keeps_the_loop_value_after_it():
    src = """
import torch.nn as nn
model = nn.Linear(2, 2)
for epoch in range(3):
    for x, y in loader:
        loss = model(x).sum()
    keep(loss)
"""
    assert h(src, "loss", index=1) is H.YES


def test_a_number_accumulator_carries_history_after_the_loop():
    src = """
import torch.nn as nn
model = nn.Linear(2, 2)
total = 0.0
for x in loader:
    total += model(x).sum()
keep(total)
maybe = 0.0 if flag else model(x).sum()
keep(maybe)
"""
    assert h(src, "total", index=2) is H.YES
    assert h(src, "maybe", index=1) is H.MAYBE  # a branch is not a loop


def test_functional_call_runs_the_model():
    src = """
import torch.nn as nn
from torch.func import functional_call
model = nn.Linear(2, 2)
out = functional_call(model, params, (x,))
"""
    assert h(src, "functional_call(model, params, (x,))") is H.YES


def test_plain_number_settings_and_frozen_models_carry_no_history():
    src = """
import torch
import torch.nn as nn
class Blur(nn.Module):
    def __init__(self, size=11, sigma=1.5):
        super().__init__()
        self.size, self.sigma = size, sigma
    def forward(self, img):
        coords = torch.arange(self.size) - self.size // 2
        return torch.exp(-(coords ** 2) / (2 * self.sigma ** 2))
def probe(model, x):
    model.requires_grad_(False)
    return model(x)
"""
    assert h(src, "torch.exp(-(coords ** 2) / (2 * self.sigma ** 2))") is H.NO
    assert h(src, "model(x)") is not H.YES


def test_a_distribution_over_outputs_with_history_has_history():
    src = """
import torch
import torch.nn as nn
from torch.distributions import Categorical
policy = nn.Linear(4, 2)
dist = Categorical(logits=policy(x))
e = dist.entropy()
fixed = Categorical(probs=torch.ones(2) / 2).entropy()
"""
    assert h(src, "dist.entropy()") is H.YES
    assert h(src, "Categorical(probs=torch.ones(2) / 2).entropy()") is H.NO


def test_a_loss_object_returning_a_tuple_gives_history_only_to_its_first_element():
    # YOLO's ``loss, loss_items = compute_loss(pred, y)``: loss_items is
    # returned detached for logging; only the loss itself is known.
    src = """
import torch
from utils.loss import ComputeLoss
compute_loss = ComputeLoss(model)
for x, y in loader:
    loss, loss_items = compute_loss(model(x), y)
    loss.backward()
    use(loss, loss_items)
"""
    assert h(src, "loss", 2) is H.YES
    assert h(src, "loss_items", 1) is H.MAYBE


def test_a_loss_unpacked_into_several_names_proves_only_the_first():
    src = """
    import torch
    import torch.nn as nn
    from utils.loss import ComputeLoss
    compute_loss = ComputeLoss(model)
    crit = nn.MSELoss()
    for x, y in loader:
        loss, loss_items = compute_loss(model(x), y)
        whole = crit(model(x), y)
        use(loss, loss_items, whole)
    """
    facts = facts_of(src)
    call = find(facts.module, "use(loss, loss_items, whole)", cst.Call)
    got = [facts.history.value(a.value).h for a in call.args]
    assert got == [H.YES, H.MAYBE, H.YES]


REPLACED = """
import torch
def train(model, loader, criterion, optimizer):
    for batch in loader:
        loss_dict = criterion(model(batch), batch)
        loss_dict["loss"].backward()
        for idx, (key, value) in enumerate(loss_dict.items()):
            loss_dict[key] = value.item()
            if key == "loss":
                continue
        after = loss_dict["loss"]
"""


def test_a_loop_replacing_every_value_of_a_dict_by_a_number_leaves_numbers():
    assert h(REPLACED, 'loss_dict["loss"]', 1) is H.NO


@pytest.mark.parametrize(
    "change",
    [
        ("enumerate(loss_dict.items())", "enumerate(list(loss_dict.items()))"),  # a copy: keys may be added
        ("loss_dict.items()", "other.items()"),  # another dict's keys
        ("            if key", "            if key == 'x':\n                break\n            if key"),
        (
            "            loss_dict[key] = value.item()\n",
            "            if key:\n                continue\n            loss_dict[key] = value.item()\n",
        ),  # a continue before the store skips keys
        ("value.item()\n", "value.item()\n            loss_dict[key] = value\n"),  # stored again
        ("value.item()\n", "value.item()\n            loss_dict.update(extra)\n"),
        ("value.item()", "value * 2"),  # not a number
        (
            "            loss_dict[key] = value.item()\n",
            "            if key:\n                loss_dict[key] = value.item()\n",
        ),  # not every key
    ],
)
def test_a_loop_that_may_leave_a_value_unreplaced_keeps_the_history(change):
    src = REPLACED.replace(*change)
    assert src != REPLACED
    assert h(src, 'loss_dict["loss"]', 1) is H.YES


@pytest.mark.parametrize(
    "module, expected",
    [
        ("torchbiomed.loss", H.MAYBE),  # a package named torch-something is not torch
        ("torchvision.ops", H.YES),
        ("torch_scatter", H.YES),
        ("torch.nn.functional", H.YES),
    ],
)
def test_only_torch_and_its_libraries_compute_on_their_inputs(module, expected):
    src = f"""
import torch.nn as nn
import {module} as lib
model = nn.Linear(2, 2)
for x, y in loader:
    out = model(x)
    err = lib.dice_error(out, y)
    use(err)
"""
    assert h(src, "err", 1, cst.Name) is expected
