"""project/engine_hooks.py: the hooks an engine class of the project runs by
name and their place around its optimizer step, and MEM802 reading a hook
function by that place, in the module or from another (ProjectView.engine_hooks)."""

import ast
import json

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.training.engine_hooks import runs_before_step
from memlint.gate.facts import GateFacts
from memlint.gate.sched_steps import keyed_scheduler_step, registers_a_hook
from memlint.project.engine_hooks import HookPlace, engine_hooks
from memlint.project.summary import ModuleSummary, summarise_exports, summarise_text

ENGINE = """\
from tqdm import tqdm


class Engine(object):
    def __init__(self):
        self.hooks = {name: (lambda state: None) for name in ("on_start", "on_end")}

    def train(self, **kwargs):
        state = {"model": kwargs["model"], "loader": kwargs["loader"], "epoch": 0}
        state["optimizer"] = kwargs["optim_method"](state["model"].parameters())
        self.hooks["on_start"](state)
        while state["epoch"] < kwargs["max_epoch"]:
            state["model"].train()
            self.hooks["on_start_epoch"](state)
            for sample in tqdm(state["loader"]):
                self.hooks["on_sample"](state)
                state["optimizer"].zero_grad()
                loss, state["output"] = state["model"].loss(sample)
                loss.backward()
                state["optimizer"].step()
                self.hooks["on_update"](state)
            state["epoch"] += 1
            self.hooks["on_end_epoch"](state)
        self.hooks["on_end"](state)
"""


def _places(text):
    return sorted((h.cls, h.attr, h.key, h.place, h.method) for h in engine_hooks(ast.parse(text)))


def test_each_hook_has_its_place_around_the_optimizer_step():
    assert _places(ENGINE) == [
        ("Engine", "hooks", "on_end_epoch", "epoch_end", "train"),
        ("Engine", "hooks", "on_sample", "iteration_start", "train"),
        ("Engine", "hooks", "on_start_epoch", "epoch_start", "train"),
        ("Engine", "hooks", "on_update", "iteration_end", "train"),
    ]  # on_start and on_end run outside the loop that steps: no place


TORCHNET = """\
class Engine(object):
    def __init__(self):
        self.hooks = {}

    def hook(self, name, state):
        if name in self.hooks:
            self.hooks[name](state)

    def train(self, network, iterator, maxepoch, optimizer):
        state = {"network": network, "optimizer": optimizer, "epoch": 0}
        self.hook("on_start", state)
        while state["epoch"] < maxepoch:
            self.hook("on_start_epoch", state)
            for sample in iterator:
                self.hook("on_sample", state)

                def closure():
                    loss, output = state["network"](sample)
                    loss.backward()
                    self.hook("on_forward", state)
                    return loss

                state["optimizer"].zero_grad()
                state["optimizer"].step(closure)
                self.hook("on_update", state)
            state["epoch"] += 1
            self.hook("on_end_epoch", state)

    def test(self, network, iterator):
        for sample in iterator:
            self.hook("on_sample", sample)
"""


def test_a_dispatcher_method_calls_the_hook_it_is_named():
    # on_forward runs in a closure the step calls: no place; on_sample also
    # runs in ``test``'s loop, which steps nothing: two places, none kept.
    assert _places(TORCHNET) == [
        ("Engine", "hooks", "on_end_epoch", "epoch_end", "train"),
        ("Engine", "hooks", "on_start_epoch", "epoch_start", "train"),
        ("Engine", "hooks", "on_update", "iteration_end", "train"),
    ]


def test_a_hook_beside_the_step_or_after_the_loop_has_no_place():
    text = """\
class Loop:
    def fit(self, loader, optimizer):
        for epoch in range(10):
            for x in loader:
                if x is None:
                    self.hooks["skip"](x)
                else:
                    optimizer.step()
            else:
                self.hooks["done"](epoch)
            if epoch:
                optimizer.step()
            else:
                self.hooks["first"](epoch)
"""
    assert _places(text) == []


def test_summary_keeps_the_hooks_and_reads_them_back():
    summary = summarise_text(ENGINE)
    assert HookPlace("Engine", "hooks", "on_start_epoch", "epoch_start", "train", 14) in summary.engine_hooks
    again = ModuleSummary.from_json(json.loads(json.dumps(summary.to_json())))
    assert again.engine_hooks == summary.engine_hooks
    # A module read only for its exports holds the same hooks.
    assert summarise_exports(ENGINE).engine_hooks == summary.engine_hooks
    gone = summarise_text(ENGINE.replace('self.hooks["on_start_epoch"](state)', "pass")).engine_hooks
    assert [h.key for h in gone] == [h.key for h in summary.engine_hooks if h.key != "on_start_epoch"]
    assert (
        summarise_text("import torch\nclass A:\n    def f(self, x):\n        return self.layers[x](x)\n").engine_hooks
        == []
    )


def _facts(text):
    module = cst.parse_module(text)
    return ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True)), module


SCRIPT = """\
import torch
class Engine:
    def __init__(self):
        self.hooks = {}
    def train(self, model, loader, optimizer):
        for epoch in range(10):
            self.hooks["on_start_epoch"](epoch)
            for x in loader:
                model(x).backward()
                optimizer.step()
engine = Engine()
def on_start_epoch(state):
    scheduler.step()
engine.hooks["on_start_epoch"] = on_start_epoch
"""


def _run(text):
    facts, _module = _facts(text)
    handler = next(
        s for s in facts.wrapper.module.body if isinstance(s, cst.FunctionDef) and s.name.value == "on_start_epoch"
    )
    return runs_before_step(handler, facts)


def test_a_function_registered_once_runs_where_the_engine_runs_its_hook():
    run = _run(SCRIPT)
    assert (run.engine, run.attr, run.key, run.place) == ("engine", "hooks", "on_start_epoch", "epoch_start")
    assert run.where == "line 7"


def test_a_registration_that_is_not_certain_is_unknown():
    # Stored under two names, replaced by another function, or an engine bound twice.
    assert _run(SCRIPT + 'engine.hooks["on_update"] = on_start_epoch\n') is None
    assert _run(SCRIPT + 'engine.hooks["on_start_epoch"] = print\n') is None
    assert _run(SCRIPT + "engine = Engine()\n") is None
    # A class of the same name imported from elsewhere: not this module's.
    assert _run("from torchnet.engine import Engine\n" + SCRIPT.split("engine = Engine()")[1]) is None


def test_gate_sees_keyed_scheduler_steps_and_hook_registrations():
    facts = GateFacts(ast.parse("state['scheduler'].step()\nengine.hooks['on_start'] = f\n"))
    assert keyed_scheduler_step(facts) and registers_a_hook(facts)
    facts = GateFacts(ast.parse("state['optimizer'].step()\nhooks['on_start'] = f\n"))
    assert not keyed_scheduler_step(facts) and not registers_a_hook(facts)


TRAIN = """\
import os
import torch.optim as optim
import torch.optim.lr_scheduler as lr_scheduler

from protonets.engine import Engine


def main(opt, model, loader):
    engine = Engine()

    def on_start(state):
        state["scheduler"] = lr_scheduler.StepLR(state["optimizer"], 20, gamma=0.5)
    engine.hooks["on_start"] = on_start

    def on_start_epoch(state):
        state["scheduler"].step()
    engine.hooks["on_start_epoch"] = on_start_epoch

    def on_end_epoch(hook_state, state):
        state["scheduler"].step()
    engine.hooks["on_end_epoch"] = on_end_epoch

    engine.train(model=model, loader=loader, optim_method=optim.Adam, max_epoch=10)
"""


def test_mem802_reads_the_hooks_of_an_engine_in_another_module(tmp_path, run_memlint):
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['torch'])\n")
    (tmp_path / "protonets").mkdir()
    (tmp_path / "protonets" / "__init__.py").write_text("")
    (tmp_path / "protonets" / "engine.py").write_text(ENGINE)
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "train.py").write_text(TRAIN)
    check = ("check", "--no-cache", "--select", "MEM802", "--output-format", "json")
    for target in (".", "scripts/train.py"):  # the tree, and one file with its project read from disk
        found = json.loads(run_memlint(*check, target).stdout)
        assert [(f["filename"].replace("\\", "/").rsplit("/", 1)[-1], f["location"]["row"]) for f in found] == [
            ("train.py", 16)
        ], found
        assert "protonets/engine.py:14" in found[0]["message"]
    # The engine edited to run the hook after the epoch: silent.
    moved = ENGINE.replace('            self.hooks["on_start_epoch"](state)\n', "").replace(
        '            self.hooks["on_end_epoch"](state)\n',
        '            self.hooks["on_end_epoch"](state)\n            self.hooks["on_start_epoch"](state)\n',
    )
    (tmp_path / "protonets" / "engine.py").write_text(moved)
    assert json.loads(run_memlint(*check, ".").stdout) == []
    # A project pinned to a torch before 1.1 stepped the scheduler first on purpose.
    (tmp_path / "protonets" / "engine.py").write_text(ENGINE)
    (tmp_path / "setup.py").write_text("from setuptools import setup\nsetup(install_requires=['torch==1.0.0'])\n")
    assert json.loads(run_memlint(*check, ".").stdout) == []


def test_the_summary_reads_a_class_with_a_hook_call_only_when_its_walk_met_a_step(monkeypatch):
    # The summary's walk notes the optimizer steps of each module-level class
    # (in its methods, and in parts it does not enter: a decorator, a lambda):
    # engine_hooks no longer walks every class indexing ``self.layers[i](x)``
    # again to look for one.
    from types import SimpleNamespace

    from memlint.project import engine_hooks as hooks_module
    from memlint.project.summary import summarise

    def no_class(node):
        assert not isinstance(node, ast.ClassDef), f"{node.name} walked again"
        return ast.walk(node)

    monkeypatch.setattr(hooks_module, "ast", SimpleNamespace(**{**vars(ast), "walk": no_class}))
    layers = "class Net:\n    def forward(self, x):\n        return self.layers[0](x)\n"
    lambda_step = (
        "class Lazy:\n    def f(self, x):\n        self.h['a'](x)\n        g = lambda: self.optimizer.step()\n"
    )
    tree = ast.parse(ENGINE + layers + lambda_step)
    places = sorted((h.cls, h.key, h.place) for h in summarise(tree).engine_hooks)
    assert places == [
        ("Engine", "on_end_epoch", "epoch_end"),
        ("Engine", "on_sample", "iteration_start"),
        ("Engine", "on_start_epoch", "epoch_start"),
        ("Engine", "on_update", "iteration_end"),
    ]
    monkeypatch.undo()
    assert sorted((h.cls, h.key, h.place) for h in engine_hooks(tree)) == places
