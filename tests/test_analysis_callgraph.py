"""analysis/scope/callgraph.py: which parameter each argument of a call binds to."""

import libcst as cst

from memlint.analysis.scope.callgraph import CallGraph, bound_params


def bound(fn_src: str, call_src: str) -> list[tuple[str, str]]:
    fn = cst.parse_module(fn_src).body[0]
    call = cst.parse_expression(call_src)
    return [(cst.Module([]).code_for_node(arg.value), param) for arg, param in bound_params(call, fn)]


def test_positional_and_keyword_arguments():
    assert bound("def f(a, b, *, c=1): pass\n", "f(x, c=z, b=y)") == [("x", "a"), ("z", "c"), ("y", "b")]


def test_self_is_skipped_for_method_calls_only():
    src = "def step(self, opt, loss): pass\n"
    assert bound(src, "self.step(o, l)") == [("o", "opt"), ("l", "loss")]
    assert bound(src, "step(t, o)") == [("t", "self"), ("o", "opt")]


def test_nothing_binds_from_star_args_on_and_unknown_keywords_are_dropped():
    src = "def f(a, b, c): pass\n"
    assert bound(src, "f(x, *rest, c=z)") == [("x", "a")]
    assert bound(src, "f(x, verbose=True)") == [("x", "a")]


def _escaping(src: str) -> set[str]:
    from memlint.analysis.scope.callgraph import CallGraph

    return {fn.name.value for fn in CallGraph(cst.parse_module(src)).escapes}


def test_an_attribute_or_keyword_of_the_same_name_is_no_escape():
    # MORAN's ``val()`` beside ``loss_avg.val()``: the attribute names no function of the module.
    src = "def val(d):\n    return d\n\ndef main(avg, d):\n    print(avg.val(), f(val=1))\n    return val(d)\n"
    assert _escaping(src) == set()
    assert _escaping(src + "\nhooks = [val]\n") == {"val"}
    assert _escaping(src + "\ng(callback=val)\n") == {"val"}


def test_scope_names_match_the_summaries_keys():
    module = cst.parse_module(
        "class Net:\n    def forward(self, x):\n        def inner():\n            pass\n\ndef train():\n    pass\n"
    )
    graph = CallGraph(module)
    cls, train = module.body
    forward = cls.body.body[0]
    inner = forward.body.body[0]
    assert graph.scope_name(forward) == "Net.forward"
    assert graph.scope_name(train) == "train"
    assert graph.scope_name(inner) == "inner"  # a nested function: its own name, no class
    assert graph.scope_name(module) == ""  # the module's own statements
