"""MEM701 reads how the project writes the checkpoint a module loads: a
script beside it that saves the file from CPU state (``net.cpu()`` before
``state = net.state_dict()``) makes the load copy nothing to a GPU (issue 29,
the fifth batch's BiSeNet ``old/evaluate.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from memlint.project.summary import summarise_text

_TRAIN = """
    import os.path as osp
    import torch
    def train(net, loader, optim, respth):
        net.cuda()
        for x, y in loader:
            loss = net(x).sum()
            optim.zero_grad()
            loss.backward()
            optim.step()
        save_pth = osp.join(respth, "model_final.pth")
        net.cpu()
        state = net.module.state_dict() if hasattr(net, "module") else net.state_dict()
        torch.save(state, save_pth)
"""

_EVALUATE = """
    import os.path as osp
    import torch
    from model import Net
    def evaluate(respth="./res"):
        net = Net()
        net.cuda()
        save_pth = osp.join(respth, "model_final.pth")
        net.load_state_dict(torch.load(save_pth))
        net.eval()
"""

_GPU_SAVE = """
    import torch
    def finetune(net, respth):
        net.cuda()
        torch.save(net.state_dict(), respth + "/model_final.pth")
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _mem701(cwd: Path, *paths: str) -> list[tuple[str, int]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM701", *paths],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(
        (Path(f["filename"]).resolve().relative_to(cwd.resolve()).as_posix(), f["location"]["row"])
        for f in json.loads(out or "[]")
    )


def test_summary_names_the_files_saved_from_cpu_and_loaded():
    train = summarise_text(textwrap.dedent(_TRAIN))
    assert train is not None and train.cpu_saved == ["model_final.pth"] and train.other_saved == []
    gpu = summarise_text(textwrap.dedent(_GPU_SAVE))
    assert gpu is not None and gpu.cpu_saved == [] and gpu.other_saved == ["model_final.pth"]
    evaluate = summarise_text(textwrap.dedent(_EVALUATE))
    assert evaluate is not None and evaluate.loaded_files == ["model_final.pth"]


def test_a_load_of_a_file_its_folder_saves_from_cpu_state_is_silent(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model.py": "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n",
            "train.py": _TRAIN,
            "evaluate.py": _EVALUATE,
            # Another folder writing the same name writes another file.
            "other/finetune.py": _GPU_SAVE,
        },
    )
    assert _mem701(tmp_path, ".") == []
    assert _mem701(tmp_path, "evaluate.py") == []


def test_a_gpu_save_of_the_same_file_beside_it_keeps_the_finding(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model.py": "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n",
            "train.py": _TRAIN,
            "evaluate.py": _EVALUATE,
            "finetune.py": _GPU_SAVE,
        },
    )
    assert _mem701(tmp_path, ".") == [("evaluate.py", 9)]


def test_a_save_without_a_cpu_move_keeps_the_finding(tmp_path):
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model.py": "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n",
            "train.py": _TRAIN.replace("        net.cpu()\n", ""),
            "evaluate.py": _EVALUATE,
        },
    )
    assert _mem701(tmp_path, ".") == [("evaluate.py", 9)]


def test_a_module_that_starts_saving_the_loaded_file_from_the_gpu_is_seen_by_a_cached_view(tmp_path, monkeypatch):
    """The cached view of evaluate.py read only the modules spelling its
    checkpoint's name; finetune.py, which spelled nothing of it, starts
    writing that file from a GPU state: the view is built again (states.py
    counts a loaded file's words among the module's names), not reused."""
    import os

    import memlint.run.runner as runner
    import memlint.run.warm_index as warm_index
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    monkeypatch.setattr(warm_index, "RACY_NS", 0)
    _write(
        tmp_path,
        {
            "train.py": _TRAIN,
            "evaluate.py": _EVALUATE,
            "model.py": "import torch\nclass Net(torch.nn.Module):\n    pass\n",
            "finetune.py": "import torch\ndef finetune(net):\n    net.cuda()\n",
        },
    )
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    cache = FindingsCache(str(tmp_path / ".cache"), fingerprint="test")
    settings = Settings(root=str(tmp_path), select=("MEM701",))

    def found() -> list[tuple[str, str]]:
        reports = runner.run(files, settings, jobs=1, cache=cache)
        return sorted((os.path.basename(r.path), f.code) for r in reports for f in r.findings)

    assert found() == [] and found() == []
    (tmp_path / "finetune.py").write_text(textwrap.dedent(_GPU_SAVE))
    assert _mem701(tmp_path, ".") == [("evaluate.py", 9)]  # a cold run's answer
    assert found() == [("evaluate.py", "MEM701")]


def test_walk_from_tables_visits_as_node_visitor():
    """checkpoint_files' walk dispatches from a table, not NodeVisitor's
    ``getattr`` per node: the same facts as NodeVisitor's own walk, nested
    functions, lambdas, loops and inner calls included."""
    import ast

    from memlint.project import checkpoint_files as cf

    class Plain(cf._Files):
        visit = ast.NodeVisitor.visit
        generic_visit = ast.NodeVisitor.generic_visit

    extra = """
        import torch
        def save_all(nets, path):
            for k, net in nets.items():
                sd = net.cpu().state_dict()
                torch.save(sd, path + k + "_cpu.pth")
            f = lambda m: torch.save(m.state_dict(), "lam.pth")
            sd2: dict = nets["a"].state_dict()
            torch.save(sd2, "other.pth")
            return torch.load("loaded.pth", map_location="cpu")
    """
    for source in (_TRAIN, _EVALUATE, extra):
        tree = ast.parse(textwrap.dedent(source))
        fast, plain = cf._Files({"torch": "torch"}), Plain({"torch": "torch"})
        fast.visit(tree)
        plain.visit(tree)
        seen = [(w.cpu, w.other, w.loaded, w.model_saves, w.model_unproven) for w in (fast, plain)]
        assert seen[0] == seen[1]
    assert set(cf._VISITS) == {
        ast.FunctionDef,
        ast.AsyncFunctionDef,
        ast.Lambda,
        ast.Assign,
        ast.AnnAssign,
        ast.For,
        ast.Call,
    }
