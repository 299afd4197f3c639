"""training/settings_loops.py: a loop over a literal list of settings (an experiment sweep)."""

import libcst as cst
from analysis_helpers import facts_of

from memlint.analysis.training.settings_loops import sweeps_settings


def _sweeps(src: str) -> list[bool]:
    facts = facts_of(src)
    out = []
    for info in facts.loops.all:
        scope = facts.objects.scope_of(info.node)
        out.append(sweeps_settings(info.node, lambda name, scope=scope: facts.bindings.values(name, scope)))
    return out


def test_literal_settings_named_or_written_in_place():
    src = """
    def sweep(model):
        tols = [1e-1, 1e-2, 1e-3]
        for tol in tols:
            model(tol)
        for i, lr in enumerate((0.1, -0.01)):
            model(lr)
        for name in ["adam", "sgd"]:
            model(name)
    """
    assert _sweeps(src) == [True, True, True]


def test_data_names_and_computed_lists_are_no_sweep():
    src = """
    def run(model, loader, tols):
        for x in loader:
            model(x)
        for tol in tols:
            model(tol)
        steps = [1, 2]
        steps = make_steps()
        for s in steps:
            model(s)
        for t in [a, b]:
            model(t)
        for t in []:
            model(t)
        while True:
            break
    """
    assert _sweeps(src) == [False, False, False, False, False, False]
    assert isinstance(facts_of(src).loops.all[-1].node, cst.While)
