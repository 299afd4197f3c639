"""MEM701 across modules: a method that loads into ``self`` is called only on
a model its caller has just built on the CPU (pretrain-gnns' ``model.
from_pretrained(path)`` before ``model.to(device)``, project/cpu_receivers.py),
and an optimizer built by a project helper over a model still on the CPU
(reid-strong-baseline's ``make_optimizer(cfg, model)``)."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.cpu_receivers import cpu_only_users, fresh_receiver
from memlint.project.summary import summarise_text

_MODEL = """
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.gnn = nn.Linear(n, n)
            self.head = nn.Linear(n, 1)

        def from_pretrained(self, path):
            self.gnn.load_state_dict(torch.load(path))
"""

_LOAD_LINE = 12

_FINETUNE = """
    from model import Net

    def main(args, device):
        model = Net(args.n)
        if args.input_model_file:
            model.from_pretrained(args.input_model_file)
        model.to(device)
"""


def _project(tmp_path, **callers: str) -> None:
    files = {"model.py": _MODEL, **{f"{name}.py": text for name, text in callers.items()}}
    write_project(tmp_path, files)


def test_every_caller_loads_into_a_fresh_cpu_model(tmp_path):
    _project(tmp_path, finetune=_FINETUNE, pretrain=_FINETUNE.replace("args.n", "4"))
    assert finding_lines(tmp_path / "model.py", "MEM701") == []


def test_a_caller_that_moves_the_model_first_keeps_it_loud(tmp_path):
    moved = _FINETUNE.replace("        if args", "        model.to(device)\n        if args")
    _project(tmp_path, finetune=_FINETUNE, pretrain=moved)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_a_caller_on_a_parameter_keeps_it_loud(tmp_path):
    unknown = """
        def load(model, path):
            model.from_pretrained(path)
    """
    _project(tmp_path, finetune=_FINETUNE, helpers=unknown)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_the_model_handed_to_a_call_before_the_load_keeps_it_loud(tmp_path):
    handed = _FINETUNE.replace("        if args", "        prepare(model)\n        if args")
    _project(tmp_path, finetune=handed)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_a_load_in_a_loop_after_one_build_keeps_it_loud(tmp_path):
    looped = """
        from model import Net

        def main(paths, device):
            model = Net(4)
            for path in paths:
                model.from_pretrained(path)
                model.to(device)
    """
    _project(tmp_path, finetune=looped)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_a_class_that_moves_itself_keeps_it_loud(tmp_path):
    moving = _MODEL.replace("self.head = nn.Linear(n, 1)", "self.head = nn.Linear(n, 1)\n            self.cuda()")
    write_project(tmp_path, {"model.py": moving, "finetune.py": _FINETUNE})
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE + 1]


def test_a_model_built_with_a_device_keeps_it_loud(tmp_path):
    placed = _FINETUNE.replace("Net(args.n)", "Net(args.n, device=device)")
    _project(tmp_path, finetune=placed)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_a_project_builder_of_a_cpu_class_counts_as_its_constructor(tmp_path):
    builder = """
        from model import Net

        def build_model(cfg):
            model = Net(cfg.n)
            return model
    """
    caller = _FINETUNE.replace("from model import Net", "from modeling import build_model").replace(
        "Net(args.n)", "build_model(args)"
    )
    _project(tmp_path, modeling=builder, finetune=caller)
    assert finding_lines(tmp_path / "model.py", "MEM701") == []


def test_a_builder_that_moves_keeps_it_loud(tmp_path):
    builder = """
        from model import Net

        def build_model(cfg):
            return Net(cfg.n).cuda()
    """
    caller = _FINETUNE.replace("from model import Net", "from modeling import build_model").replace(
        "Net(args.n)", "build_model(args)"
    )
    _project(tmp_path, modeling=builder, finetune=caller)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]


def test_a_call_that_runs_another_modules_own_method_does_not_count(tmp_path):
    """bio/finetune.py builds bio/model.py's class, which defines the method
    itself: its call never runs chem/model.py's."""
    other = _MODEL.replace("self.head = nn.Linear(n, 1)", "self.head = nn.Linear(n, 1)\n            self.cuda()")
    write_project(
        tmp_path,
        {
            "chem/model.py": _MODEL,
            "chem/finetune.py": _FINETUNE,
            "bio/model.py": other,
            "bio/finetune.py": _FINETUNE,
        },
    )
    assert finding_lines(tmp_path / "chem" / "model.py", "MEM701") == []
    assert finding_lines(tmp_path / "bio" / "model.py", "MEM701") == [_LOAD_LINE + 1]


_MAKE_OPTIMIZER = """
    import torch

    def make_optimizer(cfg, model):
        params = [{"params": [p], "lr": cfg.lr} for p in model.parameters()]
        return getattr(torch.optim, cfg.name)(params)
"""

_TRAIN = """
    import torch
    from model import Net
    from solver import make_optimizer

    def train(cfg, path, device):
        model = Net(cfg.n)
        optimizer = make_optimizer(cfg, model)
        model.load_state_dict(torch.load(path))
        optimizer.load_state_dict(torch.load(path + ".opt"))
        model.to(device)
"""


def test_an_optimizer_a_project_helper_builds_over_a_cpu_model(tmp_path):
    write_project(tmp_path, {"model.py": _MODEL, "solver.py": _MAKE_OPTIMIZER, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM701") == []


def test_an_optimizer_of_a_model_moved_before_its_load_stays_loud(tmp_path):
    moved = _TRAIN.replace(
        "        optimizer.load_state_dict", "        model.to(device)\n        optimizer.load_state_dict"
    )
    write_project(tmp_path, {"model.py": _MODEL, "solver.py": _MAKE_OPTIMIZER, "train.py": moved})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [11]


def test_an_optimizer_helper_handed_a_device_or_a_moving_helper_stays_loud(tmp_path):
    with_device = _TRAIN.replace("make_optimizer(cfg, model)", "make_optimizer(cfg, model, device)")
    write_project(tmp_path, {"model.py": _MODEL, "solver.py": _MAKE_OPTIMIZER, "train.py": with_device})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [10]
    moving = _MAKE_OPTIMIZER.replace("    params =", "    model.cuda()\n    params =")
    write_project(tmp_path, {"model.py": _MODEL, "solver.py": moving, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [9, 10]


# -- the summary's proof, on Python's ast ---------------------------------------


def _proof(source: str) -> str | None:
    tree = ast.parse(textwrap.dedent(source))
    fn = tree.body[-1]
    assert isinstance(fn, ast.FunctionDef)
    call = next(
        n
        for n in ast.walk(fn)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "from_pretrained"
    )
    mentions = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == "model" and n is not call.func.value]
    nested = [n for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef, ast.Lambda, ast.ListComp)) and n is not fn]
    built = fresh_receiver(fn.body, "model", call, mentions, nested)
    return ast.unparse(built.func) if built is not None else None


def test_fresh_receiver_follows_the_binding_into_nested_blocks():
    assert (
        _proof("""
        def main(a):
            model = Net(a.n).eval()
            with open(a.log) as fh:
                if a.pre:
                    model.from_pretrained(a.path)
    """)
        == "Net"
    )


def test_fresh_receiver_refuses_what_it_cannot_prove():
    refused = {
        "bound in a branch": """
            def main(a):
                if a.x:
                    model = Net(1)
                model.from_pretrained(a.path)
        """,
        "named in between": """
            def main(a):
                model = Net(1)
                log(model)
                model.from_pretrained(a.path)
        """,
        "named in its own arguments": """
            def main(a):
                model = Net(1)
                model.from_pretrained(place(model))
        """,
        "named by a nested function": """
            def main(a):
                model = Net(1)
                hook = lambda: model.cuda()
                model.from_pretrained(a.path)
        """,
        "a loop between": """
            def main(a):
                model = Net(1)
                while a.more():
                    model.from_pretrained(a.path)
        """,
        "in a comprehension": """
            def main(a):
                model = Net(1)
                [model.from_pretrained(p) for p in a.paths]
        """,
        "built under a device": """
            def main(a):
                with torch.device("cuda"):
                    model = Net(1)
                    model.from_pretrained(a.path)
        """,
        "built with a device": """
            def main(a):
                model = Net(1, device="cuda")
                model.from_pretrained(a.path)
        """,
        "built and moved": """
            def main(a):
                model = Net(1).cuda()
                model.from_pretrained(a.path)
        """,
        "built with **kwargs": """
            def main(a, **kw):
                model = Net(1, **kw)
                model.from_pretrained(a.path)
        """,
    }
    for why, source in refused.items():
        assert _proof(source) is None, why


def test_the_summary_keeps_only_names_every_use_of_which_is_proven():
    proven = summarise_text(textwrap.dedent(_FINETUNE), always=True)
    assert proven is not None
    assert proven.loading_uses == ["from_pretrained"]
    assert proven.loading_cpu_uses == ["from_pretrained=model.Net"]
    mixed = textwrap.dedent(_FINETUNE) + "\ndef again(model, p):\n    model.from_pretrained(p)\n"
    summary = summarise_text(mixed, always=True)
    assert summary is not None
    assert summary.loading_uses == ["from_pretrained"]
    assert summary.loading_cpu_uses == []


def test_cpu_only_users_needs_every_user_proven():
    def users(entries):
        return lambda name: iter(entries)

    cpu = lambda spelled, where: spelled == "model.Net"  # noqa: E731
    own = lambda spelled, where, name: spelled == "bio.Net"  # noqa: E731
    assert cpu_only_users(["load"], users([("a.py", ["load=model.Net"])]), cpu, own) == ["load"]
    assert cpu_only_users(["load"], users([("a.py", ["load=bio.Net"])]), cpu, own) == ["load"]
    assert cpu_only_users(["load"], users([("a.py", ["load=model.Net"]), ("b.py", [])]), cpu, own) == []
    assert cpu_only_users(["load"], users([("a.py", ["load=model.Net", "load=x.Gpu"])]), cpu, own) == []
    assert cpu_only_users(["load"], users([]), cpu, own) == []


_TEMPLATE = """
    import torch
    import torch.nn as nn

    class Transfer(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.base = nn.Linear(8, 4)
            self.fc = nn.Linear(4, classes)

        def load_from_pretrain(self, path):
            checkpoint = torch.load(path)
            self.base.load_state_dict(checkpoint["model"])

    def train(args, device):
        Model = eval(args.model_type)
        model = Model(args.classes)
        if args.pretrained:
            model.load_from_pretrain(args.pretrained)
        model = torch.nn.DataParallel(model)
        model.to(device)
"""


def test_a_class_picked_by_eval_at_run_time_is_not_claimed(tmp_path):
    """audioset's finetune_template: ``Model = eval(model_type)`` builds a
    class not known here, without a device; the loading method's one call
    comes before the move."""
    write_project(tmp_path, {"finetune_template.py": _TEMPLATE})
    assert finding_lines(tmp_path / "finetune_template.py", "MEM701") == []
    moved = _TEMPLATE.replace("        if args.pretrained:", "        model.to(device)\n        if args.pretrained:")
    write_project(tmp_path, {"finetune_template.py": moved})
    assert finding_lines(tmp_path / "finetune_template.py", "MEM701") == [12]


def test_the_language_servers_view_says_the_same(tmp_path):
    import memlint.project.index as index
    from memlint.project.index import view_from_disk
    from memlint.project.live import Workspace

    _project(tmp_path, finetune=_FINETUNE, setup="")
    index._MEMO.clear()
    disk = view_from_disk(str(tmp_path / "model.py"))
    assert disk is not None and disk.loading_cpu_elsewhere == ("from_pretrained",)
    assert Workspace().view(str(tmp_path / "model.py")) == disk


def test_a_caller_module_that_sets_a_default_device_keeps_it_loud(tmp_path):
    placed = _FINETUNE.replace(
        "from model import Net", 'import torch\n    from model import Net\n    torch.set_default_device("cuda")'
    )
    summary = summarise_text(textwrap.dedent(placed), always=True)
    assert summary is not None and summary.loading_uses == ["from_pretrained"] and summary.loading_cpu_uses == []
    _project(tmp_path, finetune=placed)
    assert finding_lines(tmp_path / "model.py", "MEM701") == [_LOAD_LINE]
