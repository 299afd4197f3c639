"""Training steps split across methods (issue 29, point 3): a Trainer whose
``fit()`` loop steps and whose ``train_step()`` clears and backpropagates
(MEM301, MEM303), and a GAN whose optimizer is built in ``__init__`` and whose
second loss is unpacked from the discriminator's outputs (MEM404). Each on a
small project checked as a tree, one file, and through flake8."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
import pytest


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def _cli(*args: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(
        (Path(f["filename"]).name, f["location"]["row"], f["code"], f["message"]) for f in json.loads(out or "[]")
    )


def _flake8(select: str, cwd: Path) -> list[tuple[str, int, str, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", select, "--format", "%(path)s\t%(row)d\t%(code)s\t%(text)s", "."],
        cwd=cwd,
        capture_output=True,
        text=True,
    ).stdout
    rows = [line.split("\t") for line in out.splitlines()]
    return sorted((Path(p).name, int(r), c, m) for p, r, c, m in rows)


_MAIN = """\
    from trainer import Trainer

    Trainer(model=None, loader=[], accum=4).fit()
    """

_ACCUMULATION = {
    "trainer.py": """\
        import torch
        import torch.nn.functional as F


        class Trainer:
            def __init__(self, model, loader, accum):
                self.model = model
                self.loader = loader
                self.accum = accum
                self.optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

            def train_step(self, x, y):
                self.optimizer.zero_grad()
                loss = F.cross_entropy(self.model(x), y) / self.accum
                loss.backward()
                return loss.item()

            def fit(self):
                for i, (x, y) in enumerate(self.loader):
                    self.train_step(x, y)
                    if (i + 1) % self.accum == 0:
                        self.optimizer.step()
        """,
    "main.py": _MAIN,
}
_MEM301 = (
    "zero_grad() runs every iteration but step() only every N: the accumulated gradients are discarded"
    " (zero_grad() in `train_step`, called at line 20; step() at line 22)"
)


@pytest.mark.parametrize("target", [".", "trainer.py"])
def test_a_clear_in_the_step_helper_discards_the_accumulation(tmp_path, target):
    """``fit()`` steps every ``accum`` iterations; the ``train_step()`` it
    calls every iteration clears the gradients first: N-1 micro-batches lost."""
    _write(tmp_path, _ACCUMULATION)
    expected = [("trainer.py", 13, "MEM301", _MEM301)]
    assert [f for f in _cli(target, cwd=tmp_path) if f[2].startswith("MEM3")] == expected
    assert [f for f in _flake8("MEM3", tmp_path)] == expected


def test_a_clear_in_the_guarded_helper_is_accumulation_done_right(tmp_path):
    trainer = textwrap.dedent(_ACCUMULATION["trainer.py"])
    trainer = trainer.replace("        self.optimizer.zero_grad()\n        loss", "        loss")
    trainer = trainer.replace(
        "                self.optimizer.step()\n",
        "                self.update()\n\n    def update(self):\n        self.optimizer.step()\n"
        "        self.optimizer.zero_grad()\n",
    )
    assert "def update(self)" in trainer and trainer.count("zero_grad") == 1
    _write(tmp_path, {"trainer.py": trainer, "main.py": _MAIN})
    assert [f for f in _cli(".", cwd=tmp_path) if f[2].startswith("MEM3")] == []


_CLEAR_BEFORE_STEP = {
    "trainer.py": """\
        import torch
        import torch.nn.functional as F


        class Trainer:
            def __init__(self, model, loader, accum):
                self.model = model
                self.loader = loader
                self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

            def train_step(self, x, y):
                loss = F.cross_entropy(self.model(x), y)
                loss.backward()
                return loss.item()

            def fit(self):
                for x, y in self.loader:
                    self.train_step(x, y)
                    self.optimizer.zero_grad()
                    self.optimizer.step()
        """,
    "main.py": _MAIN,
}
_MEM303 = (
    "zero_grad() between backward() and step(): the step sees no gradients"
    " (backward() in `train_step`, called at line 18; zero_grad() at line 19; step() at line 20)"
)


def test_a_clear_between_the_helpers_backward_and_the_step(tmp_path):
    _write(tmp_path, _CLEAR_BEFORE_STEP)
    expected = [("trainer.py", 19, "MEM303", _MEM303)]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2].startswith("MEM3")] == expected
    assert _flake8("MEM3", tmp_path) == expected
    # No fix across functions: --fix leaves the file as it is.
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--select", "MEM303", "--unsafe-fixes", "--diff", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    ).stdout
    assert "@@" not in out


_INFOGAN = {
    "infogan.py": """\
        import itertools

        import torch
        import torch.nn.functional as F


        class InfoGAN:
            def __init__(self, G, D, loader):
                self.G, self.D, self.loader = G, D, loader
                self.G_optimizer = torch.optim.Adam(self.G.parameters(), lr=2e-4)
                self.info_optimizer = torch.optim.Adam(itertools.chain(self.G.parameters(), self.D.parameters()))

            def train(self):
                for z, code in self.loader:
                    self.G_optimizer.zero_grad()
                    self.info_optimizer.zero_grad()
                    G_ = self.G(z, code)
                    D_fake, D_code = self.D(G_)
                    G_loss = F.binary_cross_entropy(D_fake, torch.ones_like(D_fake))
                    G_loss.backward(retain_graph=True)
                    self.G_optimizer.step()
                    info_loss = F.mse_loss(D_code, code)
                    info_loss.backward()
                    self.info_optimizer.step()
        """,
    "main.py": """\
        from infogan import InfoGAN

        InfoGAN(G=None, D=None, loader=[]).train()
        """,
}
_MEM404 = (
    "`self.G_optimizer.step()` updates the weights of `self.G` in place, but `info_loss.backward()` later"
    " backpropagates through a graph built with them before the step: a RuntimeError (modified by an inplace"
    " operation) since torch 1.5"
)


def test_a_step_between_a_backward_and_a_loss_unpacked_from_the_same_forward(tmp_path):
    """znxlwm's infoGAN: the information loss reads ``D_code``, unpacked from
    the discriminator's pass over ``G_`` built before ``G_optimizer.step()``
    (an optimizer of ``__init__``): the backward after the step fails."""
    _write(tmp_path, _INFOGAN)
    expected = [("infogan.py", 21, "MEM404", _MEM404)]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM404"] == expected
    assert _flake8("MEM404", tmp_path) == expected


def test_a_loss_unpacked_from_a_forward_after_the_step_is_fresh(tmp_path):
    text = textwrap.dedent(_INFOGAN["infogan.py"]).replace(
        "            info_loss = F.mse_loss(D_code, code)\n",
        "            _, D_code = self.D(self.G(z, code))\n            info_loss = F.mse_loss(D_code, code)\n",
    )
    assert "_, D_code" in text
    _write(tmp_path, dict(_INFOGAN, **{"infogan.py": text}))
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM404"] == []


# -- the facts underneath ---------------------------------------------------------


def _verbs(source: str):
    from memlint.analysis.facts import ModuleFacts

    wrapper = cst.MetadataWrapper(cst.parse_module(textwrap.dedent(source)))
    return wrapper.module, ModuleFacts(wrapper).verbs


def test_inlined_reads_a_straight_line_helper_at_its_call():
    from memlint.analysis.training.inlined_verbs import inlined

    module, verbs = _verbs(_CLEAR_BEFORE_STEP["trainer.py"])
    loop = next(v.loop for v in verbs.verbs if v.loop is not None)
    flat = inlined(verbs, loop)
    assert [v.kind.value for v in flat] == ["backward", "zero_grad", "step"]
    assert [v.index for v in flat] == [0, 1, 2]
    assert flat[0].via is not None and module.code_for_node(flat[0].via.call) == "self.train_step(x, y)"
    assert flat[1].via is None


@pytest.mark.parametrize(
    "helper",
    [
        "    def train_step(self, x, y):\n        for _ in range(2):\n            self.model(x).sum().backward()\n",
        "    def train_step(self, x, y):\n        if x is None:\n            return\n        self.model(x).sum().backward()\n",
    ],
    ids=["a-loop-of-its-own", "an-early-return"],
)
def test_inlined_keeps_the_call_of_a_helper_that_may_not_run_each_verb_once(helper):
    from memlint.analysis.training.inlined_verbs import inlined

    source = (
        "class Trainer:\n"
        + helper
        + "    def fit(self):\n        for x, y in self.loader:\n            self.train_step(x, y)\n"
        + "            self.optimizer.step()\n"
    )
    _module, verbs = _verbs(source)
    loop = next(v.loop for v in verbs.verbs if v.kind.value == "step")
    assert [v.kind.value for v in inlined(verbs, loop)] == ["call", "step"]


def test_bindings_know_the_call_a_name_is_unpacked_from():
    from memlint.analysis.facts import ModuleFacts

    wrapper = cst.MetadataWrapper(
        cst.parse_module("def f(D, x):\n    a, (b, c) = D(x)\n    d, e = 1, 2\n    return a\n")
    )
    module = wrapper.module
    fn = module.body[0]
    bindings = ModuleFacts(wrapper).bindings
    assert [module.code_for_node(c) for c in bindings.unpacked_in("a", fn)] == ["D(x)"]
    assert bindings.unpacked_in("b", fn) == []  # nested: which part is unknown
    assert bindings.unpacked_in("d", fn) == []  # a tuple of values, not a call
    assert bindings.values("a", fn) == [None]


# -- MEM304: the loop's step is another module's helper -------------------------

_STEP_HELPER = {
    "utils.py": """\
        import torch


        def optimizer_step(optimizer, scaler, model):
            \"\"\"Unscale, clip, step.\"\"\"
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()


        def step_and_clear(optimizer):
            optimizer.step()
            optimizer.zero_grad()


        def maybe_step(optimizer, i):
            if i % 2 == 0:
                optimizer.step()
        """,
    "train.py": """\
        import torch
        import utils
        from utils import maybe_step, step_and_clear


        def train(model, loader):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda"):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                scaler.scale(loss).backward()
                utils.optimizer_step(optimizer, scaler, model)


        def train_clearing(model, loader):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            for x, y in loader:
                torch.nn.functional.cross_entropy(model(x), y).backward()
                step_and_clear(optimizer)


        def train_branching(model, loader):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            for i, (x, y) in enumerate(loader):
                torch.nn.functional.cross_entropy(model(x), y).backward()
                maybe_step(optimizer, i)


        def train_handing(model, loader, hooks):
            optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                hooks.before_batch(optimizer)
                scaler.scale(torch.nn.functional.cross_entropy(model(x), y)).backward()
                utils.optimizer_step(optimizer, scaler, model)
        """,
}
_MEM304 = (
    "backward() and step() run every iteration but the gradients are never cleared: they accumulate across steps"
    " (`utils.optimizer_step` steps `optimizer`, utils.py:8)"
)


@pytest.mark.parametrize("target", [".", "train.py"])
def test_a_step_helper_of_another_module_is_the_loops_step(tmp_path, target):
    """train.py backpropagates and calls utils.optimizer_step, which only
    unscales, clips and steps: nothing clears the gradients. Helpers that
    clear or step on some paths only, and a loop that hands the optimizer to
    another call, stay silent."""
    _write(tmp_path, _STEP_HELPER)
    expected = [("train.py", 13, "MEM304", _MEM304)]
    assert [f for f in _cli(target, cwd=tmp_path) if f[2].startswith("MEM")] == expected
    assert _flake8("MEM", tmp_path) == expected


def test_summaries_and_views_carry_step_helpers(tmp_path):
    from memlint.project.index import view_from_disk
    from memlint.project.summary import ModuleSummary, summarise_text

    summary = summarise_text(textwrap.dedent(_STEP_HELPER["utils.py"]))
    assert summary is not None
    assert [(f.name, f.stepped, f.step_line) for f in summary.functions] == [
        ("maybe_step", (), 0),
        ("optimizer_step", ("optimizer",), 8),
        ("step_and_clear", (), 0),
    ]
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
    _write(tmp_path, _STEP_HELPER)
    view = view_from_disk(str(tmp_path / "train.py"))
    assert view is not None
    assert view.step_helpers == (
        ("utils.optimizer_step", ("optimizer",), ("optimizer", "scaler", "model"), "utils.py:8"),
    )


# -- MEM202: where another module calls the method ------------------------------


def test_mem202_names_where_another_module_calls_the_method(tmp_path):
    """StarGAN: ``Solver.test`` evaluates ``self.G`` in training mode and is
    entered from main.py (``solver = Solver(...); solver.test()``): the
    message says where, alike for the CLI, flake8 and the language server's
    index."""
    from test_project_steps import _MEM202, _STARGAN

    from memlint.project.index import view_from_disk
    from memlint.project.live import Workspace

    files = dict(_STARGAN)
    files["main.py"] = (
        "import solver as solvers\nfrom solver import Solver\n\nsolver = Solver(loader=[])\nsolver.test()\n"
    )
    files["other.py"] = "from solver import Solver\n\ns = Solver(loader=[])\ns = 3\ns.test()\n"
    _write(tmp_path, files)
    expected = [("solver.py", 21, "MEM202", _MEM202 + " (`test` is called from main.py:5)")]
    assert [f for f in _cli(".", cwd=tmp_path) if f[2] == "MEM202"] == expected
    assert [f for f in _cli("solver.py", cwd=tmp_path) if f[2] == "MEM202"] == expected
    assert _flake8("MEM202", tmp_path) == expected
    view = view_from_disk(str(tmp_path / "solver.py"))
    assert view is not None and view.method_callers == (("Solver.test", ("main.py:5",)),)
    assert Workspace().view(str(tmp_path / "solver.py")) == view


def test_summaries_carry_method_calls_on_instances_of_imported_classes():
    from memlint.project.summary import ModuleSummary, summarise_text

    text = textwrap.dedent(
        """\
        import torch
        import solver as solvers
        from solver import Solver
        from collections import OrderedDict


        def main(loader):
            a = Solver(loader)
            b = solvers.Solver(loader)
            c = OrderedDict()
            d = Solver(loader)
            d = None
            a.test()
            b.train(1)
            c.update()
            d.test()
        """
    )
    summary = summarise_text(text)
    assert summary is not None
    assert summary.method_calls == [("solver.Solver.test", 13), ("solver.Solver.train", 14)]
    assert ModuleSummary.from_json(json.loads(json.dumps(summary.to_json()))) == summary
