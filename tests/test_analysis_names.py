"""ImportTable: what the names of a module resolve to through its imports."""

import libcst as cst
import pytest

from memlint.analysis.scope.names import ImportTable, binds_name, bound_names, dotted_name
from memlint.vocabulary.tokens import name_tokens, names_samples


def table(source: str) -> ImportTable:
    return ImportTable(cst.parse_module(source))


def resolve(source: str, expr: str) -> str | None:
    return table(source).qualified_name(cst.parse_expression(expr))


def test_dotted_name():
    assert dotted_name(cst.parse_expression("a.b.c")) == "a.b.c"
    assert dotted_name(cst.parse_expression("a().b")) is None


@pytest.mark.parametrize(
    "source, expr, expected",
    [
        ("import torch\n", "torch.cuda.amp.autocast", "torch.cuda.amp.autocast"),
        ("import torch as T\n", "T.load", "torch.load"),
        ("import torch.cuda.amp\n", "torch.cuda.amp.GradScaler", "torch.cuda.amp.GradScaler"),
        ("import torch.cuda.amp as amp\n", "amp.autocast", "torch.cuda.amp.autocast"),
        ("from torch.cuda import amp\n", "amp.autocast", "torch.cuda.amp.autocast"),
        ("from torch.cuda.amp import autocast as ac\n", "ac", "torch.cuda.amp.autocast"),
        ("from torch.utils import checkpoint\n", "checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint"),
        ("from . import torch\n", "torch.load", None),
        ("from torch import *\n", "load", None),
        ("import torch\n", "np.load", None),
        ("import torch\n", "torch", "torch"),
    ],
)
def test_qualified_name(source, expr, expected):
    assert resolve(source, expr) == expected


def test_import_of_submodule_binds_its_head_only():
    t = table("import torch.utils.checkpoint\n")
    assert t.bindings == {"torch": "torch"}
    assert t.qualified_name(cst.parse_expression("utils.checkpoint")) is None


def test_call_name():
    t = table("import torch as T\n")
    assert t.call_name(cst.parse_expression("T.load(p)")) == "torch.load"
    assert t.call_name(cst.parse_expression("T.load")) is None


@pytest.mark.parametrize(
    "source",
    [
        "from torch.utils.checkpoint import checkpoint\ncheckpoint = torch.load(path)\n",
        "from torch.utils.checkpoint import checkpoint\nfor checkpoint in paths: pass\n",
        "from torch.utils.checkpoint import checkpoint\nwith open(p) as checkpoint: pass\n",
        "from torch.utils.checkpoint import checkpoint\ndef checkpoint(): pass\n",
        "from torch.utils.checkpoint import checkpoint\nclass checkpoint: pass\n",
        "from torch.utils.checkpoint import checkpoint\ntry: pass\nexcept E as checkpoint: pass\n",
        "from torch.utils.checkpoint import checkpoint\nif (checkpoint := find()): pass\n",
        "from torch.utils.checkpoint import checkpoint\nxs = [checkpoint for checkpoint in ys]\n",
        "from torch.utils.checkpoint import checkpoint\ncheckpoint: dict = {}\n",
        "from torch.utils.checkpoint import checkpoint\nfrom deepspeed.checkpointing import checkpoint\n",
    ],
)
def test_rebound_or_ambiguous_name_resolves_to_nothing(source):
    assert resolve(source, "checkpoint") is None


def _reads(module: cst.Module, name: str) -> list[cst.Name]:
    found: list[cst.Name] = []

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            if isinstance(node.value, cst.Name) and node.value.value == name:
                found.append(node)  # type: ignore[arg-type]
            return True

    module.visit(Reads())
    return found


@pytest.mark.parametrize(
    "source, expected",
    [
        # yolov5's Swin_transformer.py: a local of one function, the module elsewhere
        (
            "import torch.utils.checkpoint as checkpoint\n"
            "def forward(blk, x):\n    return checkpoint.checkpoint(blk, x)\n"
            "def build(url):\n    checkpoint = torch.hub.load(url)\n    return checkpoint.checkpoint\n",
            ["torch.utils.checkpoint.checkpoint", None],
        ),
        # a parameter, a lambda's parameter, a loop target, a nested function's free read
        (
            "import torch.utils.checkpoint as checkpoint\n"
            "def forward(x, checkpoint):\n    return checkpoint.checkpoint(x)\n"
            "f = lambda checkpoint: checkpoint.checkpoint\n"
            "def g(xs):\n    for checkpoint in xs:\n        checkpoint.checkpoint\n"
            "def h():\n    checkpoint = load()\n    def inner():\n        return checkpoint.checkpoint\n"
            "x = checkpoint.checkpoint\n",
            [None, None, None, None, "torch.utils.checkpoint.checkpoint"],
        ),
        # ``global``: the function binds the module's name, unknown everywhere
        (
            "import torch.utils.checkpoint as checkpoint\n"
            "def forward(blk, x):\n    return checkpoint.checkpoint(blk, x)\n"
            "def reset():\n    global checkpoint\n    checkpoint = None\n",
            [None],
        ),
    ],
)
def test_a_local_shadows_an_import_in_its_own_function_only(source, expected):
    module = cst.parse_module(source)
    t = ImportTable(module)
    assert [t.qualified_name(r) for r in _reads(module, "checkpoint")] == expected
    assert "checkpoint" not in t.bindings  # what every scope sees: readers spell code with it
    assert not t.imported_only("checkpoint")


def test_same_import_twice_is_not_ambiguous():
    source = "import torch\ndef f():\n    import torch\n"
    assert resolve(source, "torch.load") == "torch.load"


def test_annotation_without_value_does_not_rebind():
    source = "from torch.cuda.amp import GradScaler\nscaler: GradScaler\n"
    assert resolve(source, "GradScaler") == "torch.cuda.amp.GradScaler"


@pytest.mark.parametrize(
    "source, qualified, expected",
    [
        ("import torch\n", "torch", "torch"),
        ("import torch as T\n", "torch", "T"),
        ("import torch as T\n", "torch.amp.autocast", "T.amp.autocast"),
        ("import torch.cuda.amp\n", "torch", "torch"),
        ("import torch.cuda.amp as amp\n", "torch", None),
        ("from torch.cuda import amp\n", "torch.cuda.amp.autocast", "amp.autocast"),
        ("import numpy as np\n", "torch", None),
        ("import torch\ntorch = None\n", "torch", None),
    ],
)
def test_local_name_for(source, qualified, expected):
    assert table(source).local_name_for(qualified) == expected


def test_imports_torch_and_top_level_imports():
    t = table('"""doc"""\nimport os\nfrom torch import nn\ndef f():\n    import numpy\n')
    assert t.imports_torch()
    assert len(t.top_level_imports) == 2
    assert not table("import numpy\n").imports_torch()


def test_name_tokens_gives_each_caller_its_own_set():
    # The tokens of a name are computed once and cached: a caller that adds to
    # its answer must not change the next caller's.
    first = name_tokens("val_loader")
    first.add("extra")
    assert name_tokens("val_loader") == {"val", "loader"}


def test_call_name_of_each_call_even_when_asked_again():
    module = cst.parse_module("import torch as T\nfrom x import y\nT.load(p)\ny(1)\nz()\n")
    table = ImportTable(module)
    calls = [s.body[0].value for s in module.body[2:]]
    for _ in range(2):  # the second round answers from the memo
        assert [table.call_name(c) for c in calls] == ["torch.load", "x.y", None]
    assert table.call_name(calls[0].func) is None  # not a call


def test_names_samples():
    """Iterables of single inputs: a plural, or one element's name with a collection's."""
    assert all(names_samples(name_tokens(n)) for n in ("images", "val_imgs", "image_list", "img_paths", "frame_files"))
    assert not any(names_samples(name_tokens(n)) for n in ("image", "img", "file_list", "loader", "image_size"))


@pytest.mark.parametrize(
    "target, binds",
    [
        ("model", True),
        ("net", False),
        ("a, model", True),
        ("[a, (b, model)]", True),
        ("a, *model", True),
        ("model.module", False),  # an attribute of it: the name stays bound to what it was
        ("model[0]", False),
    ],
)
def test_binds_name(target, binds):
    assert binds_name(cst.parse_expression(target), "model") is binds


@pytest.mark.parametrize(
    "target, names",
    [
        ("model", ["model"]),
        ("a, (b, *c)", ["a", "b", "c"]),
        ("[x.y, d[0], e]", ["e"]),  # an attribute or an item binds no name
        ("f(x)", []),
    ],
)
def test_bound_names(target, names):
    assert list(bound_names(cst.parse_expression(target))) == names
