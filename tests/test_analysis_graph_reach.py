"""graph_reach: the calls a value's autograd graph runs back through."""

import libcst as cst
from analysis_helpers import facts_of, find

from memlint.analysis.autograd.graph_reach import calls_module, graph_calls


def reached(src: str, expr_text: str, index: int = 0) -> list[str]:
    facts = facts_of(src)
    module = facts.module
    expr = find(module, expr_text, cst.Name, index)
    scope = facts.loops.scope_of(expr)
    calls = graph_calls(expr, scope, facts.bindings, facts.calls.pos, facts.calls.end)
    return sorted(module.code_for_node(c) for c in calls)


def test_follows_names_to_their_last_assignment_before_the_read():
    src = """
    def f(real, z):
        fake = G(z)
        out = D(fake).view(-1)
        loss = bce(out, ones)
        use(loss)
        out = D2(real)
        use(out)
    """
    assert reached(src, "loss", 1) == ["D(fake)", "D(fake).view(-1)", "G(z)", "bce(out, ones)"]
    assert reached(src, "out", 3) == ["D2(real)"]


def test_detach_item_and_comparisons_cut_the_graph():
    src = """
    def f(z):
        fake = G(z)
        a = D(fake.detach())
        b = D(fake).item() + (D(fake) > 0).sum()
        c = fake.data * 2
        use(a, b, c)
    """
    assert reached(src, "a", 1) == ["D(fake.detach())"]
    assert reached(src, "b", 1) == ["(D(fake) > 0).sum()"]
    assert reached(src, "c", 1) == []


def test_bindings_it_cannot_place_end_the_walk():
    src = """
    def f(loader):
        for x in loader:
            loss = crit(model(x))
            total, _ = helper(loss)
            use(total)
    """
    assert reached(src, "total", 1) == []


def test_augmented_assignments_add_their_parts_to_the_last_binding():
    src = """
    def f(loader):
        for x in loader:
            total = 0
            total += crit(model(x))
            use(total)
            total = other(x)
            total += 1
            use(total)
    """
    assert reached(src, "total", 2) == ["crit(model(x))", "model(x)"]
    assert reached(src, "total", 5) == ["other(x)"]  # the parts added before the rebinding are gone


def test_self_assignment_reads_the_previous_value():
    src = """
    def f(x):
        h = enc(x)
        h = h + 1
        use(h)
    """
    assert reached(src, "h", 3) == ["enc(x)"]


def test_calls_module_matches_parts_but_not_bookkeeping():
    call = lambda s: cst.parse_expression(s)  # noqa: E731
    assert calls_module(call("D(x)"), "D")
    assert calls_module(call("D.forward(x)"), "D")
    assert calls_module(call("model.encoder(x)"), "model")
    assert not calls_module(call("model.parameters()"), "model")
    assert not calls_module(call("Dx(x)"), "D")
    assert not calls_module(call("model(x)"), "model.encoder")
