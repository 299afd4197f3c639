"""facts.usage: where values go (into a backward, a return, numeric uses)."""

from analysis_helpers import facts_of


def test_reaches_backward_through_names_and_containers():
    src = """
    import torch
    def step(model, batches):
        parts = []
        total = 0
        for b in batches:
            parts.append(model(b))
            total += model(b).sum()
        loss = torch.stack(parts).sum() + total / 2
        loss.backward()
        logged = total
    """
    facts = facts_of(src)
    fn = facts.calls.functions[0]
    usage = facts.usage
    assert usage.reaches_backward("parts", fn)
    assert usage.reaches_backward("total", fn)
    assert not usage.reaches_backward("logged", fn)


def test_attributes_reach_backward_module_wide():
    src = """
    import torch
    def select_action(state):
        policy.saved_log_probs.append(policy(state).log())
    def finish_episode():
        loss = torch.cat([-lp for lp in policy.saved_log_probs]).sum()
        loss.backward()
    """
    facts = facts_of(src)
    first = facts.calls.functions[0]
    assert facts.usage.reaches_backward("policy.saved_log_probs", first)


def test_reaches_return():
    src = """
    def f(xs):
        acc = 0
        for x in xs:
            acc += x
        return acc / len(xs)
    """
    facts = facts_of(src)
    assert facts.usage.reaches_return("acc", facts.calls.functions[0])


def test_numeric_uses_only():
    src = """
    def f(loader):
        total = 0
        for x in loader:
            total += x
        print(f"{total:.3f}", total / len(loader), float(total))
        if total > 3:
            pass
        avg = total / 2
        print("%.2f" % avg)
    def g(loader):
        total = 0
        for x in loader:
            total += x
        return total
    def h(loader):
        total = 0
        for x in loader:
            total += x
        print(total.item())
    """
    facts = facts_of(src)
    f, g, h = facts.calls.functions
    usage = facts.usage
    loops = facts.loops.all
    after = lambda fn: facts.calls.pos(loops[[f, g, h].index(fn)].node)
    assert usage.numeric_uses_only("total", f, after(f))
    assert not usage.numeric_uses_only("total", g, after(g))
    assert not usage.numeric_uses_only("total", h, after(h))


def test_sources_and_derived():
    import libcst as cst
    from analysis_helpers import facts_of, find

    facts = facts_of(
        """
import torch
def f(model, x):
    out = model(x)
    loss = out.sum()
    probs = out.softmax(-1)
    outs.append(probs)
    other = x * 2
"""
    )
    fn = facts.calls.functions[0]
    loss = find(facts.module, "out.sum()", cst.Call)
    assert {"out", "model", "x"} <= facts.usage.sources(loss, fn)
    assert "other" not in facts.usage.sources(loss, fn)
    assert facts.usage.derived({"out"}, fn) == {"out", "loss", "probs", "outs"}


def test_feeds_model_sees_state_read_back_by_a_module_call():
    src = """
    import torch.nn as nn
    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = nn.GRUCell(8, 8)
        def step(self, x):
            self.h = self.cell(x + self.cum, self.h)
            self.cum += self.h
            self.total += self.h.sum()
            print(self.total)
            return self.h
    """
    facts = facts_of(src)
    step = next(f for f in facts.calls.functions if f.name.value == "step")
    stmts = step.body.body
    usage = facts.usage
    assert usage.feeds_model("self.cum", step, skip=stmts[1])
    assert not usage.feeds_model("self.total", step, skip=stmts[2])  # printed, never fed to the model
    assert not usage.feeds_model("self.cum", step, skip=step)  # the only reads skipped


def test_feeds_model_follows_values_computed_from_the_state():
    src = """
    import torch
    import torch.nn as nn
    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.Linear(16, 8)
        def step(self, h):
            cat = torch.cat((self.weights.unsqueeze(1), self.cum.unsqueeze(1)), dim=1)
            self.weights = self.attention(h, cat)
            self.cum += self.weights
            return self.weights
    """
    facts = facts_of(src)
    step = next(f for f in facts.calls.functions if f.name.value == "step")
    assert facts.usage.feeds_model("self.cum", step, skip=step.body.body[2])
