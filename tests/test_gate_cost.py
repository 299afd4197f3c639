"""The gate's cost: facts the per-card gates share are computed once per file.

The gate runs on every file past the token pre-filter, so a lazy fact that
several cards (or several parts of MEM202's gate) read must not be
recomputed per reader. These tests count the work, not the time.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from memlint.gate import eval as gate_eval
from memlint.gate import facts as gate_facts
from memlint.gate.cards import CARDS

# A ``.train()`` call (loop_may_run_without_grad stops at its first scope),
# a helper with parameters, a plain class and a module built in the file:
# every part of MEM202's gate that reads the collected scopes is asked.
_MEM202_ALL_PARTS = textwrap.dedent(
    """
    import torch

    class Net(torch.nn.Module):
        pass

    class Solver:
        def __init__(self):
            self.net = Net()

        def test(self, loader):
            with torch.no_grad():
                for x in loader:
                    self.net(x)

    def evaluate(model, loader):
        with torch.no_grad():
            for x in loader:
                model(x)

    model = Net()
    model.train()
    with torch.no_grad():
        for x in range(3):
            model(x)
    """
)


def test_mem202_gate_collects_the_off_loop_scopes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bool] = []
    real = gate_eval.compute_loop_may_run_without_grad

    def counted(facts, collect):  # type: ignore[no-untyped-def]
        calls.append(collect)
        return real(facts, collect)

    monkeypatch.setattr(gate_facts, "compute_loop_may_run_without_grad", counted)
    monkeypatch.setattr(gate_eval, "compute_loop_may_run_without_grad", counted)
    g = gate_facts.GateFacts(ast.parse(_MEM202_ALL_PARTS))
    assert CARDS["MEM202"].gate(g)  # type: ignore[misc]
    assert g.helper_loop_without_grad and g.plain_class_loop_without_grad and g.module_built_for_a_loop_without_grad
    # Once to learn whether any loop may run without grad (stopping early), once collected.
    assert calls.count(True) == 1
    assert len(calls) <= 2


# A sampler with no loop, and a factory of this file bound in an evaluation
# loop without grad: MEM202's sampler_def and builds_module are both read.
_SAMPLER_AND_FACTORY = textwrap.dedent(
    """
    import torch

    def build():
        net = torch.nn.Linear(2, 2)
        return net

    def sample_images(gen, z):
        with torch.no_grad():
            return gen(z)

    def main(loader):
        model = build()
        with torch.no_grad():
            for x in loader:
                model(x)
    """
)


def test_mem202_gate_reads_defs_from_the_walk_not_by_walking_again(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ast.parse(_SAMPLER_AND_FACTORY)
    g = gate_facts.GateFacts(tree)
    gate_eval.ModelReach.of(g)  # the one walk of the module MEM201 and MEM202 share
    roots: list[ast.AST] = []
    real_nodes = gate_eval.ast_fields.nodes

    def nodes(root):  # type: ignore[no-untyped-def]
        roots.append(root)
        return real_nodes(root)

    walked: list[ast.AST] = []
    real_walk = ast.walk

    def walk(root):  # type: ignore[no-untyped-def]
        walked.append(root)
        return real_walk(root)

    monkeypatch.setattr(gate_eval.ast_fields, "nodes", nodes)
    monkeypatch.setattr(ast, "walk", walk)
    found = g.sampler_def and g.builds_module
    monkeypatch.undo()
    assert found
    # The defs come from the main walk (GateFacts._functions), not from a
    # walk of the module, and the factories' from the gate's field table.
    assert tree not in roots
    mine = {id(n) for n in real_walk(tree)}
    assert not [n for n in walked if id(n) in mine]


_STATEMENTS = textwrap.dedent(
    """
    @deco(f(1))
    def fn(a=g(2), *, b=lambda: h(3)) -> r(4):
        inner(5)

    class C(Base(6), metaclass=m(7)):
        x = y(8)

    with ctx(9) as c, other(10):
        body(11)

    for i in it(12):
        loop(13)
    else:
        after(14)

    x = {k(15): v(16) for k in ks(17)}[i(18)]
    """
)


def test_expression_calls_are_the_calls_of_expression_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    from memlint.gate import ast_fields

    for stmt in ast.parse(_STATEMENTS).body:
        expected = [n for n in ast_fields.expression_nodes(stmt) if type(n) is ast.Call]
        got = ast_fields.expression_calls(stmt)
        assert sorted(id(n) for n in got) == sorted(id(n) for n in expected)
        assert all(type(n) is ast.Call for n in got)
    # The grad-mode search reads a statement's calls without listing its every node.
    monkeypatch.setattr(ast_fields, "nodes", None)
    stmt = ast.parse("with torch.no_grad():\n    model(x)").body[0]
    assert gate_eval._names_called(stmt, {}) == {"no_grad"}


_BINDINGS = textwrap.dedent(
    """
    import torch as T
    from m import net

    def f(a, *rest, k=1, **kw):
        global g
        x = a.b.c
        self.enc = build()
        self.dec.parameters()
        self.cfg.__name__
        y: int = 2
        for i, (j, k2) in enumerate(z):
            del q
        try:
            pass
        except E as err:
            pass
        match v:
            case {"a": 1, **others}:
                pass
            case [first, *tail]:
                pass
            case C(attr=bound) as whole:
                pass
        return (w := model(x)), lambda lam: lam
    """
)


def test_model_reach_is_read_off_the_main_walk(monkeypatch: pytest.MonkeyPatch) -> None:
    tree = ast.parse(_BINDINGS)
    g = gate_facts.GateFacts(tree)
    # What the file binds other than by def, class or import; what it reads as ``name.attr``.
    assert g._rebound == {
        *("a", "rest", "k", "kw", "g", "x", "y", "i", "j", "k2", "q", "err"),
        *("others", "first", "tail", "bound", "whole", "w", "lam"),
    }
    assert g._bases == {"a", "self"}
    # ``self.cfg.__name__`` is no evidence of a module (facts._MODULE_EVIDENCE).
    assert g._self_bound == {"enc", "dec"}
    # ModelReach.of builds on them: no walk of its own.
    monkeypatch.setattr(gate_eval.ast_fields, "nodes", None)
    reach = gate_eval.ModelReach.of(g)
    assert reach.name_may_be_model("x") and not reach.name_may_be_model("print")
    assert reach.self_attr_may_be_model("dec") and not reach.self_attr_may_be_model("lr")


# transformers' modeling files: a store in a loop over layers (no batch
# loop around it, none calling its function), in a file with batch evidence.
_STORES_NO_LOOP_CARRIES = textwrap.dedent(
    """
    import torch

    class Encoder(torch.nn.Module):
        def forward(self, hidden):
            states = ()
            for layer in self.layers:
                hidden = layer(hidden)
                states += (hidden,)
            total = 0
            for block in self.blocks:
                total = total + block(hidden)
            return hidden

    def evaluate(model, loader):
        for batch in loader:
            model(batch)
    """
)


def test_loop_sites_reads_the_history_seeds_only_where_a_store_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """A store or accumulation no loop may carry, in a function no batch
    loop calls, decides nothing: whether its value may carry history (the
    seeds' walk of the whole file, gate/seeds.py) is not asked. Carried by
    a batch loop, it is."""
    from memlint.gate import seeds

    walks = []
    collect = seeds.Seeds._collect
    monkeypatch.setattr(seeds.Seeds, "_collect", lambda self: walks.append(1) or collect(self))
    g = gate_facts.GateFacts(ast.parse(_STORES_NO_LOOP_CARRIES))
    assert g.batch_evidence
    sites = g.loop_sites
    assert not sites.stores and not sites.accumulates
    assert walks == []
    carried = _STORES_NO_LOOP_CARRIES.replace("for layer in self.layers", "for layer in self.loader")
    sites = gate_facts.GateFacts(ast.parse(carried)).loop_sites
    assert sites.stores and sites.accumulates is False
    assert walks == [1]
