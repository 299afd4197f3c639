"""The models a call hands over on a device (project/gpu_args.py, CallSite.gpu_args
and Caller.gpu_args), and MEM701 on a load drawn into such a parameter
(analysis/training/device_params.py)."""

from __future__ import annotations

import ast
import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.gpu_args import gpu_arg_calls
from memlint.project.summary import ModuleSummary, summarise_text


def _args(text: str) -> dict[int, list[tuple[str, list[str]]]]:
    tree = ast.parse(textwrap.dedent(text))
    found = gpu_arg_calls(tree.body)
    return {
        c.lineno: [(key, [ast.unparse(b.func) for b in via]) for key, via in found[id(c)]]
        for c in ast.walk(tree)
        if isinstance(c, ast.Call) and id(c) in found
    }


def test_a_model_moved_or_bound_from_calls_in_every_branch_is_recorded():
    assert _args(
        """\
        if a:
            model = Net(1).to(device)
        elif b:
            model = make(x)
        else:
            raise E
        get(p, model, device)
        other = Net()
        other.cuda()
        get(p, model=other)
        """
    ) == {7: [("1", ["make"])], 10: [("model", [])]}


def test_traps_record_nothing():
    assert (
        _args(
            """\
        net = Net().cuda()
        for net in nets:
            pass
        get(p, net)
        cpu = make(cuda=False)
        get(p, cpu)
        moved = Net().cuda()
        moved = moved.cpu()
        get(p, moved)
        def f(model):
            get(p, model)
        """
        )
        == {}
    )


def test_the_summary_keeps_the_spelling_of_the_builders_and_round_trips():
    summary = summarise_text(
        textwrap.dedent(
            """\
            import torch
            import lib.utils as utils
            from lib.build import make_model
            def build_here():
                return torch.nn.Linear(2, 2).cuda()
            if a:
                model = make_model(3)
            else:
                model = build_here()
            model.eval().to("cuda")
            utils.restore(path, model)
            net = make_model(3)
            utils.restore(path, net)
            """
        ),
        always=True,
    )
    assert summary is not None
    again = ModuleSummary.from_json(summary.to_json())
    sites = {(c.written, c.line): c.gpu_args for c in again.calls if c.written == "utils.restore"}
    # ``model.eval().to("cuda")`` moves no name (a chain); a function of this module is ":name".
    assert sites == {
        ("utils.restore", 11): (("1", ("lib.build.make_model", ":build_here")),),
        ("utils.restore", 13): (("1", ("lib.build.make_model",)),),
    }


# -- the rule, across modules -------------------------------------------------------

_UTILS = """\
    import os
    import torch
    def get_ckpt_model(ckpt_path, model, device):
        checkpt = torch.load(ckpt_path)
        state_dict = checkpt["state_dict"]
        model_dict = model.state_dict()
        state_dict = {k: v for k, v in state_dict.items() if k in model_dict}
        model_dict.update(state_dict)
        model.load_state_dict(state_dict)
        model.to(device)
"""

_BUILD = """\
    import torch.nn as nn
    def create_model(n, device):
        return nn.Linear(n, 2).to(device)
    def create_cpu_model(n):
        return nn.Linear(n, 2)
"""


def _project(tmp_path, run: str):
    write_project(
        tmp_path, {"setup.py": "", "lib/__init__.py": "", "lib/utils.py": _UTILS, "lib/build.py": _BUILD, "run.py": run}
    )
    return tmp_path / "lib" / "utils.py"


def test_a_load_drawn_into_a_parameter_every_caller_moved_is_reported(tmp_path):
    run = """\
        import torch.nn as nn
        import lib.utils as utils
        from lib.build import create_model
        def main(args, device):
            if args.rnn:
                model = nn.GRU(4, 4).to(device)
            elif args.latent:
                model = create_model(4, device)
            else:
                raise ValueError(args)
            utils.get_ckpt_model(args.path, model, device)
    """
    assert finding_lines(_project(tmp_path, run), "MEM701") == [4]


def test_the_message_names_the_caller_and_there_is_no_fix(tmp_path):
    from memlint.lint.engine import lint_text
    from memlint.project.index import view_from_disk
    from memlint.rule.registry import all_rules

    run = """\
        import torch.nn as nn
        from lib.utils import get_ckpt_model
        def main(path, device):
            model = nn.Linear(4, 2).to(device)
            get_ckpt_model(path, model, device)
    """
    path = _project(tmp_path, run)
    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    (finding,) = [f for f in found if f.code == "MEM701"]
    assert finding.line == 4 and "run.py:5" in finding.message
    assert finding.fix is None


def test_valid_traps_stay_silent(tmp_path):
    for run in (
        # a model still on the CPU at the call
        """\
        import torch.nn as nn
        from lib.utils import get_ckpt_model
        def main(path, device):
            model = nn.Linear(4, 2)
            get_ckpt_model(path, model, device)
        """,
        # a builder that moves nothing
        """\
        from lib.build import create_cpu_model
        from lib.utils import get_ckpt_model
        def main(path, device):
            model = create_cpu_model(4)
            get_ckpt_model(path, model, device)
        """,
        # one caller on a device, another on the CPU
        """\
        import torch.nn as nn
        from lib.utils import get_ckpt_model
        def main(path, device):
            model = nn.Linear(4, 2).cuda()
            get_ckpt_model(path, model, device)
        def other(path, device):
            get_ckpt_model(path, nn.Linear(4, 2), device)
        """,
        # a model of unknown place: a parameter of the caller
        """\
        from lib.utils import get_ckpt_model
        def main(path, model, device):
            get_ckpt_model(path, model, device)
        """,
    ):
        assert finding_lines(_project(tmp_path, run), "MEM701") == [], run


def test_a_same_file_helper_called_with_moved_models_is_reported(tmp_path):
    write_project(
        tmp_path,
        {
            "setup.py": "",
            "train.py": """\
                import torch
                import torch.nn as nn
                use_cuda = torch.cuda.is_available()
                def _load(path):
                    if use_cuda:
                        checkpoint = torch.load(path)
                    else:
                        checkpoint = torch.load(path, map_location=lambda storage, loc: storage)
                    return checkpoint
                def load_checkpoint(path, model):
                    s = _load(path)["state_dict"]
                    new_s = {}
                    for k, v in s.items():
                        new_s[k.replace("module.", "")] = v
                    model.load_state_dict(new_s)
                syncnet = nn.Linear(4, 2).cuda()
                if __name__ == "__main__":
                    model = nn.Linear(4, 2).cuda()
                    load_checkpoint("a.pth", model)
                    load_checkpoint("b.pth", syncnet)
            """,
        },
    )
    assert finding_lines(tmp_path / "train.py", "MEM701") == [6]
