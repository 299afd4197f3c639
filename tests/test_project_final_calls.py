"""final_calls: the arguments of a call whose graph dies in the calling
function after the call (nothing there backpropagates again, nothing of it
is kept), read on Python's ``ast``."""

import ast
import textwrap

import pytest

from memlint.project.final_calls import ScopeFlow, returns_number

_STEP = """\
def step(self, real):
    z = self.noise(real.size(0))
    fake = self.G(z)
    out, feats = self.D(fake, True)
    loss = self.crit(out)
    self.log["g"] = loss.item()
    loss.backward(retain_graph=True)
    _, real_feats = self.D(real, True)
    self.log["div"] = diversity(real_feats, feats, backward=True)
    self.opt.step()
    return self.log
"""


def _final(src: str, callee: str = "diversity", numeric=frozenset(), trains=frozenset({"train_d"})) -> tuple[str, ...]:
    fn = ast.parse(textwrap.dedent(src)).body[0]
    assert isinstance(fn, ast.FunctionDef)
    call = next(
        n for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == callee
    )
    return ScopeFlow(fn, frozenset(numeric)).final_args(call, frozenset(trains))


def test_a_last_loss_helper_at_the_end_of_a_step():
    assert _final(_STEP) == ("0", "1")


@pytest.mark.parametrize(
    "change, why",
    [
        (("    self.opt.step()\n", "    self.opt.step()\n    out.sum().backward()\n"), "a later backward"),
        (("    self.opt.step()\n", "    self.opt.step()\n    self.last = feats\n"), "kept on an attribute after"),
        (
            ("    self.opt.step()\n", "    self.opt.step()\n    self.train_d(real)\n"),
            "a later call of a method that trains",
        ),
        (
            ("    loss = self.crit(out)\n", "    loss = self.crit(out)\n    self.kept.append(out)\n"),
            "a value of the graph is kept",
        ),
        (("    return self.log\n", "    return fake\n"), "a value of the graph is returned"),
        (("    return self.log\n", "    return loss\n"), "a value computed from the graph is returned"),
        (
            ('    self.log["g"] = loss.item()\n', '    self.log["g"] = loss\n'),
            "a value computed from the graph is stored",
        ),
        (("    z = self.noise", "    global fake\n    z = self.noise"), "a global"),
        (("    fake = self.G(z)\n", "    fake = self.G(z)\n    hook = lambda: fake\n"), "read by a nested function"),
        (("    fake = self.G(z)\n", "    for _ in range(2):\n        fake = self.G(z)\n"), "bound in a loop"),
        (("    fake = self.G(z)\n", "    fake = self.G(z)\n    fake += 1\n"), "an augmented assignment"),
    ],
)
def test_a_graph_that_may_be_reached_again_is_not_final(change, why):
    old, new = change
    assert old in _STEP
    assert "1" not in _final(_STEP.replace(old, new)), why


def test_a_value_handed_to_a_helper_returning_a_number_is_cut():
    src = _STEP.replace('    self.log["g"] = loss.item()\n', '    self.log["c"] = self.penalty(out)\n')
    assert "1" not in _final(src)
    assert _final(src, numeric={"penalty"}) == ("0", "1")


def test_a_parameter_handed_over_is_not_final():
    src = _STEP.replace("diversity(real_feats, feats", "diversity(real, feats")
    assert _final(src) == ("1",)


def test_a_rebinding_in_the_top_block_starts_a_new_graph():
    # ``out`` of the first forward is stored; the helper gets the second one.
    src = """\
    def step(self, x):
        out = self.D(x)
        self.first = out
        out = self.D(x + 1)
        return helper(out)
    """
    assert _final(src.replace("return helper(out)", "v = helper(out)\n    return 0"), "helper") == ("0",)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("return loss.item()", True),
        ("if w:\n        return loss.item()\n    return 0", True),
        ("return float(loss)", True),
        ("return loss", False),
        ("return loss.item(), loss", False),
        ("print(loss)", False),  # no return: None, not a number
        ("if w:\n        return loss.item()\n    return", False),
    ],
)
def test_returns_number(body, expected):
    fn = ast.parse(f"def f(loss, w):\n    {body}\n").body[0]
    assert isinstance(fn, ast.FunctionDef)
    assert returns_number(fn) is expected
