"""A method reached only through a dispatcher that runs it under ``no_grad``
(project/method_modes.py, index.on_call_reaches): swapping-autoencoder's
evaluators, whose ``evaluate`` only ``GroupEvaluator.evaluate`` calls, each
call inside ``with torch.no_grad():``. train.py calls ``evaluators.evaluate``
with grad on, but ``evaluators`` is a ``GroupEvaluator``, whose class defines
``evaluate`` itself: that call runs the dispatcher, not an evaluator (MEM201
and MEM102, twenty-fifth batch)."""

from __future__ import annotations

import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.index import view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text

_BASE = """
    class BaseEvaluator:
        def __init__(self, opt):
            self.opt = opt
        def evaluate(self, model, batches):
            pass
"""

_GROUP = """
    import torch
    from evaluation.base import BaseEvaluator
    class GroupEvaluator(BaseEvaluator):
        def __init__(self, opt, evaluators):
            super().__init__(opt)
            self.evaluators = evaluators
        def evaluate(self, model, batches):
            found = {}
            for evaluator in self.evaluators:
                with torch.no_grad():
                    found.update(evaluator.evaluate(model, batches))
            return found
"""

# A loop of its own (MEM201, line 7) and a helper's (MEM201 line 12, MEM102 line 14).
_GRID = """
    import torch
    from evaluation.base import BaseEvaluator
    class GridEvaluator(BaseEvaluator):
        def evaluate(self, model, batches):
            model.eval()
            for x in batches:
                model(x)
            return {"grid": self.generate_grid(model, batches)}
        def generate_grid(self, model, images):
            codes = []
            for image in images:
                code = model(image)
                codes.append(code)
            return torch.cat(codes)
"""

_TRAIN = """
    from evaluation.group import GroupEvaluator
    evaluators = GroupEvaluator(None, [])
    def main(model, batches):
        for step in range(10):
            evaluators.evaluate(model, batches)
    main(None, [])
"""


def _project(tmp_path, **replaced: str):
    files = {
        "setup.py": "",  # the project's root: train.py is one of its modules
        "evaluation/__init__.py": "",
        "evaluation/base.py": _BASE,
        "evaluation/group.py": _GROUP,
        "evaluation/grid.py": _GRID,
        "train.py": _TRAIN,
    }
    files.update({name.replace("__", "/") + ".py": text for name, text in replaced.items()})
    write_project(tmp_path, files)
    return tmp_path / "evaluation" / "grid.py"


def test_the_evaluator_stands_alone_reported(tmp_path):
    """Without the dispatcher, nothing in the project runs it with grad off."""
    grid = _project(tmp_path, evaluation__group="", train="")
    assert finding_lines(grid, "MEM201") == [7, 12]
    assert finding_lines(grid, "MEM102") == [14]


def test_an_evaluator_only_a_no_grad_dispatcher_runs_is_silent(tmp_path):
    grid = _project(tmp_path)
    assert finding_lines(grid, "MEM201") == []
    assert finding_lines(grid, "MEM102") == []
    assert view_from_disk(str(grid)).methods_off_elsewhere == ("evaluate",)


def test_the_dispatcher_built_in_a_function_or_handed_in_is_typed_too(tmp_path):
    """A parameter every call site passes a ``GroupEvaluator`` is one as well (typed_objects.py)."""
    train = """
        from evaluation.group import GroupEvaluator
        def run(evaluators, model, batches):
            evaluators.evaluate(model, batches)
        def main(model, batches):
            group = GroupEvaluator(None, [])
            run(group, model, batches)
            group.evaluate(model, batches)
    """
    grid = _project(tmp_path, train=train)
    assert finding_lines(grid, "MEM201") == []


def test_a_grad_on_call_that_may_reach_the_evaluator_keeps_it_reported(tmp_path):
    direct = "from evaluation.grid import GridEvaluator\ndef main(model, batches):\n"
    direct += "    GridEvaluator(None).evaluate(model, batches)\n    ev = GridEvaluator(None)\n"
    direct += "    ev.evaluate(model, batches)\n"
    grid = _project(tmp_path, run=direct)
    assert finding_lines(grid, "MEM201") == [7, 12]
    # A receiver nobody types: it may hold an evaluator.
    grid = _project(tmp_path, run="def main(ev, model, batches):\n    ev.evaluate(model, batches)\n")
    assert finding_lines(grid, "MEM201") == [7, 12]


def test_a_class_inheriting_the_method_may_run_a_base_in_the_evaluator_s_module(tmp_path):
    """``Wrapper`` defines no ``evaluate``: which one runs is its bases' affair."""
    wrapper = "from evaluation.grid import GridEvaluator\nclass Wrapper(GridEvaluator):\n    pass\n"
    train = _TRAIN + "\n    from wrapper import Wrapper\n    Wrapper(None).evaluate(None, [])\n"
    grid = _project(tmp_path, wrapper=wrapper, train=train)
    assert finding_lines(grid, "MEM201") == [7, 12]


def test_a_dispatcher_passing_its_own_entry_on_keeps_the_evaluator_reported(tmp_path):
    """``GroupEvaluator.evaluate`` runs the evaluators in the mode it is
    entered in; its module enters it only under ``no_grad`` (``final``), so
    its summary reads that call as off, but train.py enters it with grad on."""
    group = """
        import torch
        from evaluation.base import BaseEvaluator
        class GroupEvaluator(BaseEvaluator):
            def __init__(self, opt, evaluators):
                super().__init__(opt)
                self.evaluators = evaluators
            def evaluate(self, model, batches):
                for evaluator in self.evaluators:
                    evaluator.evaluate(model, batches)
            def final(self, model, batches):
                with torch.no_grad():
                    self.evaluate(model, batches)
    """
    summary = summarise_text(textwrap.dedent(group), always=True)
    assert summary is not None and summary.methods_relayed == ["evaluate"]
    grid = _project(tmp_path, evaluation__group=group)
    assert finding_lines(grid, "MEM201") == [7, 12]
    # Entered by train.py under no_grad too, every path to the evaluator is off.
    off_train = _TRAIN.replace(
        "            evaluators.evaluate", "            with torch.no_grad():\n                evaluators.evaluate"
    )
    grid = _project(tmp_path, evaluation__group=group, train="    import torch\n" + off_train)
    assert finding_lines(grid, "MEM201") == []


def test_summary_keeps_a_typeable_receiver_with_its_call():
    summary = summarise_text(textwrap.dedent(_TRAIN), always=True)
    assert summary is not None
    assert summary.methods_on == ["evaluate@main:evaluators"]
    assert summary.methods_relayed == []
    assert ModuleSummary.from_json(summary.to_json()) == summary
    untyped = summarise_text(
        "def main(runs, model):\n    runs[0].evaluate(model)\n    ev.evaluate(model)\n", always=True
    )
    assert untyped is not None and untyped.methods_on == ["evaluate"]


def test_the_language_servers_view_says_the_same(tmp_path):
    import memlint.project.index as index
    from memlint.project.live import Workspace

    grid = _project(tmp_path)
    index._MEMO.clear()
    disk = view_from_disk(str(grid))
    assert disk is not None and disk.methods_off_elsewhere == ("evaluate",)
    assert Workspace().view(str(grid)) == disk
