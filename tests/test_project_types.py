"""Types from call sites (issue 29): a parameter typed by every call site, an
attribute set from a constructor argument, a factory's return; MEM201 through
a project object's method, MEM802 through a scheduler built by a project
function. Each fixture is a small multi-module project."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from memlint.project.index import build_index, view_from_disk
from memlint.project.summary import ModuleSummary, summarise_text


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _lint(path: Path, select: str, project: bool = True):
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    rules = [r for r in all_rules() if r.code == select]
    view = (lambda: view_from_disk(str(path))) if project else None
    return [(f.line, f.code, f.message) for f in lint_text(path.read_text(), str(path), rules, project=view)]


# -- MEM201: an RL agent evaluated through its select_action ---------------------

_AGENTS = """\
    import torch
    import torch.nn as nn


    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.l1 = nn.Linear(3, 1)

        def forward(self, x):
            return self.l1(x)


    class TD3:
        def __init__(self):
            self.actor = Actor().to("cuda")

        def select_action(self, state):
            state = torch.FloatTensor(state)
            return self.actor(state).cpu().data.numpy()


    class Careful:
        def __init__(self):
            self.actor = Actor()

        def select_action(self, state):
            with torch.no_grad():
                return self.actor(torch.FloatTensor(state)).numpy()
    """

_MAIN = """\
    import numpy as np
    import torch

    import agents


    def eval_policy(policy, env, episodes=10):
        total = 0.0
        for _ in range(episodes):
            state, done = env.reset(), False
            while not done:
                action = policy.select_action(np.array(state))
                state, reward, done = env.step(action)
                total += reward
        return total / episodes


    if __name__ == "__main__":
        policy = agents.{cls}()
        evaluations = [eval_policy(policy, None)]
        for t in range(100):
            evaluations.append(eval_policy(policy, None))
    """


def test_a_parameter_typed_by_every_call_site_runs_its_forward_with_grad_on(tmp_path):
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": _MAIN.replace("{cls}", "TD3")})
    found = _lint(tmp_path / "main.py", "MEM201")
    assert [(line, code) for line, code, _ in found] == [(9, "MEM201")]
    assert "`policy.select_action`: TD3.select_action runs the actor with autograd on, agents.py:20" in found[0][2]
    assert _lint(tmp_path / "main.py", "MEM201", project=False) == []  # the file alone cannot tell


def test_a_method_that_wraps_its_forward_in_no_grad_is_silent(tmp_path):
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": _MAIN.replace("{cls}", "Careful")})
    assert _lint(tmp_path / "main.py", "MEM201") == []


def test_a_caller_passing_two_classes_one_under_no_grad_is_silent(tmp_path):
    main = _MAIN.replace("{cls}", "TD3").replace(
        "        evaluations = [eval_policy(policy, None)]\n",
        "        evaluations = [eval_policy(policy, None), eval_policy(agents.Careful(), None)]\n",
    )
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": main})
    assert _lint(tmp_path / "main.py", "MEM201") == []


def test_an_untyped_call_site_elsewhere_keeps_it_silent(tmp_path):
    _write(
        tmp_path,
        {
            "agents.py": _AGENTS,
            "main.py": _MAIN.replace("{cls}", "TD3"),
            "other.py": "import torch\nfrom main import eval_policy\n\n\ndef run(p):\n    return eval_policy(p, None)\n",
        },
    )
    assert _lint(tmp_path / "main.py", "MEM201") == []


def test_a_function_handed_out_as_a_value_is_silent(tmp_path):
    main = _MAIN.replace("{cls}", "TD3") + "        callbacks = [eval_policy]\n"
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": main})
    assert _lint(tmp_path / "main.py", "MEM201") == []


def test_the_same_object_acting_in_training_is_not_an_evaluation(tmp_path):
    """The module-level loop calls ``policy.select_action`` too, but it is
    not named for evaluation and asks for none: silent there."""
    main = _MAIN.replace("{cls}", "TD3").replace(
        "            evaluations.append(eval_policy(policy, None))\n",
        "            action = policy.select_action(np.zeros(3))\n",
    )
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": main})
    assert [line for line, _code, _ in _lint(tmp_path / "main.py", "MEM201")] == [9]


# -- MEM201: a factory choosing among classes, a version-guarded no_grad ----------

_MODELS = {
    "models/__init__.py": "",
    "models/networks.py": """\
        import torch.nn as nn


        def define_G():
            return nn.Conv2d(3, 3, 1)
        """,
    "models/base.py": """\
        import torch


        class BaseModel(torch.nn.Module):
            def name(self):
                return "base"
        """,
    "models/gan.py": """\
        import torch

        from . import networks
        from .base import BaseModel


        class GanModel(BaseModel):
            def initialize(self):
                self.netG = networks.define_G()

            def inference(self, label):
                if torch.__version__.startswith("0.4"):
                    with torch.no_grad():
                        fake = self.netG.forward(label)
                else:
                    fake = self.netG.forward(label)
                return fake


        class InferenceModel(GanModel):
            def forward(self, inp):
                return self.inference(inp)
        """,
    "models/ui.py": """\
        from .base import BaseModel


        class UIModel(BaseModel):
            def reset(self):
                pass
        """,
    "models/models.py": """\
        import torch


        def create_model(opt):
            if opt.model == "gan":
                from .gan import GanModel, InferenceModel

                if opt.isTrain:
                    model = GanModel()
                else:
                    model = InferenceModel()
            else:
                from .ui import UIModel

                model = UIModel()
            model.initialize()
            if opt.isTrain:
                model = torch.nn.DataParallel(model)
            return model
        """,
    "test.py": """\
        import torch

        from models.models import create_model

        opt = None
        model = create_model(opt)
        for i, data in enumerate(dataset):
            generated = model.inference(data["label"])
            save(generated)
        """,
}


def test_a_factory_returning_one_of_several_classes_types_its_result(tmp_path):
    _write(tmp_path, _MODELS)
    found = _lint(tmp_path / "test.py", "MEM201")
    assert [(line, code) for line, code, _ in found] == [(7, "MEM201")]
    assert "GanModel.inference runs the netG with autograd on, models/gan.py:16" in found[0][2]
    index = build_index(str(tmp_path))
    assert index is not None
    view = index.view_for(str(tmp_path / "test.py"))
    assert view.forward_through("", "model", "inference") is not None
    assert view.types_of("", "model") is None  # the view keeps types for a .step() receiver only
    types = index.typed_objects().receiver_types(str(tmp_path / "test.py"), "", "model")
    assert [t.split("\0")[1] for t in types or ()] == ["GanModel", "InferenceModel", "UIModel"]


def test_a_forward_under_an_unguarded_no_grad_is_silent(tmp_path):
    files = dict(_MODELS)
    files["models/gan.py"] = files["models/gan.py"].replace(
        'if torch.__version__.startswith("0.4"):', "if label.is_cuda:"
    )
    _write(tmp_path, files)
    assert _lint(tmp_path / "test.py", "MEM201") == []


# -- MEM802: self.scheduler from a constructor argument, built by a project function


_TRAINER = {
    "lr_schedulers.py": """\
        from torch.optim.lr_scheduler import LambdaLR


        def get_linear_schedule_with_warmup(optimizer, warmup):
            def lr_lambda(step):
                return min(1.0, step / warmup)

            return LambdaLR(optimizer, lr_lambda)


        class HomeMade:
            def __init__(self, optimizer):
                self.optimizer = optimizer

            def step(self):
                pass
        """,
    "trainer.py": """\
        import torch


        class Trainer:
            def __init__(self, model, optimizer, scheduler):
                self.model = model
                self.optimizer = optimizer
                self.scheduler = scheduler

            def train_epoch(self, loader):
                for step, (x, y) in enumerate(loader):
                    loss = self.model(x).sum()
                    loss.backward()
                    if (step + 1) % 2 == 0:
                        self.scheduler.step()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
        """,
    "run.py": """\
        import torch

        from lr_schedulers import get_linear_schedule_with_warmup
        from trainer import Trainer


        def main(model):
            optimizer = torch.optim.AdamW(model.parameters())
            scheduler = get_linear_schedule_with_warmup(optimizer, warmup=10)
            trainer = Trainer(model=model, optimizer=optimizer, scheduler=scheduler)
            trainer.train_epoch([])
        """,
}


def test_an_attribute_from_a_constructor_argument_built_by_a_project_factory(tmp_path):
    _write(tmp_path, _TRAINER)
    found = _lint(tmp_path / "trainer.py", "MEM802")
    assert [(line, code) for line, code, _ in found] == [(15, "MEM802")]
    assert _lint(tmp_path / "trainer.py", "MEM802", project=False) == []


def test_a_home_made_scheduler_class_stays_silent(tmp_path):
    files = dict(_TRAINER)
    files["run.py"] = (
        files["run.py"]
        .replace(
            "from lr_schedulers import get_linear_schedule_with_warmup",
            "from lr_schedulers import HomeMade",
        )
        .replace("get_linear_schedule_with_warmup(optimizer, warmup=10)", "HomeMade(optimizer)")
    )
    _write(tmp_path, files)
    assert _lint(tmp_path / "trainer.py", "MEM802") == []


# -- the facts themselves -------------------------------------------------------


def test_the_object_facts_survive_json():
    summary = summarise_text(textwrap.dedent(_AGENTS) + textwrap.dedent(_MAIN.replace("{cls}", "TD3")))
    assert summary is not None and summary.objects is not None
    objects = summary.objects
    assert ("TD3.select_action", "actor", 20, ":Actor", "") in objects.forwards
    assert not any(m == "Careful.select_action" for m, *_ in objects.forwards)
    assert ("eval_policy", "policy", "select_action") in objects.receivers
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary


@pytest.mark.parametrize("gate", ["1", "0"])
def test_the_gate_changes_nothing(gate, tmp_path, monkeypatch):
    import memlint.lint.screen as screen

    monkeypatch.setattr(screen, "GATE", gate == "1")
    _write(tmp_path, {"agents.py": _AGENTS, "main.py": _MAIN.replace("{cls}", "TD3")})
    assert [line for line, _c, _m in _lint(tmp_path / "main.py", "MEM201")] == [9]


# -- caching: the typed module is linted again when a fact it read changed -------

_EVALUATE = """\
    import numpy as np
    import torch


    def eval_policy(policy, env, episodes=10):
        total = 0.0
        for _ in range(episodes):
            state, done = env.reset(), False
            while not done:
                state, reward, done = env.step(policy.select_action(np.array(state)))
                total += reward
        return total / episodes
    """

_RUN = """\
    import torch

    import agents
    from evaluate import eval_policy

    policy = agents.TD3()
    print(eval_policy(policy, None))
    """


def test_editing_the_class_or_the_caller_relints_the_typed_module(tmp_path, monkeypatch):
    import os

    import memlint.run.runner as runner
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    project = tmp_path / "proj"
    _write(
        project,
        {
            "agents.py": _AGENTS,
            "evaluate.py": _EVALUATE,
            "run.py": _RUN,
            "unrelated.py": "import torch\n\n\ndef f(x):\n    return x\n",
        },
    )
    files = sorted(str(p) for p in project.glob("*.py"))
    cache = FindingsCache(str(tmp_path / "cache"), fingerprint="test")
    settings = Settings(root=str(project), select=("MEM201",))
    linted: list[str] = []
    real = runner._store

    def counting(report, *args):  # every lint's report, whether a worker or the second pass made it
        if not report.deferred:
            linted.append(os.path.basename(report.path))
        return real(report, *args)

    monkeypatch.setattr(runner, "_store", counting)

    def check():
        linted.clear()
        reports = runner.run(files, settings, jobs=1, cache=cache)
        return sorted((os.path.basename(r.path), f.line, f.code) for r in reports for f in r.findings)

    assert check() == [("evaluate.py", 7, "MEM201")]
    assert check() == [("evaluate.py", 7, "MEM201")] and linted == []
    agents = project / "agents.py"
    agents.write_text(
        agents.read_text().replace("return self.actor(state).cpu()", "return self.actor(state).detach().cpu()")
    )
    assert check() == [("evaluate.py", 7, "MEM201")]  # still a forward with grad on
    assert "unrelated.py" not in linted
    run = project / "run.py"
    run.write_text(run.read_text().replace("policy = agents.TD3()", "policy = agents.Careful()"))
    assert check() == []  # the caller now passes a class that runs it under no_grad
    assert "evaluate.py" in linted and "unrelated.py" not in linted
