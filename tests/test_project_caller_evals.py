"""A feature-extraction helper judged by the eval switch of its callers in
other modules (ReID-MGN's ``utils/extract_feature.py``: a loop over a loader
calling the model it is handed, no ``.eval()`` or name of its own; ``main.py``
calls ``model.eval()`` and then the helper). The same shape in one file was
reported already (``_callers_evaluate``); the callers' modes now come from the
project too, and the gate lets such a file wait for its view
(gate/caller_evals.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from project_helpers import finding_lines, write_project

from memlint.gate.caller_evals import hands_a_model_in_eval, may_evaluate_for_callers
from memlint.gate.facts import GateFacts

_HELPER = """\
    import torch

    def extract_feature(model, loader):
        features = torch.FloatTensor()
        for inputs, labels in loader:
            outputs = model(inputs.to("cuda"))
            features = torch.cat((features, outputs[0].data.cpu()), 0)
        return features
"""

_MAIN = """\
    import torch
    from utils.extract_feature import extract_feature

    def evaluate(model, query_loader, gallery_loader):
        model.eval()
        qf = extract_feature(model, query_loader).numpy()
        gf = extract_feature(model, gallery_loader).numpy()
        return qf @ gf.T
"""


def _lint(tmp_path: Path, main: str = _MAIN, helper: str = _HELPER) -> list[int]:
    write_project(
        tmp_path,
        {"setup.py": "", "main.py": main, "utils/__init__.py": "", "utils/extract_feature.py": helper},
    )
    return finding_lines(tmp_path / "utils" / "extract_feature.py", "MEM201")


def _cli(tmp_path: Path) -> list[tuple[str, int]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted((Path(f["filename"]).name, f["location"]["row"]) for f in json.loads(out or "[]"))


def test_helper_called_after_eval_in_another_module_is_reported(tmp_path):
    assert _lint(tmp_path) == [5]


def test_the_cli_on_the_tree_reports_it_too(tmp_path):
    _lint(tmp_path)
    assert ("extract_feature.py", 5) in _cli(tmp_path)


def test_silent_when_a_caller_runs_it_under_no_grad(tmp_path):
    main = _MAIN.replace(
        "        gf = extract_feature(model, gallery_loader).numpy()\n",
        "        with torch.no_grad():\n            gf = extract_feature(model, gallery_loader).numpy()\n",
    )
    assert _lint(tmp_path, main) == []


def test_silent_when_a_caller_hands_the_model_in_train_mode(tmp_path):
    main = _MAIN + (
        "\n    def recalibrate(model, train_loader):\n"
        "        model.train()\n"
        "        return extract_feature(model, train_loader)\n"
    )
    assert _lint(tmp_path, main) == []


def test_silent_when_a_caller_hands_a_model_of_unknown_mode(tmp_path):
    main = _MAIN + "\n    def other(net, loader):\n        return extract_feature(net, loader)\n"
    assert _lint(tmp_path, main) == []


def test_silent_when_the_helper_returns_a_graph(tmp_path):
    helper = _HELPER.replace("outputs[0].data.cpu()", "outputs[0]")
    assert _lint(tmp_path, helper=helper) == []


def test_silent_when_no_caller_switches_to_eval(tmp_path):
    main = _MAIN.replace("        model.eval()\n", "")
    assert _lint(tmp_path, main) == []


def test_gate_file_side_needs_a_data_loop_in_a_function_with_parameters():
    import ast

    assert may_evaluate_for_callers(GateFacts(ast.parse(_HELPER.replace("\n    ", "\n").strip())))
    no_params = "def run():\n    for batch in loader:\n        model(batch)\n"
    assert not may_evaluate_for_callers(GateFacts(ast.parse(no_params)))
    no_data = "def run(model, xs):\n    for x in xs:\n        model(x)\n"
    assert not may_evaluate_for_callers(GateFacts(ast.parse(no_data)))


def test_gate_file_side_skips_a_loop_that_trains_every_step():
    import ast

    trains = "def run(model, loader, opt):\n    for batch in loader:\n        model(batch)\n        opt.step()\n"
    assert not may_evaluate_for_callers(GateFacts(ast.parse(trains)))
    backward = "def run(model, loader):\n    for batch in loader:\n        model(batch).sum().backward()\n"
    assert not may_evaluate_for_callers(GateFacts(ast.parse(backward)))
    # A step under a flag (a loop shared by training and evaluation) or an environment's step stays a candidate.
    shared = "def run(model, loader, opt, train):\n    for batch in loader:\n        model(batch)\n        if train:\n            opt.step()\n"
    assert may_evaluate_for_callers(GateFacts(ast.parse(shared)))
    env = "def run(model, loader, env):\n    for batch in loader:\n        env.step(model(batch))\n"
    assert may_evaluate_for_callers(GateFacts(ast.parse(env)))


def test_gate_view_side_needs_a_model_handed_in_eval():
    class _Caller:
        def __init__(self, modes, eval_scope=False):
            self.modes = modes
            self.eval_scope = eval_scope

    class _View:
        def __init__(self, callers):
            self.callers = callers

    assert hands_a_model_in_eval(_View((("extract_feature", (_Caller((("0", "eval"),)),)),)))
    assert not hands_a_model_in_eval(_View((("extract_feature", (_Caller((("0", "train-fresh"),)),)),)))
    assert not hands_a_model_in_eval(_View(()))
    assert hands_a_model_in_eval(_View((("extract_feature", (_Caller((), eval_scope=True),)),)))


_VIS = """\
    import torch
    from utils.extract_feature import extract_feature

    class Main:
        def __init__(self, model):
            self.model = model

        def evaluate(self, loader):
            self.model.eval()
            return extract_feature(self.model, loader).numpy()

        def vis(self, loader):
            self.model.eval()
            return extract_feature(model, loader).numpy()

    model = torch.nn.Linear(2, 2)
    main = Main(model)
"""


def test_a_caller_that_evaluates_another_spelling_of_the_model_counts(tmp_path):
    # ReID-MGN's ``vis()``: ``self.model.eval()``, then the helper on the global ``model``.
    assert _lint(tmp_path, _VIS) == [5]


def test_a_caller_that_switched_back_to_train_does_not_count(tmp_path):
    main = _VIS.replace(
        "            self.model.eval()\n            return extract_feature(model",
        "            self.model.eval()\n            self.model.train()\n            return extract_feature(model",
    )
    assert _lint(tmp_path, main) == []


def test_a_caller_that_backpropagates_does_not_count(tmp_path):
    main = _VIS.replace(
        "            return extract_feature(model, loader).numpy()",
        "            feats = extract_feature(model, loader).numpy()\n"
        "            self.model(feats).sum().backward()\n            return feats",
    )
    assert _lint(tmp_path, main) == []


def test_call_sites_record_whether_their_scope_evaluates():
    import textwrap

    from memlint.project.summary import CallSite, summarise_text

    summary = summarise_text(textwrap.dedent(_VIS), always=True)
    assert [(c.line, c.eval_scope) for c in summary.calls if c.callee.endswith("extract_feature")] == [
        (10, True),
        (14, True),
    ]
    plain = summarise_text(
        "from utils import extract_feature\ndef run(model, loader):\n    return extract_feature(model, loader)\n",
        always=True,
    )
    assert [c.eval_scope for c in plain.calls] == [False]
    site = summary.calls[0]
    assert CallSite.from_json(dict(site.__dict__)) == site


# video-classification-3d-cnn's ``classify_video``: the helper hands back a
# dict of numbers with the video's name and labels its caller gave it.
_CLASSIFY = """\
    import torch

    def classify_video(model, loader, video_name, class_names):
        outputs = []
        for clips in loader:
            outputs.append(model(clips).cpu().data)
        scores = torch.cat(outputs)
        return {"video": video_name, "label": class_names[scores.argmax().item()]}
"""

_CLASSIFY_MAIN = """\
    import torch
    from classify import classify_video

    if __name__ == "__main__":
        model = build_model()
        model.eval()
        for name in videos:
            print(classify_video(model, make_loader(name), name, class_names))
"""


def _lint_classify(tmp_path: Path, main: str = _CLASSIFY_MAIN, helper: str = _CLASSIFY) -> list[int]:
    write_project(tmp_path, {"setup.py": "", "main.py": main, "classify.py": helper})
    return finding_lines(tmp_path / "classify.py", "MEM201")


def test_a_helper_handing_back_only_what_its_caller_gave_is_reported(tmp_path):
    assert _lint_classify(tmp_path) == [5]


def test_a_helper_handing_back_its_forwards_through_a_given_list_is_silent(tmp_path):
    helper = _CLASSIFY.replace("outputs.append(model(clips).cpu().data)", "class_names.append(model(clips))").replace(
        'return {"video": video_name, "label": class_names[scores.argmax().item()]}',
        'return {"video": video_name, "outputs": class_names}',
    )
    assert _lint_classify(tmp_path, helper=helper) == []


def test_a_helper_handing_back_only_what_its_caller_gave_is_silent_under_no_grad(tmp_path):
    main = _CLASSIFY_MAIN.replace(
        "            print(classify_video(model, make_loader(name), name, class_names))\n",
        "            with torch.no_grad():\n                print(classify_video(model, make_loader(name), name, class_names))\n",
    )
    assert _lint_classify(tmp_path, main) == []
