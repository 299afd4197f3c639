"""MEM701 loads into a model an imported builder assembles from helpers that
return plain lists of fresh layers (issue 29, the sixteenth batch: zsgnet's
``ssd_vgg.build_ssd``): bare ``return``s in its error branches, locals bound
by tuple unpacking, and ``vgg(...)``/``multibox(...)`` returning lists."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.project.cpu_builders import builders
from memlint.project.layer_functions import layer_functions
from memlint.project.layer_lists import list_values

_SSD = """\
import torch.nn as nn


class SSD(nn.Module):
    def __init__(self, base, extras, head):
        super().__init__()
        self.vgg = nn.ModuleList(base)
        self.extras = nn.ModuleList(extras)
        self.loc = nn.ModuleList(head[0])


def vgg(cfg, i):
    layers = []
    for v in cfg:
        conv2d = nn.Conv2d(i, v, kernel_size=3)
        layers += [conv2d, nn.ReLU(inplace=True)]
        i = v
    return layers


def add_extras(cfg, i):
    layers = []
    for v in cfg:
        layers += [nn.Conv2d(i, v, kernel_size=1)]
    return layers


def multibox(vgg, extra_layers, cfg):
    loc_layers = []
    for k, v in enumerate(cfg):
        loc_layers += [nn.Conv2d(vgg[v].out_channels, 4, kernel_size=3)]
    return vgg, extra_layers, (loc_layers,)


def build_ssd(phase, size=300):
    if phase != "train":
        print("unknown phase")
        return
    base_, extras_, head_ = multibox(vgg([64, 64], 3), add_extras([256], 1024), [4, 6])
    return SSD(base_, extras_, head_)
"""

_NET = """\
import torch
import ssd_vgg


def get_default_net():
    encoder = ssd_vgg.build_ssd("train")
    encoder.vgg.load_state_dict(torch.load("./weights/vgg16_reducedfc.pth"))
    return encoder
"""


def _functions(source: str) -> tuple[ast.Module, list[str]]:
    tree = ast.parse(source)
    return tree, [s.name for s in tree.body if isinstance(s, ast.FunctionDef)]


def test_helpers_returning_lists_of_fresh_layers_make_the_builder_a_cpu_builder():
    tree, functions = _functions(_SSD)
    assert builders(tree, ["SSD"], functions)[0] == ["build_ssd"]


def test_layer_functions_are_those_returning_fresh_lists_or_their_parameters():
    tree, _ = _functions(_SSD)
    defs = [s for s in tree.body if isinstance(s, ast.FunctionDef)]
    fresh = layer_functions(defs, lambda value, values, stores: isinstance(value, (ast.Call, ast.Name)))
    assert fresh == {"vgg", "add_extras", "multibox"}


def test_list_values_reads_a_returned_list_only_when_asked():
    fn = next(s for s in ast.parse(_SSD).body if isinstance(s, ast.FunctionDef) and s.name == "vgg")
    assert list_values(fn, "layers") is None
    values = list_values(fn, "layers", returned=True)
    assert values is not None
    assert sorted(ast.unparse(v) for v in values) == ["conv2d", "nn.ReLU(inplace=True)"]


def test_a_helper_list_given_a_model_moved_or_grown_from_outside_is_not_claimed():
    moved = _SSD.replace("kernel_size=1)]", "kernel_size=1).cuda()]")
    model = _SSD.replace("layers += [nn.Conv2d(i, v, kernel_size=1)]", "layers += [net]")
    grown = _SSD.replace("    return vgg, extra_layers", "    vgg.append(net)\n    return vgg, extra_layers")
    handed = _SSD.replace("multibox(vgg([64, 64], 3)", "multibox(net")
    only_none = _SSD.replace("    return SSD(base_, extras_, head_)", "    return")
    for source in (moved, model, grown, handed, only_none):
        tree, functions = _functions(source)
        assert builders(tree, ["SSD"], functions)[0] == [], source


def test_a_load_into_part_of_an_imported_layer_list_builder_is_silent(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "ssd_vgg.py": _SSD, "mdl.py": _NET})
    assert finding_lines(tmp_path / "mdl.py", "MEM701") == []
    write_project(tmp_path, {"ssd_vgg.py": _SSD.replace("kernel_size=1)]", "kernel_size=1).cuda()]")})
    assert finding_lines(tmp_path / "mdl.py", "MEM701") == [7]


def test_the_summary_walks_each_builder_candidate_once(monkeypatch):
    # The layer functions, the builder's returns and locals, and each local
    # list's values all read one list of the candidate's nodes: the
    # summary's node lists (each was a walk more of the same function).
    from memlint.project import cpu_builders, layer_lists, node_lists
    from memlint.project import layer_functions as layer_module
    from memlint.project.summary import summarise

    def refused(node):
        raise AssertionError(f"walked {node}")

    real = node_lists.nodes
    walked: list[int] = []

    def counted(node):
        walked.append(id(node))
        return real(node)

    def not_a_function(node):
        assert not isinstance(node, ast.FunctionDef), node.name
        return real(node)

    monkeypatch.setattr(layer_module, "nodes", refused)
    monkeypatch.setattr(layer_lists, "nodes", refused)
    monkeypatch.setattr(cpu_builders, "nodes", not_a_function)
    monkeypatch.setattr(node_lists, "nodes", counted)
    assert summarise(ast.parse(_SSD)).cpu_builders == ["build_ssd"]
    assert len(walked) == len(set(walked))
