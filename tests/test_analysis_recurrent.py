"""facts.recurrent: state fed back into a model across training iterations."""

from analysis_helpers import facts_of


def states(src: str):
    facts = facts_of(src)
    out = []
    for info in facts.loops.all:
        out.extend((s.key, facts.recurrent.init_form(s)) for s in facts.recurrent.carried_states(info))
    return out


TRAIN = """
import torch
{init}
for x, y in loader:
{pre}    out, {target} = model(x, {fed})
    loss = criterion(out, y)
    loss.backward()
    optimizer.step()
"""


def case(init="h = torch.zeros(1, 4, 8)", pre="", target="h", fed="h"):
    return TRAIN.format(init=init, pre=pre, target=target, fed=fed)


def test_carried_tensor_state():
    assert states(case()) == [("h", "tensor")]


def test_tuple_and_unknown_initial_state():
    assert states(case(init="h = (torch.zeros(1), torch.zeros(1))")) == [("h", "tuple")]
    assert states(case(init="h = model.init_hidden(4)")) == [("h", "unknown")]
    assert states(case(init="h = None")) == [("h", "none")]


def test_lstm_pair_is_two_tensors():
    src = case(init="h, c = torch.zeros(1), torch.zeros(1)", target="(h, c)", fed="(h, c)")
    assert states(src) == [("h", "tensor"), ("c", "tensor")]


def test_detached_or_reinitialised_state_is_not_carried():
    assert states(case(pre="    h = h.detach()\n")) == []
    assert states(case(pre="    h = model.init_hidden(4)\n")) == []
    assert states(case(pre="    h.detach_()\n")) == []
    assert states(case(fed="h.detach()")) == []


def test_state_is_not_carried_without_training_or_with_no_grad():
    no_train = "import torch\nh = torch.zeros(1)\nfor x in loader:\n    out, h = model(x, h)\n"
    assert states(no_train) == []
    under_no_grad = case().replace(
        "    out, h = model(x, h)", "    with torch.no_grad():\n        out, h = model(x, h)"
    )
    assert states(under_no_grad) == []


def _carries(src: str) -> list[bool]:
    facts = facts_of(src)
    return [facts.recurrent.carries_call_results(info) for info in facts.loops.all]


def test_previous_iteration_output_read_before_it_is_rebound():
    src = """
for batch in loader:
    if prev is not None:
        batch["state"] = prev["state"]
    prev = model(batch)
    prev["loss"].backward(retain_graph=True)
"""
    assert _carries(src) == [True]


def test_outputs_bound_before_any_read_are_not_carried():
    src = """
step = 0
for batch in loader:
    out = model(batch)
    loss = criterion(out, batch)
    if step % 10 == 0:
        log(loss)
    step = step + 1
"""
    assert _carries(src) == [False], "a counter rebound without a call carries no graph"


def test_loop_target_rebound_and_history_free_feedback_are_not_carried():
    src = """
import torch
for i, data in loader:
    data = {k: v.to(device) for k, v in data.items()}
    out = model(data)
    loss = criterion(out, data)
    loss.backward(retain_graph=True)
"""
    assert _carries(src) == [False], "the loop's own target read in its header is not last iteration's value"
    src = """
import torch
prev = None
for i in range(3):
    out = model(x, prev)
    loss = criterion(out, y)
    loss.backward(retain_graph=True)
    prev = torch.topk(out, 1, dim=2)[1]
"""
    assert _carries(src) == [False], "topk indices fed back carry no graph"
