"""A wrapper that holds a model in eval mode and runs it (issue 29, pysot's
trackers): ``tracker = build_tracker(model)`` picks a class from a literal
table (class_registries.py), and ``tracker.track(frame)`` per frame runs
``self.model.track(x)`` with grad on (held_models.py, MEM201)."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.class_registries import module_registries

_TRACKER = """\
    class Tracker(object):
        def __init__(self, model):
            self.model = model
            self.model.eval()

        def init(self, img):
            self.model.template(img)

        def track(self, img):
            out = self.model.track(img)
            return out
"""

_SUBCLASS = """\
    from tracking.tracker import Tracker


    class LongTracker(Tracker):
        def __init__(self, model):
            super(LongTracker, self).__init__(model)

        def track(self, img):
            return self.model.track(img)
"""

_BUILDER = """\
    from tracking.tracker import Tracker
    from tracking.long_tracker import LongTracker

    TRACKS = {"short": Tracker, "long": LongTracker}


    def build_tracker(model, kind):
        return TRACKS[kind](model)
"""

_RUN = """\
    import torch
    from tracking.builder import build_tracker
    from tracking.net import Net


    def main(frames):
        model = Net().cuda().eval()
        tracker = build_tracker(model, "short")
        for idx, frame in enumerate(frames):
            if idx == 0:
                tracker.init(frame)
            else:
                outputs = tracker.track(frame)
                print(outputs)


    main([])
"""

_NET = """\
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def template(self, z):
            self.zf = self.fc(z)

        def track(self, x):
            return self.fc(x) + self.zf
"""


def _project(tmp_path, **changes):
    files = {
        "tracking/__init__.py": "",
        "tracking/tracker.py": _TRACKER,
        "tracking/long_tracker.py": _SUBCLASS,
        "tracking/builder.py": _BUILDER,
        "tracking/net.py": _NET,
        "run.py": _RUN,
    }
    files.update(changes)
    write_project(tmp_path, files)
    return tmp_path / "run.py"


def test_a_loop_over_frames_running_a_held_eval_model_is_reported(tmp_path):
    assert finding_lines(_project(tmp_path), "MEM201") == [9]


def test_under_no_grad_it_is_silent(tmp_path):
    run = """\
    import torch
    from tracking.builder import build_tracker
    from tracking.net import Net


    def main(frames):
        model = Net().cuda().eval()
        tracker = build_tracker(model, "short")
        with torch.no_grad():
            for idx, frame in enumerate(frames):
                if idx == 0:
                    tracker.init(frame)
                else:
                    print(tracker.track(frame))


    main([])
"""
    assert finding_lines(_project(tmp_path, **{"run.py": run}), "MEM201") == []


def test_a_wrapper_that_switches_its_model_back_to_train_is_no_evidence(tmp_path):
    tracker = _TRACKER + "\n        def finetune(self):\n            self.model.train()\n"
    assert finding_lines(_project(tmp_path, **{"tracking/tracker.py": tracker}), "MEM201") == []


def test_a_wrapper_that_does_not_switch_its_model_to_eval_is_no_evidence(tmp_path):
    tracker = _TRACKER.replace("        self.model.eval()\n", "")
    assert finding_lines(_project(tmp_path, **{"tracking/tracker.py": tracker}), "MEM201") == []


def test_methods_running_the_model_under_no_grad_are_silent(tmp_path):
    tracker = _TRACKER.replace(
        "            out = self.model.track(img)\n",
        "            with torch.no_grad():\n                out = self.model.track(img)\n",
    ).replace(
        "            self.model.template(img)\n",
        "            with torch.no_grad():\n                self.model.template(img)\n",
    )
    subclass = _SUBCLASS.replace(
        "            return self.model.track(img)\n",
        "            with torch.no_grad():\n                return self.model.track(img)\n",
    )
    files = {
        "tracking/tracker.py": "    import torch\n" + tracker,
        "tracking/long_tracker.py": "    import torch\n" + subclass,
    }
    assert finding_lines(_project(tmp_path, **files), "MEM201") == []


def test_one_method_still_running_it_with_grad_on_is_reported(tmp_path):
    tracker = _TRACKER.replace(
        "            out = self.model.track(img)\n",
        "            with torch.no_grad():\n                out = self.model.track(img)\n",
    )
    assert finding_lines(_project(tmp_path, **{"tracking/tracker.py": "    import torch\n" + tracker}), "MEM201") == [9]


def test_one_class_of_the_table_that_trains_makes_it_unknown(tmp_path):
    subclass = _SUBCLASS + "\n        def update(self, loss):\n            loss.backward()\n"
    assert finding_lines(_project(tmp_path, **{"tracking/long_tracker.py": subclass}), "MEM201") == []


def test_a_table_written_elsewhere_is_not_read(tmp_path):
    builder = _BUILDER + "\n\n    def register(name, cls):\n        TRACKS[name] = cls\n"
    assert finding_lines(_project(tmp_path, **{"tracking/builder.py": builder}), "MEM201") == []


def test_a_loop_that_trains_is_silent(tmp_path):
    run = _RUN.replace("                print(outputs)\n", "                outputs.sum().backward()\n")
    assert finding_lines(_project(tmp_path, **{"run.py": run}), "MEM201") == []


def test_literal_tables_of_names_are_registries():
    tree = ast.parse(textwrap.dedent(_BUILDER))
    found = module_registries(tree)
    assert found.literals == {"TRACKS": ("Tracker", "LongTracker")}
    assert found.lookups == {"TRACKS": "TRACKS"}


def test_a_table_with_a_call_or_written_to_is_no_registry():
    tree = ast.parse("from m import A, B\nT = {'a': A, 'b': B()}\nU = {'a': A}\nU['b'] = B\n")
    assert module_registries(tree).literals == {}


def test_the_byte_scan_finds_the_switch_in_a_base_and_skips_chains_without_one(tmp_path):
    from types import SimpleNamespace

    from memlint.project import held_models

    base = tmp_path / "base.py"
    base.write_text(
        "class Base:\n    def __init__(self, m):\n        self.model = m\n        (self.model\n         .eval())\n"
    )
    plain = tmp_path / "plain.py"
    plain.write_text('class Plain:\n    """model.eval() in a docstring is no switch."""\n')
    reads: list[str] = []
    typed = SimpleNamespace(
        objects=lambda path: SimpleNamespace(bases=[("Sub", [":Base"])]) if path == str(base) else None,
        qualify=lambda name, path: (),
        index=SimpleNamespace(_note_read=reads.append),
    )
    assert held_models._may_switch(typed, f"{base}\0Sub")  # the switch spans lines
    assert not held_models._may_switch(typed, f"{plain}\0Plain")
    assert reads == [str(base), str(plain)]
    assert not hasattr(typed, "_held_trees")  # nothing parsed
