"""MEM701 across modules: a ``torch.load`` handed to a project function of
another module that passes it on to ``load_state_dict`` (project/
state_helpers.py: FunctionFacts.state_params and gpu_return; ProjectView.
state_loaders and gpu_builders). Reported at the load, without a fix, when
the receiving model is on a device: one the helper moved itself, or the
caller's model, moved (or built by a project function returning a moved
model) before the call; silent for a model on the CPU or not known."""

from __future__ import annotations

import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise_text


def _facts(text: str) -> dict[str, tuple[tuple[tuple[str, str], ...], bool]]:
    summary = summarise_text(textwrap.dedent(text), always=True)
    assert summary is not None
    return {f.name: (f.state_params, f.gpu_return) for f in summary.functions}


# -- the summary -----------------------------------------------------------------


def test_a_filtered_state_merged_then_loaded_reaches_the_model_parameter():
    facts = _facts(
        """\
        def load_pretrained_model(model, pretrained_dict):
            model_dict = model.state_dict()
            pretrained_dict = {k: v for k, v in pretrained_dict.items() if k in model_dict}
            model_dict.update(pretrained_dict)
            model.load_state_dict(model_dict)
        """
    )
    assert facts["load_pretrained_model"] == ((("pretrained_dict", "model"),), False)


def test_an_entry_popped_from_the_state_is_the_states_own_tensors():
    facts = _facts(
        """\
        def restore(model, checkpoint):
            model.load_state_dict(checkpoint.pop("model"))
        def rebuild(model, checkpoint):
            model.load_state_dict(checkpoint.popitem())
        """
    )
    assert facts["restore"] == ((("checkpoint", "model"),), False)
    assert facts.get("rebuild", ((), False))[0] == ()


def test_a_model_built_by_a_function_that_moves_it_is_the_helpers_own():
    facts = _facts(
        """\
        import torch
        models = {}
        def make(name, **kwargs):
            model = models[name](**kwargs)
            if torch.cuda.is_available():
                model.cuda()
            return model
        def load(model_sv, name="model"):
            model = make(model_sv[name], **model_sv[name + "_args"])
            model.load_state_dict(model_sv[name + "_sd"])
            return model
        """
    )
    assert facts["make"] == ((), True)
    # ``load`` hands back ``make``'s moved model: a caller binds a model on a
    # device from it too (state_helpers.returns_builder_result).
    assert facts["load"] == ((("model_sv", ""),), True)


def test_a_model_moved_on_one_path_is_returned_on_a_device():
    facts = _facts(
        """\
        import torch
        def define(net, cuda=True):
            if cuda:
                net = torch.nn.DataParallel(net).cuda()
            else:
                net = torch.nn.DataParallel(net)
            return net
        def back(net):
            net = net.cuda()
            net.cpu()
            return net
        def opt_in(net, cuda=False):
            if cuda:
                net = net.cuda()
            return net
        """
    )
    assert facts["define"] == ((), True)
    assert facts["back"] == ((), False)
    assert facts["opt_in"] == ((), False)  # by default the model stays on the CPU


def test_traps_record_nothing():
    facts = _facts(
        """\
        import torch
        def to_cpu_first(model, sd):
            model.cpu()
            model.load_state_dict(sd)
        def converted(model, sd):
            model.load_state_dict({k: v.cpu() for k, v in sd.items()})
        def reloaded(model, sd):
            sd = torch.load(sd, map_location="cpu")
            model.load_state_dict(sd)
        def handed_on(model, sd):
            model = wrap(model)
            model.load_state_dict(sd)
        def never_loads(model, sd):
            model.register_buffer("x", sd["x"])
            model.load_state_dict
        def built_here_on_cpu(sd):
            model = torch.nn.Linear(4, 2)
            model.load_state_dict(sd)
        """
    )
    assert all(state == () for state, _gpu in facts.values())


def test_the_summary_round_trips_through_json():
    from memlint.project.summary import ModuleSummary

    summary = summarise_text(
        "import torch\ndef load(model, sd):\n    model.load_state_dict(sd)\ndef make(m):\n    return m.cuda()\n",
        always=True,
    )
    assert summary is not None
    again = ModuleSummary.from_json(summary.to_json())
    assert {(f.name, f.state_params, f.gpu_return) for f in again.functions} == {
        ("load", (("sd", "model"),), False),
        ("make", (), True),
    }


# -- the rule, across modules -------------------------------------------------------

_UTILS = """\
    import torch
    def load_pretrained_model(model, pretrained_dict):
        model_dict = model.state_dict()
        pretrained_dict = {k: v for k, v in pretrained_dict.items() if k in model_dict}
        model_dict.update(pretrained_dict)
        model.load_state_dict(model_dict)
"""

_NETWORK = """\
    import torch
    import torch.nn as nn
    def define_net(cuda=True):
        net = nn.Linear(4, 2)
        if cuda:
            net = torch.nn.DataParallel(net).cuda()
        return net
"""

_MODELS = """\
    import torch
    import torch.nn as nn
    def make(n):
        model = nn.Linear(n, 2)
        if torch.cuda.is_available():
            model.cuda()
        return model
    def load(model_sv):
        model = make(model_sv["n"])
        model.load_state_dict(model_sv["model_sd"])
        return model
    def load_on_cpu(model_sv):
        model = nn.Linear(model_sv["n"], 2)
        model.load_state_dict(model_sv["model_sd"])
        return model
    def load_path(model, path):
        model.load_state_dict(torch.load(path, map_location="cpu"))
"""


def _project(tmp_path, train: str):
    write_project(
        tmp_path,
        {"setup.py": "", "utils.py": _UTILS, "network.py": _NETWORK, "models.py": _MODELS, "train.py": train},
    )
    return tmp_path / "train.py"


def test_a_load_handed_to_a_helper_loading_into_a_gpu_model_is_reported(tmp_path):
    train = """\
        import torch
        from utils import load_pretrained_model
        from network import define_net
        def main(args):
            snet = define_net(cuda=args.cuda)
            checkpoint = torch.load(args.s_init)
            load_pretrained_model(snet, checkpoint["net"])
    """
    assert finding_lines(_project(tmp_path, train), "MEM701") == [6]


def test_the_message_names_the_helper_and_there_is_no_fix(tmp_path):
    from memlint.lint.engine import lint_text
    from memlint.project.index import view_from_disk
    from memlint.rule.registry import all_rules

    train = """\
        import torch
        import models
        def main(path):
            model = models.load(torch.load(path))
    """
    path = _project(tmp_path, train)
    found = lint_text(path.read_text(), str(path), all_rules(), project=lambda: view_from_disk(str(path)))
    (finding,) = [f for f in found if f.code == "MEM701"]
    assert finding.line == 4 and "models.load" in finding.message and "models.py" in finding.message
    assert finding.fix is None


def test_a_model_moved_in_the_caller_before_the_call_counts(tmp_path):
    train = """\
        import torch
        import torch.nn as nn
        from utils import load_pretrained_model
        def main(path):
            net = nn.Linear(4, 2)
            net.cuda()
            state = torch.load(path)
            load_pretrained_model(net, state)
    """
    assert finding_lines(_project(tmp_path, train), "MEM701") == [7]


def test_valid_traps_stay_silent(tmp_path):
    train = """\
        import torch
        import torch.nn as nn
        import models
        from network import define_net
        from utils import load_pretrained_model
        def on_cpu(path):
            net = nn.Linear(4, 2)
            load_pretrained_model(net, torch.load(path))
            net.cuda()
        def unknown(net, path):
            load_pretrained_model(net, torch.load(path))
        def mapped(path):
            net = nn.Linear(4, 2).cuda()
            load_pretrained_model(net, torch.load(path, map_location="cpu"))
        def helper_on_cpu(path):
            return models.load_on_cpu(torch.load(path))
        def helper_maps(path):
            net = nn.Linear(4, 2).cuda()
            models.load_path(net, path)
        def kept_on_cpu(path):
            snet = define_net(cuda=False)
            load_pretrained_model(snet, torch.load(path))
        def not_a_loader(path):
            net = nn.Linear(4, 2).cuda()
            print(net, torch.load(path))
    """
    assert finding_lines(_project(tmp_path, train), "MEM701") == []


# -- a state copied entry by entry into a dict, then loaded (s31) -----------------


def test_entries_stored_into_the_models_own_state_reach_its_load():
    facts = _facts(
        """\
        def load_matched(model, state_dict, quiet=False):
            own = model.state_dict()
            for key in own.keys():
                if key in state_dict and own[key].shape == state_dict[key].shape:
                    own[key] = state_dict[key]
            model.load_state_dict(own)
        """
    )
    assert facts["load_matched"] == ((("state_dict", "model"),), False)


def test_entries_stored_after_a_conversion_or_into_another_model_record_nothing():
    facts = _facts(
        """\
        def converted(model, state_dict):
            own = model.state_dict()
            for key in own.keys():
                own[key] = state_dict[key].cpu()
            model.load_state_dict(own)
        def never_loaded(model, other, state_dict):
            own = other.state_dict()
            for key in own.keys():
                own[key] = state_dict[key]
            print(own)
            model.load_state_dict(model.state_dict())
        """
    )
    assert facts["converted"] == ((), False)
    assert facts["never_loaded"] == ((), False)


_MATCHED = """\
    def load_matched(model, state_dict):
        own = model.state_dict()
        for key in own.keys():
            if key in state_dict:
                own[key] = state_dict[key]
        model.load_state_dict(own)
"""


def test_a_helper_module_without_a_torch_word_is_still_read(tmp_path):
    # BackgroundMattingV2's model/utils.py never writes "torch": the summary
    # reads it for its ``.load_state_dict(`` (summary._WORTH).
    train = """\
        import torch
        import torch.nn as nn
        from helpers import load_matched
        def gpu(path):
            net = nn.Linear(4, 2).cuda()
            load_matched(net, torch.load(path))
        def cpu(path):
            net = nn.Linear(4, 2)
            load_matched(net, torch.load(path))
        def mapped(path):
            net = nn.Linear(4, 2).cuda()
            load_matched(net, torch.load(path, map_location="cpu"))
    """
    write_project(tmp_path, {"setup.py": "", "helpers.py": _MATCHED, "train.py": train})
    assert finding_lines(tmp_path / "train.py", "MEM701") == [6]
