"""Settings, never a model (issue 29, the sixteenth batch: CodeT5): an
argparse namespace returned by a project function (``args =
add_args(parser)`` in configs.py) and a configuration read by
``from_pretrained``, handed to a model's constructor beside the encoder."""

from __future__ import annotations

import ast

from project_helpers import finding_lines, write_project

from memlint.vocabulary.settings_values import config_reader, settings_functions

_FUNCTIONS = """\
import argparse
def add_args(parser):
    parser.add_argument("--x")
    args = parser.parse_args()
    args.lang = "java"
    return args
def known(p):
    args, rest = p.parse_known_args()
    return args
def first(p):
    return p.parse_known_args()[0]
def namespace(d):
    return argparse.Namespace(**d)
def guarded(p):
    if p is None:
        return
    return p.parse_args()
def rebound(p):
    args = p.parse_args()
    args = Net()
    return args
def handed(p):
    return p
def second(p):
    rest, args = p.parse_known_args()
    return args
def nothing(p):
    return None
"""


def test_functions_whose_every_return_is_an_argparse_namespace():
    assert settings_functions(ast.parse(_FUNCTIONS)) == ["add_args", "known", "first", "namespace", "guarded"]


def test_configuration_readers_by_their_class_name():
    for spelled in ("RobertaConfig.from_pretrained", "transformers.AutoConfig.from_pretrained"):
        assert config_reader(spelled)
    assert config_reader("config_class.from_pretrained") and config_reader("T5Config.from_json_file")
    for spelled in ("model_class.from_pretrained", "BertModel.from_pretrained", "ConfigNet.from_pretrained"):
        assert not config_reader(spelled)
    assert not config_reader("RobertaConfig")


_CONFIGS = """\
def add_args(parser):
    parser.add_argument("--name")
    args = parser.parse_args()
    return args
"""

_RUN = """\
import argparse
import torch
import torch.nn as nn
from transformers import RobertaModel
from configs import add_args


class DefectModel(nn.Module):
    def __init__(self, encoder, args):
        super().__init__()
        self.encoder = encoder
        self.args = args


def main():
    args = add_args(argparse.ArgumentParser())
    model = DefectModel(RobertaModel.from_pretrained(args.name), args)
    model.load_state_dict(torch.load(args.load_model_path))
    model.to(torch.device("cuda"))
"""


def test_a_namespace_from_another_module_handed_to_a_wrapper_is_no_model(tmp_path):
    write_project(tmp_path, {".git/HEAD": "", "configs.py": _CONFIGS, "run.py": _RUN})
    assert finding_lines(tmp_path / "run.py", "MEM701") == []
    returns_model = _CONFIGS.replace("    return args", "    return RobertaModel().cuda()")
    write_project(tmp_path, {"configs.py": "from transformers import RobertaModel\n" + returns_model})
    assert finding_lines(tmp_path / "run.py", "MEM701") == [18]
