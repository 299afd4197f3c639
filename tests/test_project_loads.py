"""MEM701 reads the project: where a model is built, what is handed to it,
who calls the function that loads into it (issue 30's false alarms on whole
research projects). Each project is checked as a tree and as one file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from memlint.project.index import build_index
from memlint.project.summary import summarise_text


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


_NETS = """
    import torch.nn as nn
    class Generator(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.fc = nn.Linear(cfg["dim"], 2)
    class OnGpu(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.fc = nn.Linear(cfg["dim"], 2).cuda()
"""


def test_a_class_named_through_its_package_and_options_that_are_no_model(tmp_path):
    """``vocoders.Generator(cfg)`` after ``import vocoders`` (re-exported by
    the package), ``cfg`` built by a dict subclass of a module with no torch:
    a model on the CPU, loaded before its ``.to(device)``."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "vocoders/__init__.py": "from .models import Generator, OnGpu\nfrom .env import Options\n",
            "vocoders/models.py": _NETS,
            "vocoders/env.py": """
                class Options(dict):
                    def __getattr__(self, name):
                        return self[name]
            """,
            "synth.py": """
                import json
                import torch
                import vocoders
                def vocoder(which, device):
                    cfg = vocoders.Options(json.load(open("cfg.json")))
                    voc = vocoders.Generator(cfg)
                    if which == "a":
                        ckpt = torch.load("a.pt")
                    else:
                        ckpt = torch.load("b.pt")
                    voc.load_state_dict(ckpt["generator"])
                    voc.to(device)
                    gpu = vocoders.OnGpu(cfg)
                    gpu.load_state_dict(torch.load("c.pt"))
                    return voc, gpu
            """,
        },
    )
    assert _mem701(tmp_path, ".") == [("synth.py", 15)]  # OnGpu moves itself: its load doubles on the GPU
    assert _mem701(tmp_path, "synth.py") == [("synth.py", 15)]


def test_a_helper_whose_every_caller_passes_a_model_built_on_the_cpu(tmp_path):
    """``init_model(net, restore)`` loads into its parameter; every caller in
    the project passes a model just built from a class that moves nothing."""
    files = {
        "pyproject.toml": "[project]\nname = 'p'\n",
        "models/__init__.py": "from .lenet import Encoder, Critic\n",
        "models/lenet.py": """
            import torch.nn as nn
            class Encoder(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.fc = nn.Linear(4, 2)
            class Critic(nn.Module):
                def __init__(self, dims):
                    super().__init__()
                    self.fc = nn.Linear(dims, 1)
        """,
        "utils.py": """
            import os
            import torch
            def init_weights(m):
                pass
            def init_model(net, restore):
                net.apply(init_weights)
                if restore is not None and os.path.exists(restore):
                    net.load_state_dict(torch.load(restore))
                if torch.cuda.is_available():
                    net.cuda()
                return net
        """,
        "main.py": """
            from models import Critic, Encoder
            from utils import init_model
            encoder = init_model(net=Encoder(), restore="enc.pt")
            critic = init_model(Critic(dims=3).eval(), restore="critic.pt")
        """,
    }
    _write(tmp_path, files)
    assert _mem701(tmp_path, ".") == []
    assert _mem701(tmp_path, "utils.py") == []
    # One caller hands it a model already on the GPU: the load doubles there.
    (tmp_path / "resume.py").write_text(
        "from models import Encoder\nimport utils\nutils.init_model(Encoder().cuda(), 'e.pt')\n"
    )
    assert _mem701(tmp_path, ".") == [("utils.py", 9)]
    assert _mem701(tmp_path, "utils.py") == [("utils.py", 9)]


def test_imports_through_sys_path_and_from_the_top_of_a_package(tmp_path):
    """``sys.path.append("..")`` in a script run from its folder, and a
    package module importing ``models.alex`` as the scripts above it do:
    both reach the class, which moves nothing; a table of such classes too."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "v2/models/__init__.py": "",
            "v2/models/alex.py": """
                import torch.nn as nn
                class AlexNet(nn.Module):
                    def __init__(self, out=10):
                        super().__init__()
                        self.fc = nn.Linear(4, out)
            """,
            "v2/models/fusion.py": """
                import torch
                from models.alex import AlexNet
                TABLE = {"alex": AlexNet}
                def load_model(name, path):
                    model = TABLE[name](4)
                    model.load_state_dict(torch.load(path))
                    model.cuda()
                    return model
            """,
            "v2/plots/show.py": """
                import sys
                import torch
                sys.path.append("..")
                from models.alex import AlexNet
                model = AlexNet()
                model.load_state_dict(torch.load("../ckpt/model.pth"))
            """,
        },
    )
    assert _mem701(tmp_path, ".") == []
    assert _mem701(tmp_path, "v2/plots/show.py", "v2/models/fusion.py") == []


def test_a_helper_nobody_calls_that_moves_its_model_after_the_load(tmp_path):
    """``init_model(net, restore)`` is called nowhere in the project and
    moves ``net`` to the GPU itself after the load: it expects a model on the
    CPU. ``resume(model, path)``, which never moves it, stays reported."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "utils.py": """
                import torch
                def init_model(net, restore):
                    if restore:
                        net.load_state_dict(torch.load(restore))
                    if torch.cuda.is_available():
                        net.cuda()
                    return net
                def resume(model, path):
                    model.load_state_dict(torch.load(path))
            """,
        },
    )
    assert _mem701(tmp_path, ".") == [("utils.py", 10)]
    assert _mem701(tmp_path, "utils.py") == [("utils.py", 10)]


_NOTEBOOK_CELLS = [
    "%matplotlib inline\nimport torch\nimport fc",
    "model = fc.Network(4, 2)\nfc.train(model, loader, epochs=1)",
    "torch.save(model.state_dict(), 'c.pth')",
    "state = torch.load('c.pth')\nmodel.load_state_dict(state)",
    "gpu = fc.Network(4, 2)\nfc.train_on_gpu(gpu, loader)\ngpu.load_state_dict(torch.load('c.pth'))",
]


def _notebook(cells: list[str]) -> str:
    return json.dumps(
        {
            "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": c} for c in cells],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
    )


def test_a_notebook_is_a_module_of_its_project(tmp_path):
    """The notebook builds its model from fc.py and hands it to fc.train,
    which moves nothing to a device: the model is on the CPU at the load.
    fc.train_on_gpu moves it: that load is reported. And the notebook's
    calls count as callers of fc.py's functions."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "fc.py": """
                import torch
                import torch.nn as nn
                class Network(nn.Module):
                    def __init__(self, n_in, n_out):
                        super().__init__()
                        self.fc = nn.Linear(n_in, n_out)
                def validation(model, loader):
                    return sum(float(model(x).sum()) for x in loader)
                def train(model, loader, epochs=5):
                    opt = torch.optim.SGD(model.parameters(), lr=0.1)
                    for _ in range(epochs):
                        for x, y in loader:
                            opt.zero_grad()
                            loss = ((model(x) - y) ** 2).mean()
                            loss.backward()
                            opt.step()
                        validation(model, loader)
                def train_on_gpu(model, loader):
                    model.cuda()
                    train(model, loader)
            """,
        },
    )
    (tmp_path / "Part 6.ipynb").write_text(_notebook(_NOTEBOOK_CELLS))
    assert _mem701(tmp_path, ".") == [("Part 6.ipynb", 3)]  # cell 5, its third line
    assert _mem701(tmp_path, "Part 6.ipynb") == [("Part 6.ipynb", 3)]
    index = build_index(str(tmp_path))
    assert index is not None
    callers = index.view_for(str(tmp_path / "fc.py")).callers_of("train")
    assert [c.path for c in callers] == ["Part 6.ipynb"]


def test_a_notebook_summary_reads_its_code_cells():
    summary = summarise_text(
        __import__("memlint.project.notebook_code", fromlist=["notebook_code"]).notebook_code(
            _notebook(_NOTEBOOK_CELLS)
        )
    )
    assert summary is not None
    assert summary.imports == {"torch": "torch", "fc": "fc"}
    assert {c.callee for c in summary.calls} == {"fc.Network", "fc.train", "fc.train_on_gpu"}


def test_a_cached_summary_kept_as_json_still_adds_its_sys_path(tmp_path):
    """A warm run keeps a cache hit's summary as JSON in the index
    (project/index.py): the folders its script adds to ``sys.path`` must be
    read from the JSON too (reading them as attributes raised)."""
    from memlint.project.index import ProjectIndex
    from memlint.project.summary import summarise_text

    _write(
        tmp_path,
        {
            "lib/net.py": "import torch.nn as nn\nclass Net(nn.Module):\n    pass\n",
            "tools/show.py": 'import sys\nimport torch\nsys.path.append("../lib")\nfrom net import Net\n',
        },
    )
    files = [tmp_path / "lib/net.py", tmp_path / "tools/show.py"]
    for as_json in (False, True):
        summaries = {}
        for f in files:
            summary = summarise_text(f.read_text(), always=True)
            assert summary is not None
            summaries[str(f)] = summary.to_json() if as_json else summary
        index = ProjectIndex(str(tmp_path), summaries)
        assert index.resolve("net.Net", str(tmp_path / "tools/show.py")) == (str(tmp_path / "lib/net.py"), "Net")


def test_a_folder_init_paths_puts_on_the_path_from_its_own_file(tmp_path):
    """``import _init_paths`` beside the scripts (faster-rcnn's layout):
    it inserts ``osp.join(this_dir, "..", "lib")`` through a helper, so
    ``from model.vgg import Vgg`` resolves and Vgg, which moves nothing,
    builds a model on the CPU. OnGpu moves itself: its load is reported."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "lib/model/__init__.py": "",
            "lib/model/vgg.py": """
                import torch.nn as nn
                class Vgg(nn.Module):
                    def __init__(self, classes=10):
                        super().__init__()
                        self.fc = nn.Linear(4, classes)
                class OnGpu(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.fc = nn.Linear(4, 2).cuda()
            """,
            "tools/_init_paths.py": """
                import os.path as osp
                import sys
                def add_path(path):
                    if path not in sys.path:
                        sys.path.insert(0, path)
                this_dir = osp.dirname(__file__)
                add_path(osp.join(this_dir, "..", "lib"))
            """,
            "tools/test_net.py": """
                import _init_paths
                import torch
                from model.vgg import OnGpu, Vgg
                def main(path):
                    net = Vgg(classes=3)
                    net.load_state_dict(torch.load(path))
                    net.cuda()
                    gpu = OnGpu()
                    gpu.load_state_dict(torch.load(path))
            """,
        },
    )
    assert _mem701(tmp_path, ".") == [("tools/test_net.py", 10)]
    assert _mem701(tmp_path, "tools/test_net.py") == [("tools/test_net.py", 10)]


def test_the_folders_a_module_computes_from_its_own_file():
    summary = summarise_text(
        textwrap.dedent(
            """
            import os, sys
            from pathlib import Path
            ROOT = Path(__file__).resolve().parents[1]
            sys.path.append(str(ROOT / "src"))
            sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "lib")))
            here = os.path.dirname(os.path.realpath(__file__))
            sys.path.insert(0, here)
            sys.path.append(os.path.join(os.getcwd(), "other"))
            sys.path.append("plain")
            twice = os.path.dirname(__file__)
            twice = "/opt"
            sys.path.append(twice)
            """
        ),
        always=True,
    )
    assert summary is not None
    assert summary.file_sys_paths == ["../src", "../lib", "."]  # the working folder's is unknown
    assert summary.sys_paths == ["plain"]


_DLA = """
    import torch
    import torch.nn as nn
    class DLA(nn.Module):
        def __init__(self, levels):
            super().__init__()
            self.fc = nn.Linear(8, levels)
        def load_pretrained_model(self, name):
            weights = torch.load(name)
            self.load_state_dict(weights)
    def dla34(pretrained=True, **kwargs):
        model = DLA(4, **kwargs)
        if pretrained:
            model.load_pretrained_model("dla34.pth")
        return model
"""


def test_a_method_loading_into_self_called_only_on_models_just_built(tmp_path):
    """CenterNet's ``load_pretrained_model`` loads into ``self``; its calls,
    in two modules, are each on a model their own builder just made from the
    module's own class: on the CPU. Once another module calls it on a model
    moved to the GPU, both loads are reported."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "nets/__init__.py": "",
            "nets/dla.py": _DLA,
            "nets/pose_dla.py": _DLA,
            "main.py": "from nets.dla import dla34\nmodel = dla34(True).cuda()\n",
        },
    )
    assert _mem701(tmp_path, ".") == []
    assert _mem701(tmp_path, "nets/dla.py") == []
    (tmp_path / "resume.py").write_text(
        "from nets.dla import DLA\nm = DLA(4).cuda()\nm.load_pretrained_model('last.pth')\n"
    )
    assert _mem701(tmp_path, ".") == [("nets/dla.py", 9), ("nets/pose_dla.py", 9)]
    assert _mem701(tmp_path, "nets/dla.py") == [("nets/dla.py", 9)]


_SEQ2SEQ = """
    import torch
    from torch import nn
    from torch.autograd import Variable
    use_cuda = torch.cuda.is_available()
    class EncoderRNN(nn.Module):
        def __init__(self, size, hidden):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden
            self.embedding = nn.Embedding(size, hidden)
        def initHidden(self):
            result = Variable(torch.zeros(1, 1, self.hidden_size))
            if use_cuda:
                return result.cuda()
            else:
                return result
    class Noisy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
        def forward(self, x, timesteps):
            emb = torch.arange(4, dtype=torch.float32).to(timesteps.device)
            return self.fc(x) + emb
    class KeepsHidden(nn.Module):
        def __init__(self, hidden):
            super().__init__()
            self.fc = nn.Linear(hidden, hidden)
            self.reset(hidden)
        def reset(self, hidden):
            self.register_buffer("h0", self.fresh(hidden))
        def fresh(self, hidden):
            return torch.zeros(1, hidden).cuda()
    class MovesItsWeights(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
        def to_gpu(self):
            self.fc.weight.data = torch.zeros(4, 4).cuda()
    class MovesItself(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)
        def gpu(self):
            layer = self.fc
            return layer.cuda()
"""


def test_a_class_that_moves_only_tensors_it_builds_is_built_on_the_cpu(tmp_path):
    """seq2seq's ``initHidden`` returns ``result.cuda()`` (a fresh hidden
    state) and a forward moves a fresh embedding: ``Tensor.cuda()`` returns a
    copy, so the module is still on the CPU at the load. A class that keeps
    such a tensor (a buffer filled by a helper, a weight written through
    ``.data``) or moves a submodule still moves itself."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model/__init__.py": "",
            "model/seq2seq.py": _SEQ2SEQ,
            "evaluate.py": """
                import torch
                from model.seq2seq import EncoderRNN, KeepsHidden, MovesItself, MovesItsWeights, Noisy
                encoder = EncoderRNN(10, 256)
                encoder.load_state_dict(torch.load('./encoder.pth'))
                noisy = Noisy()
                noisy.load_state_dict(torch.load('./noisy.pth'))
                keeps = KeepsHidden(8)
                keeps.load_state_dict(torch.load('./keeps.pth'))
                weights = MovesItsWeights()
                weights.load_state_dict(torch.load('./weights.pth'))
                itself = MovesItself()
                itself.load_state_dict(torch.load('./itself.pth'))
                encoder = encoder.cuda()
            """,
        },
    )
    summary = summarise_text(textwrap.dedent(_SEQ2SEQ), always=True)
    assert summary is not None and summary.cpu_classes == ["EncoderRNN", "Noisy"]
    expected = [("evaluate.py", 9), ("evaluate.py", 11), ("evaluate.py", 13)]
    assert _mem701(tmp_path, ".") == expected
    assert _mem701(tmp_path, "evaluate.py") == expected
    # The same classes in the module that loads them: read on its own tree.
    (tmp_path / "evaluate.py").write_text(
        textwrap.dedent(_SEQ2SEQ)
        + textwrap.dedent((tmp_path / "evaluate.py").read_text()).replace(
            "from model.seq2seq import EncoderRNN, KeepsHidden, MovesItself, MovesItsWeights, Noisy\n", ""
        )
    )
    lines = (tmp_path / "evaluate.py").read_text().splitlines()
    loads = [i + 1 for i, line in enumerate(lines) if "load_state_dict" in line]
    assert _mem701(tmp_path, "evaluate.py") == [("evaluate.py", n) for n in loads[2:]]


def test_a_builder_of_another_module_and_a_load_in_a_branch_that_excludes_training(tmp_path):
    """pytorch-ssd's prune_alexnet.py: ``net = alexnet(True)`` (a builder in
    vision/nn/alexnet.py returning ``AlexNet(**kwargs)``, a class that moves
    nothing) is handed to ``train(net)`` in the ``if`` and loaded in the
    ``elif``: still on the CPU there. A builder that moves its model, wraps a
    model it is given or passes a device builds nothing known."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "vision/__init__.py": "",
            "vision/nn/__init__.py": "",
            "vision/nn/alexnet.py": """
                import torch.nn as nn
                import torch.utils.model_zoo as model_zoo
                class AlexNet(nn.Module):
                    def __init__(self, num_classes=1000):
                        super(AlexNet, self).__init__()
                        self.classifier = nn.Linear(8, num_classes)
                def alexnet(pretrained=False, **kwargs):
                    model = AlexNet(**kwargs)
                    if pretrained:
                        model.load_state_dict(model_zoo.load_url("https://x/alexnet.pth"))
                    return model
                def alexnet_gpu(**kwargs):
                    return AlexNet(**kwargs).cuda()
                class Wrapper(nn.Module):
                    def __init__(self, net):
                        super().__init__()
                        self.net = net
                def wrap(net):
                    return Wrapper(net)
            """,
            "prune_alexnet.py": """
                import torch
                from vision.nn.alexnet import alexnet, alexnet_gpu, wrap
                DEVICE = torch.device("cuda:0")
                def train(net):
                    net = net.to(DEVICE)
                if __name__ == '__main__':
                    net = alexnet(True)
                    if args.train:
                        train(net)
                    elif args.prune:
                        net.load_state_dict(torch.load(args.trained_model))
                    gpu = alexnet_gpu()
                    gpu.load_state_dict(torch.load(args.gpu_model))
                    wrapped = wrap(gpu)
                    wrapped.load_state_dict(torch.load(args.wrapped))
                    net.load_state_dict(torch.load(args.after))
            """,
        },
    )
    expected = [("prune_alexnet.py", 14), ("prune_alexnet.py", 16), ("prune_alexnet.py", 17)]
    assert _mem701(tmp_path, ".") == expected
    assert _mem701(tmp_path, "prune_alexnet.py") == expected


def test_a_builder_of_classes_reached_through_star_imports_and_a_load_into_a_part(tmp_path):
    """deeplab-pytorch: ``DeepLabV2_MSC(n)`` in models/__init__.py returns
    ``MSC(base=DeepLabV2(n))``, both classes reached through ``from .msc
    import *`` / ``from .deeplabv2 import *``; the script loads into
    ``model.base`` before ``model.to(device)``: a part of a model on the CPU.
    A builder of a class that moves itself, a part rebound to something else,
    or a part moved before the load keep the finding."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "libs/__init__.py": "",
            "libs/models/__init__.py": """
                from .deeplabv2 import *
                from .msc import *
                def DeepLabV2_MSC(n_classes):
                    return MSC(base=DeepLabV2(n_classes=n_classes), scales=[0.5, 0.75])
                def DeepLabV3_MSC(n_classes):
                    base = DeepLabV3(n_classes=n_classes)
                    return MSC(base=base)
            """,
            "libs/models/deeplabv2.py": """
                import torch.nn as nn
                __all__ = ["DeepLabV2", "DeepLabV3"]
                class DeepLabV2(nn.Sequential):
                    def __init__(self, n_classes):
                        super().__init__()
                        self.add_module("head", nn.Conv2d(8, n_classes, 1))
                class DeepLabV3(nn.Sequential):
                    def __init__(self, n_classes):
                        super().__init__()
                        self.add_module("head", nn.Conv2d(8, n_classes, 1).cuda())
            """,
            "libs/models/msc.py": """
                import torch.nn as nn
                class MSC(nn.Module):
                    def __init__(self, base, scales=None):
                        super().__init__()
                        self.base = base
                        self.scales = scales
            """,
            "main.py": """
                import torch
                import torch.nn as nn
                from libs.models import DeepLabV2_MSC, DeepLabV3_MSC
                def train(device):
                    model = DeepLabV2_MSC(n_classes=21)
                    state_dict = torch.load("init.pth")
                    model.base.load_state_dict(state_dict, strict=False)
                    model = nn.DataParallel(model)
                    model.to(device)
                def moved_part(device):
                    model = DeepLabV2_MSC(n_classes=21)
                    model.base.to(device)
                    model.base.load_state_dict(torch.load("init.pth"))
                def rebound_part(net):
                    model = DeepLabV2_MSC(n_classes=21)
                    model.base = net
                    model.base.load_state_dict(torch.load("init.pth"))
                def v3():
                    model = DeepLabV3_MSC(n_classes=21)
                    model.base.load_state_dict(torch.load("init.pth"))
            """,
        },
    )
    expected = [("main.py", 14), ("main.py", 18), ("main.py", 21)]
    assert _mem701(tmp_path, ".") == expected
    assert _mem701(tmp_path, "main.py") == expected


def test_a_class_whose_submodules_move_themselves_is_not_built_on_the_cpu(tmp_path):
    """NCRF++: ``SeqLabel(data)`` moves nothing itself, but the
    ``WordSequence`` it builds (model/wordsequence.py) calls
    ``self.lstm.cuda()`` in its ``__init__``: the model may be on the GPU at
    the load. A class whose parts and bases all move nothing stays a CPU
    class, and so does one built of torch.nn layers only."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model/__init__.py": "",
            "model/wordsequence.py": """
                import torch.nn as nn
                class WordSequence(nn.Module):
                    def __init__(self, data):
                        super().__init__()
                        self.lstm = nn.LSTM(8, 8)
                        if data.HP_gpu:
                            self.lstm = self.lstm.cuda()
                class Embedder(nn.Module):
                    def __init__(self, data):
                        super().__init__()
                        self.emb = nn.Embedding(10, 8)
            """,
            "model/base.py": """
                import torch.nn as nn
                class Base(nn.Module):
                    def forward(self, x):
                        return x
                    def place(self):
                        self.cuda()
            """,
            "model/seqlabel.py": """
                import torch.nn as nn
                from .wordsequence import WordSequence, Embedder
                from .base import Base
                class SeqLabel(nn.Module):
                    def __init__(self, data):
                        super().__init__()
                        self.word_hidden = WordSequence(data)
                class Tagger(nn.Module):
                    def __init__(self, data):
                        super().__init__()
                        self.emb = Embedder(data)
                        self.out = nn.Linear(8, 2)
                class Derived(Base):
                    def __init__(self, data):
                        super().__init__()
                        self.out = nn.Linear(8, 2)
            """,
            "main.py": """
                import torch
                from model.seqlabel import SeqLabel, Tagger, Derived
                def decode(data):
                    model = SeqLabel(data)
                    model.load_state_dict(torch.load(data.load_model_dir))
                    tagger = Tagger(data)
                    tagger.load_state_dict(torch.load(data.tagger_dir))
                    derived = Derived(data)
                    derived.load_state_dict(torch.load(data.derived_dir))
            """,
        },
    )
    expected = [("main.py", 6), ("main.py", 10)]
    assert _mem701(tmp_path, ".") == expected
    assert _mem701(tmp_path, "main.py") == expected


def test_a_model_built_in_every_branch_and_set_up_by_an_inherited_method(tmp_path):
    """faster-rcnn's test_net.py: ``fasterRCNN`` is built in each branch of an
    ``if``/``elif`` chain whose ``else`` only prints (the name stays unbound
    there), then ``fasterRCNN.create_architecture()``, a method of the base
    class ``_fasterRCNN`` of another module, runs before the load: nothing
    in the classes or their bases moves, so the model is on the CPU. A
    branch that builds with an unknown function, or an inherited method
    that moves the model, keep the finding."""
    _write(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'p'\n",
            "model/__init__.py": "",
            "model/faster_rcnn.py": """
                import torch.nn as nn
                class _fasterRCNN(nn.Module):
                    def __init__(self, classes):
                        super().__init__()
                        self.n_classes = len(classes)
                    def create_architecture(self):
                        self._init_modules()
                class _Placed(nn.Module):
                    def __init__(self):
                        super().__init__()
                    def create_architecture(self):
                        self.cuda()
            """,
            "model/vgg16.py": """
                import torch.nn as nn
                from model.faster_rcnn import _fasterRCNN, _Placed
                class vgg16(_fasterRCNN):
                    def _init_modules(self):
                        self.head = nn.Linear(8, self.n_classes)
                class resnet(_fasterRCNN):
                    def _init_modules(self):
                        self.head = nn.Linear(16, self.n_classes)
                class placed(_Placed):
                    def __init__(self, classes):
                        super().__init__()
                        self.head = nn.Linear(8, len(classes))
            """,
            "test_net.py": """
                import pdb
                import torch
                from model.vgg16 import vgg16, resnet, placed
                from detection_zoo import build_other
                if __name__ == '__main__':
                    if args.net == 'vgg16':
                        fasterRCNN = vgg16(classes)
                    elif args.net == 'res101':
                        fasterRCNN = resnet(classes)
                    else:
                        print("network is not defined")
                        pdb.set_trace()
                    fasterRCNN.create_architecture()
                    fasterRCNN.load_state_dict(torch.load(load_name)['model'])
                    if args.net == 'vgg16':
                        other = vgg16(classes)
                    else:
                        other = build_other(classes)
                    other.load_state_dict(torch.load(load_name)['model'])
                    moved = placed(classes)
                    moved.create_architecture()
                    moved.load_state_dict(torch.load(load_name)['model'])
            """,
        },
    )
    # ``build_other`` comes from a package outside the project: not known.
    expected = [("test_net.py", 20), ("test_net.py", 23)]
    assert _mem701(tmp_path, ".") == expected
    assert _mem701(tmp_path, "test_net.py") == expected
