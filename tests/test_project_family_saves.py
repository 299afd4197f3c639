"""MEM701 across a class family (project/family_saves.py): a subclass in
another module loads what its bases' modules save. cszn/KAIR: ModelBase
saves every network entry ``.cpu()`` and the optimizer's state from the
GPU; ModelVRT(ModelPlain(ModelBase)) overrides ``load_network`` with a
path handed in, so no file name ties the load to a writer."""

from __future__ import annotations

import ast
import textwrap

import pytest
from project_helpers import finding_lines, write_project

from memlint.project.checkpoint_files import checkpoint_facts

_BASE = """
    import torch
    class ModelBase:
        def save_network(self, save_dir, network, label):
            state_dict = network.state_dict()
            for key, param in state_dict.items():
                state_dict[key] = param.cpu()
            torch.save(state_dict, "{}/{}.pth".format(save_dir, label))
        def save_optimizer(self, save_dir, optimizer, label):
            torch.save(optimizer.state_dict(), "{}/{}.pth".format(save_dir, label))
"""

_PLAIN = """
    import torch
    from models.model_base import ModelBase
    class ModelPlain(ModelBase):
        def save(self, it):
            self.save_network(self.save_dir, self.netG, "G")
            self.save_optimizer(self.save_dir, self.G_optimizer, "optimizerG")
"""

_VRT = """
    import torch
    from models.model_plain import ModelPlain
    class ModelVRT(ModelPlain):
        def load_network(self, load_path, network):
            state_dict = torch.load(load_path)
            network.load_state_dict(state_dict)
        def load_optimizer(self, load_path, optimizer):
            optimizer.load_state_dict(torch.load(load_path))
    def load_elsewhere(path, network):
        network.load_state_dict(torch.load(path))
"""


def _lines(tmp_path, **changed) -> list[int]:
    files = {
        "pyproject.toml": "",
        # A module that moves a model: the project is not CPU-only (cpu_projects.py would silence MEM701).
        "gpu.py": "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n",
        "models/model_base.py": _BASE,
        "models/model_plain.py": _PLAIN,
        "models/model_vrt.py": _VRT,
    }
    files.update({f"models/{k}.py": v for k, v in changed.items()})
    write_project(tmp_path, files)
    return finding_lines(tmp_path / "models" / "model_vrt.py", "MEM701")


def test_a_subclass_loads_the_models_its_family_saves_on_the_cpu(tmp_path):
    """Before, line 6 was reported too; the optimizer's and a function's loads stay."""
    assert _lines(tmp_path) == [9, 11]


def test_a_family_module_saving_a_model_from_the_gpu_keeps_it(tmp_path):
    gpu = _PLAIN + "        def snapshot(self):\n            torch.save(self.netG.state_dict(), 'last.pth')\n"
    assert _lines(tmp_path, model_plain=gpu) == [6, 9, 11]


def test_a_family_saving_only_optimizers_proves_nothing(tmp_path):
    only_optimizer = (
        "import torch\nclass ModelBase:\n    def save_optimizer(self, optimizer, p):\n"
        "        torch.save(optimizer.state_dict(), p)\n"
    )
    assert _lines(tmp_path, model_base=only_optimizer) == [6, 9, 11]


def test_a_subclass_that_saves_a_gpu_model_itself_keeps_it(tmp_path):
    own = textwrap.dedent(_VRT) + "def keep(net):\n    torch.save(net.state_dict(), 'x.pth')\n"
    assert _lines(tmp_path, model_vrt=own) == [6, 9, 11]


def test_an_unknown_receiver_is_judged_by_every_save(tmp_path):
    generic = _VRT.replace("network.load_state_dict(state_dict)", "obj.load_state_dict(state_dict)").replace(
        "load_path, network)", "load_path, obj)"
    )
    assert _lines(tmp_path, model_vrt=generic) == [6, 9, 11]


@pytest.mark.parametrize(
    ("source", "models"),
    [
        (_BASE, "cpu"),
        ("import torch\ntorch.save(optimizer.state_dict(), 'o.pth')\n", ""),
        ("import torch\ntorch.save({'optimizer': opt.state_dict(), 'epoch': 3}, 'o.pth')\n", ""),
        ("import torch\ntorch.save(net.state_dict(), 'n.pth')\n", "other"),
        (
            "import torch\nnet.cpu()\ntorch.save({'model': net.state_dict(), 'opt': opt.state_dict()}, 'a.pth')\n",
            "other",
        ),
        ("import torch\ntorch.save(net.cpu().state_dict(), f='n.pth')\n", "cpu"),
    ],
)
def test_what_the_saves_of_model_state_write(source, models):
    assert checkpoint_facts(ast.parse(textwrap.dedent(source)), {"torch": "torch"})[3] == models


def test_the_cli_on_the_tree_sees_the_same_family(tmp_path):
    from memlint.run.runner import Settings, run

    expected = _lines(tmp_path)
    files = sorted(str(p) for p in (tmp_path / "models").glob("*.py"))
    reports = run(files, Settings(select=("MEM701",)), jobs=1)
    found = {(r.path, f.line) for r in reports for f in r.findings}
    assert sorted(line for path, line in found if path.endswith("model_vrt.py")) == expected


def test_a_base_imported_relatively_is_the_same_family(tmp_path):
    """Attention-Gated-Networks: ``from .base_model import BaseModel`` in a
    package; before, the relative spelling of the base never matched."""
    relative_plain = _PLAIN.replace("from models.model_base import", "from .model_base import")
    relative_vrt = _VRT.replace("from models.model_plain import", "from .model_plain import")
    files = {
        "pyproject.toml": "",
        # A module that moves a model: the project is not CPU-only (cpu_projects.py would silence MEM701).
        "gpu.py": "import torch\n\n\ndef to_gpu(model):\n    return model.cuda()\n",
        "models/__init__.py": "",
        "models/model_base.py": _BASE,
        "models/model_plain.py": relative_plain,
        "models/model_vrt.py": relative_vrt,
    }
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "models" / "model_vrt.py", "MEM701") == [9, 11]
    # A family saving a model from the GPU keeps the load, relative import or not.
    gpu = relative_plain + "        def snapshot(self):\n            torch.save(self.netG.state_dict(), 'last.pth')\n"
    write_project(tmp_path, {**files, "models/model_plain.py": gpu})
    assert finding_lines(tmp_path / "models" / "model_vrt.py", "MEM701") == [6, 9, 11]


def test_relative_bindings_spell_as_the_summary():
    import libcst as cst

    from memlint.analysis.scope.relative_imports import relative_bindings

    module = cst.parse_module("from .base_model import BaseModel\nfrom .. import nets as n\nfrom a import b\n")
    assert relative_bindings(module) == {"BaseModel": ".base_model.BaseModel", "n": "..nets"}
