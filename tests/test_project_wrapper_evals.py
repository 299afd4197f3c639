"""MEM201 across modules through a plain object that wraps models (RIFE's
``Model``: not an ``nn.Module``, its ``eval()`` switches the networks it
holds, its ``inference()`` runs them), a network wrapped back into its own
attribute (``self.flownet = DDP(self.flownet, ...)``), torch's functional
``nn.parallel.data_parallel(netG, inputs, gpus)`` and models built from a
class imported inside a function (StackGAN's ``sample``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.project.index import build_index
from memlint.project.summary import summarise_text
from memlint.vocabulary.kinds import Kind

_NETS = """
    import torch
    import torch.nn as nn


    class FlowNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(6, 2, 3)

        def forward(self, x):
            return self.conv(x)
"""

_WRAPPER = """
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    from model.nets import FlowNet


    class Model:
        def __init__(self, local_rank=-1):
            self.flownet = FlowNet()
            if local_rank != -1:
                self.flownet = DDP(self.flownet, device_ids=[local_rank])

        def train(self):
            self.flownet.train()

        def eval(self):
            self.flownet.eval()

        def inference(self, img0, img1):
            return self.flownet(torch.cat((img0, img1), 1))
"""

_BENCHMARK = """
    import sys
    sys.path.append('.')
    import torch
    from model.wrapper import Model

    model = Model()
    model.eval()
    psnr = []
    for name in open('list.txt'):
        img = torch.load(name)
        mid = model.inference(img, img)[0]
        psnr.append(float(mid.mean()))
"""


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in {"pyproject.toml": "[project]\nname = 'p'\n", **files}.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _mem201(folder: Path, files: dict[str, str]) -> list[tuple[str, int]]:
    _write(folder, files)
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM201", "."],
        cwd=folder,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = json.loads(out or "[]")
    return sorted(
        (Path(f["filename"]).resolve().relative_to(folder.resolve()).as_posix(), f["location"]["row"]) for f in rows
    )


def _view(folder: Path, files: dict[str, str], path: str):
    _write(folder, files)
    index = build_index(str(folder), store=None)
    assert index is not None
    return index.view_for(str(folder / path))


# -- summary: a wrapper rewrapped in its own attribute keeps its forward ----------


def _forward_ctors(text: str) -> set[str]:
    objects = summarise_text(textwrap.dedent(text), always=True).objects
    return {c for m, a, _line, c, _via in objects.forwards if m == "Model.inference" and a == "flownet"}


def test_an_attribute_wrapped_back_into_itself_keeps_its_forward():
    """``self.flownet = DDP(self.flownet, ...)`` (through an import alias)
    or ``self.flownet = self.flownet.cuda()`` hands back the module it held:
    ``inference`` runs a FlowNet's forward, not a DDP built anew."""
    assert _forward_ctors(_WRAPPER) == {"model.nets.FlowNet"}
    moved = _WRAPPER.replace("DDP(self.flownet, device_ids=[local_rank])", "self.flownet.cuda()")
    assert _forward_ctors(moved) == {"model.nets.FlowNet"}


def test_an_attribute_given_another_value_keeps_that_value():
    """``self.flownet = DDP(self.backup)``: not the module it held; the
    wrapper stays among the attribute's constructors (no project model)."""
    other = _WRAPPER.replace("DDP(self.flownet,", "DDP(self.backup,")
    assert _forward_ctors(other) == {"model.nets.FlowNet|torch.nn.parallel.DistributedDataParallel"}


# -- view: eval() of a plain object holding models ------------------------------


def test_the_view_says_which_eval_calls_switch_held_models(tmp_path):
    view = _view(
        tmp_path,
        {"model/nets.py": _NETS, "model/wrapper.py": _WRAPPER, "bench/run.py": _BENCHMARK},
        "bench/run.py",
    )
    assert ("", "model") in view.object_evals
    assert ("", "model", "inference") in {(s, r, m) for s, r, m, _ in view.object_forwards}


def test_eval_that_does_more_or_takes_arguments_is_no_switch(tmp_path):
    """An ``eval(self)`` that also puts a part back in train mode (MC
    dropout), one that takes arguments (it scores data), and an
    ``nn.Module`` subclass (its eval is already a switch) are left out."""
    mc = _WRAPPER.replace(
        "            self.flownet.eval()\n", "            self.flownet.eval()\n            self.flownet.conv.train()\n"
    )
    scoring = _WRAPPER.replace("def eval(self):", "def eval(self, loader):")
    for wrapper in (mc, scoring):
        view = _view(
            tmp_path,
            {"model/nets.py": _NETS, "model/wrapper.py": wrapper, "bench/run.py": _BENCHMARK},
            "bench/run.py",
        )
        assert view.object_evals == ()


# -- the rule, on a whole project ------------------------------------------------


def test_a_benchmark_loop_over_a_wrapper_inference_is_reported(tmp_path):
    files = {"model/nets.py": _NETS, "model/wrapper.py": _WRAPPER, "bench/run.py": _BENCHMARK}
    assert _mem201(tmp_path, files) == [("bench/run.py", 10)]


def test_wrapper_look_alikes_stay_silent(tmp_path):
    """The wrapper's inference under ``no_grad``; an ``eval()`` that turns
    MC dropout back on; the benchmark under ``torch.set_grad_enabled(False)``;
    the inference in a ``with torch.no_grad()`` beside a padding layer."""
    off = _WRAPPER.replace(
        "        def inference(self, img0, img1):\n",
        "        @torch.no_grad()\n        def inference(self, img0, img1):\n",
    )
    mc = _WRAPPER.replace(
        "            self.flownet.eval()\n", "            self.flownet.eval()\n            self.flownet.conv.train()\n"
    )
    guarded = _BENCHMARK.replace("    model.eval()\n", "    model.eval()\n    torch.set_grad_enabled(False)\n")
    # RIFE's HD.py: frames padded by a parameterless layer, the inference in a ``with``.
    padded = _BENCHMARK.replace(
        "        img = torch.load(name)\n        mid = model.inference(img, img)[0]\n",
        "        pad = torch.nn.ReplicationPad2d([0, 0, 4, 4])\n        img = pad(torch.load(name))\n"
        "        with torch.no_grad():\n            mid = model.inference(img, img)[0]\n",
    )
    assert padded != _BENCHMARK
    cases = ((off, _BENCHMARK), (mc, _BENCHMARK), (_WRAPPER, guarded), (_WRAPPER, padded))
    for i, (wrapper, bench) in enumerate(cases):
        folder = tmp_path / str(i)
        files = {"model/nets.py": _NETS, "model/wrapper.py": wrapper, "bench/run.py": bench}
        assert _mem201(folder, files) == [], i


# -- functional data parallelism and locally imported model classes ------------

_STAGES = """
    import torch.nn as nn


    class StageG(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, text, noise):
            return self.fc(text + noise)
"""

_TRAINER = """
    import torch
    import torch.nn as nn


    class Trainer:
        def __init__(self, gpus):
            self.gpus = gpus

        def load_network(self):
            from stages import StageG
            netG = StageG()
            netD = StageG()
            return netG, netD

        def train(self, loader, optimizer):
            netG, _ = self.load_network()
            for text, noise in loader:
                loss = netG(text, noise).mean()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()

        def sample(self, embeddings, batch_size):
            netG, _ = self.load_network()
            netG.eval()
            noise = torch.zeros(batch_size, 4)
            count = 0
            while count < len(embeddings):
                inputs = (torch.as_tensor(embeddings[count:count + batch_size]), noise)
                fake = nn.parallel.data_parallel(netG, inputs, self.gpus)
                save(fake.data.cpu().numpy())
                count += batch_size
"""


def test_a_class_imported_inside_a_function_is_a_model_class(tmp_path):
    view = _view(tmp_path, {"stages.py": _STAGES, "trainer.py": _TRAINER}, "trainer.py")
    assert "StageG" in view.model_classes


def test_a_sampling_loop_through_data_parallel_is_reported(tmp_path):
    """StackGAN's ``sample``: the generator comes from a helper returning a
    pair, built from a class the helper imports, and runs through
    ``nn.parallel.data_parallel``."""
    assert _mem201(tmp_path, {"stages.py": _STAGES, "trainer.py": _TRAINER}) == [("trainer.py", 29)]


def test_data_parallel_under_no_grad_stays_silent(tmp_path):
    guarded = _TRAINER.replace(
        "                fake = nn.parallel.data_parallel(netG, inputs, self.gpus)\n",
        "                with torch.no_grad():\n                    fake = nn.parallel.data_parallel(netG, inputs, self.gpus)\n",
    )
    assert _mem201(tmp_path, {"stages.py": _STAGES, "trainer.py": guarded}) == []


# -- analysis units ----------------------------------------------------------------


def _facts(src: str) -> ModuleFacts:
    return ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))


def _calls(facts: ModuleFacts, last: str) -> list[cst.Call]:
    found: list[cst.Call] = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
            if name == last:
                found.append(node)

    facts.module.visit(V())
    return found


def test_data_parallel_runs_the_module_it_is_handed():
    facts = _facts(
        """
        import torch.nn as nn
        from torch.nn.parallel import data_parallel

        net = nn.Linear(2, 2)
        table = {}
        a = nn.parallel.data_parallel(net, x, [0])
        b = data_parallel(net, x)
        c = nn.parallel.data_parallel(table, x, [0])
        """
    )
    a, b, c = _calls(facts, "data_parallel")
    assert facts.objects.is_model_call(a) and facts.objects.is_model_call(b)
    assert not facts.objects.is_model_call(c)


def test_an_element_of_a_returned_pair_has_the_element_kind():
    facts = _facts(
        """
        import torch
        import torch.nn as nn

        class T:
            def build(self):
                net = nn.Linear(2, 2)
                opt = torch.optim.SGD(net.parameters(), lr=0.1)
                return net, opt

            def mixed(self, flag):
                if flag:
                    return nn.Linear(2, 2), 1
                return 1, nn.Linear(2, 2)

            def use(self):
                net, opt = self.build()
                a, b = self.mixed(True)
                net(1)
                opt.step()
                a(1)
        """
    )
    objects = facts.objects
    use = next(f for f in facts.module.body[2].body.body if isinstance(f, cst.FunctionDef) and f.name.value == "use")
    assert objects.kind_of("net", use.body.body[-1]) is Kind.MODULE
    assert objects.kind_of("opt", use.body.body[-1]) is Kind.OPTIMIZER
    assert objects.kind_of("a", use.body.body[-1]) is None  # the returns disagree


_CODERS = """
    import torch.nn as nn


    class ContentEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            return self.fc(x)


    class Coder(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = ContentEncoder()

        def encode(self, x):
            return self.enc(x)


    class Trainer(nn.Module):
        def __init__(self):
            super().__init__()
            self.gen_a = Coder()
            self.gen_b = Coder()
"""

_TEST_BATCH = """
    import torch
    import torch.nn as nn
    from nets import Trainer


    def run(loader, a2b, scorer):
        trainer = Trainer()
        trainer.eval()
        scorer.eval()
        for param in scorer.parameters():
            param.requires_grad = False
        up = nn.Upsample(size=(8, 8))
        encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode
        preds = []
        for images in loader:
            content = encode(images)
            preds.append(scorer(up(content)).softmax(1).cpu().data.numpy())
        return preds


    run([torch.zeros(1, 4)], True, nn.Linear(4, 2))
"""


def test_an_evaluation_whose_own_calls_build_no_graph_still_runs_an_object_forward(tmp_path):
    """MUNIT's test_batch.py: the loop's own model calls (a frozen scorer
    on an upsampling layer's output) build no graph, but the encoder it
    runs through a typed object's bound method does: reported through the
    object, as a loop without those calls is."""
    assert _mem201(tmp_path, {"nets.py": _CODERS, "test_batch.py": _TEST_BATCH}) == [("test_batch.py", 16)]
