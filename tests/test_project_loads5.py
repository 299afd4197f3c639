"""MEM701 on models of another module (issue 29, fourth batch's alarms): a
model whose tree of project classes nests deeper than a call chain's hops,
a trainer that moves fresh tensors into plain attributes, a helper whose
caller rebuilds its argument on the CPU in a later ``if``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path


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
    found = json.loads(out or "[]")
    return sorted(
        (Path(f["filename"]).resolve().relative_to(cwd.resolve()).as_posix(), f["location"]["row"]) for f in found
    )


# Six classes deep: Generator > Encoder > Blocks > Block > ConvBlock > Norm.
_NETWORKS = """
    import torch
    import torch.nn as nn
    from torch.autograd import Variable
    class Norm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.scale = nn.Parameter(torch.ones(n))
    class ConvBlock(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.conv = nn.Conv2d(n, n, 3)
            self.norm = Norm(n)
    class Block(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.body = ConvBlock(n)
    class Blocks(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.blocks = nn.Sequential(*[Block(n) for _ in range(2)])
    class Encoder(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.res = Blocks(n)
    class Generator(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.enc = Encoder(n)
        def sample(self, x):
            z = Variable(torch.randn(x.size(0), 8).cuda())
            return self.enc(x) + z
"""

_TRAINERS = """
    import torch
    import torch.nn as nn
    from torch.autograd import Variable
    from networks import Generator
    class GanTrainer(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.gen_a = Generator(cfg["dim"])
            self.noise = torch.randn(8, cfg["style"], 1, 1).cuda()
        def gen_update(self, x):
            s = Variable(torch.randn(x.size(0), 8).cuda())
            self.loss_gen = (self.gen_a(x) - s).abs().mean()
            return self.loss_gen
    class VaeTrainer(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.gen_a = Generator(cfg["dim"])
    class CodedTrainer(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.gen_a = Generator(cfg["dim"])
            self.register_buffer("codes", torch.randn(8, cfg["style"]).cuda())
"""


def test_a_trainer_of_deeply_nested_classes_with_fresh_tensors_in_plain_attributes(tmp_path):
    """``GanTrainer`` builds a generator six project classes deep and keeps
    ``torch.randn(...).cuda()`` in a plain attribute: its parameters are on
    the CPU until ``trainer.cuda()``, whichever arm built it. A trainer that
    registers a moved buffer is a model on the GPU: still reported."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "networks.py": _NETWORKS,
            "trainers.py": _TRAINERS,
            "test.py": """
                import sys
                import torch
                from trainers import GanTrainer, VaeTrainer, CodedTrainer
                cfg = {"dim": 4, "style": 8}
                if sys.argv[1] == "gan":
                    trainer = GanTrainer(cfg)
                elif sys.argv[1] == "vae":
                    trainer = VaeTrainer(cfg)
                else:
                    sys.exit("unknown trainer")
                state_dict = torch.load(sys.argv[2])
                trainer.gen_a.load_state_dict(state_dict["a"])
                trainer.cuda()
                coded = CodedTrainer(cfg)
                coded.gen_a.load_state_dict(torch.load(sys.argv[3]))
                coded.cuda()
            """,
        },
    )
    assert _mem701(tmp_path, ".") == [("test.py", 16)]


def test_a_trainer_that_moves_its_generator_stays_reported(tmp_path):
    """The same trainer with ``self.gen_a = Generator(...).cuda()`` (a module,
    not a fresh tensor) or the model handed over after ``.cuda()``: reported."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "networks.py": _NETWORKS,
            "trainers.py": """
                import torch
                import torch.nn as nn
                from networks import Generator
                class GanTrainer(nn.Module):
                    def __init__(self, cfg):
                        super().__init__()
                        self.gen_a = Generator(cfg["dim"]).cuda()
                        self.noise = torch.randn(8, cfg["style"], 1, 1).cuda()
            """,
            "test.py": """
                import sys
                import torch
                from trainers import GanTrainer
                from networks import Generator
                trainer = GanTrainer({"dim": 4, "style": 8})
                trainer.gen_a.load_state_dict(torch.load(sys.argv[1]))
                gen = Generator(4)
                gen.cuda()
                gen.load_state_dict(torch.load(sys.argv[2]))
            """,
        },
    )
    assert _mem701(tmp_path, ".") == [("test.py", 7), ("test.py", 10)]


def test_a_helper_whose_caller_rebuilds_its_argument_in_a_later_if(tmp_path):
    """``load_network(structure)``: ``structure`` is built on the CPU in each
    arm of an ``if``/``elif``/``else`` and again in ``if opt.parts:``; the
    helper wraps it in ``AveragedModel`` on one path. Every load is into a
    CPU model. A second script whose later ``if`` moves it is reported."""
    helper = """
        def load_network(network):
            try:
                network.load_state_dict(torch.load(opt.path))
            except RuntimeError:
                if opt.average:
                    network = swa_utils.AveragedModel(network)
                network.load_state_dict(torch.load(opt.path))
            return network
    """
    head = """
        import torch
        from torch.optim import swa_utils
        from models import Small, Parts
        from options import opt
    """
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "options.py": "import argparse\nopt = argparse.ArgumentParser().parse_args()\n",
            "models.py": """
                import torch.nn as nn
                class Small(nn.Module):
                    def __init__(self, n):
                        super().__init__()
                        self.fc = nn.Linear(n, 2)
                class Parts(nn.Module):
                    def __init__(self, n):
                        super().__init__()
                        self.fc = nn.Linear(n, 6)
            """,
            "test.py": textwrap.dedent(head)
            + textwrap.dedent(helper)
            + textwrap.dedent("""
                if opt.small:
                    structure = Small(opt.n)
                elif opt.wide:
                    structure = Small(opt.n * 2)
                else:
                    structure = Parts(opt.n)
                if opt.parts:
                    structure = Parts(opt.n)
                model = load_network(structure).cuda()
            """),
            "test_gpu.py": textwrap.dedent(head)
            + textwrap.dedent(helper)
            + textwrap.dedent("""
                structure = Small(opt.n)
                if opt.gpu:
                    structure = structure.cuda()
                model = load_network(structure)
            """),
        },
    )
    assert _mem701(tmp_path, ".") == [("test_gpu.py", 9), ("test_gpu.py", 13)]
