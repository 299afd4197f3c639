"""``model.apply(fn)`` with a function of another module that switches no
mode (project/applied_functions.py), and a parameter called in a module with
a star import (a model run, not the star import's function): neither is an
unknown mode switch before an evaluation loop (MEM201)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from memlint.project.index import view_from_disk
from memlint.project.summary import summarise_text

MODELS = """\
import torch.nn as nn

class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        return self.fc(x)
"""

UTILS = """\
import torch
import torch.nn as nn
from models import *

def weights_init(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)

def penalty(netD, x):
    x.requires_grad_(True)
    out = netD(x)
    g = torch.autograd.grad(out.sum(), x, create_graph=True)[0]
    return ((g.norm(2, dim=1) - 1) ** 2).mean()
"""

TRAIN = """\
import torch
from models import *
from utils import *

def train(loader, val_loader, steps):
    critic = Critic().cuda()
    critic.apply(weights_init)
    opt = torch.optim.Adam(critic.parameters())
    for it in range(steps):
        for x in loader:
            opt.zero_grad()
            loss = critic(x).mean() + penalty(critic, x)
            loss.backward()
            opt.step()
        costs = []
        for _, images in enumerate(val_loader):
            with torch.no_grad():
                imgs = images.cuda()
            out = critic(imgs)
            costs.append(-out.mean().cpu().data.numpy())
"""


def _project(tmp_path: Path, utils: str = UTILS, train: str = TRAIN) -> Path:
    for name, text in {"setup.cfg": "", "models.py": MODELS, "utils.py": utils, "train.py": train}.items():
        (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path / "train.py"


def _codes(path: Path) -> list[tuple[str, int]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    return [(f.code, f.line) for f in found]


def test_a_parameter_called_under_a_star_import_is_a_model_run():
    facts = {f.name: f for f in summarise_text(UTILS).functions}
    assert not facts["penalty"].opaque
    assert not any(c.callee == "*netD" for c in summarise_text(UTILS).calls)


def test_the_summary_keeps_the_functions_handed_to_apply():
    assert summarise_text(TRAIN).applied == ["*weights_init"]
    explicit = TRAIN.replace("from utils import *", "from utils import weights_init as init_fn, penalty")
    assert summarise_text(explicit.replace("apply(weights_init)", "apply(init_fn)")).applied == ["utils.weights_init"]


def test_the_view_names_applied_functions_that_switch_no_mode(tmp_path):
    assert view_from_disk(str(_project(tmp_path))).quiet_applied == ("weights_init",)


def test_an_applied_function_that_switches_a_mode_is_not_quiet(tmp_path):
    utils = UTILS.replace("        nn.init.xavier_uniform_(m.weight)", "        m.eval()")
    path = _project(tmp_path, utils=utils)
    assert view_from_disk(str(path)).quiet_applied == ()
    assert ("MEM201", 16) not in _codes(path)


def test_an_evaluation_loop_after_a_quiet_apply_is_reported(tmp_path):
    assert ("MEM201", 16) in _codes(_project(tmp_path))


def test_a_local_binding_of_the_name_is_not_the_imported_function(tmp_path):
    train = TRAIN.replace("    critic.apply(weights_init)", "    weights_init = pick()\n    critic.apply(weights_init)")
    assert ("MEM201", 17) not in _codes(_project(tmp_path, train=train))


HOOKED = """\
import torch.nn as nn

def features(model, x, modules):
    outs = []
    handles = [m.register_forward_hook(lambda m, i, o: outs.append(o.data.cpu())) for m in modules]
    model.eval()
    model(x)
    for h in handles:
        h.remove()
    return outs
"""


def _single(text: str) -> list[tuple[str, int]]:
    from memlint.lint.engine import lint_text
    from memlint.rule.registry import all_rules

    return [(f.code, f.line) for f in lint_text(text, "m.py", [r for r in all_rules() if r.code == "MEM201"])]


def test_a_hooked_forward_run_once_is_a_summary_pass_but_not_per_batch():
    once = HOOKED + "\ndef main(model, x, modules):\n    print(features(model, x, modules))\n"
    assert _single(once) == []
    looped = (
        HOOKED + "\ndef extract(model, loader, modules):\n    for x in loader:\n        features(model, x, modules)\n"
    )
    assert ("MEM201", 7) in _single(looped)
