"""A named method of a model the project cannot type (issue 29, ST-GCN's
``self.model.extract_feature(data)``; the model class comes from a config
string): the call is a forward when every project class defining that
method is an ``nn.Module`` that runs one of its layers in it. Each file is
linted in process with its project view."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_NET = """\
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fcn = nn.Linear(2, 2)

        def forward(self, x):
            return self.fcn(x)

        def extract_feature(self, x):
            return self.fcn(x), x
"""

_IO = """\
    from importlib import import_module

    class IO:
        def __init__(self, name):
            self.model = import_module(name).Model()
"""

_DEMO = """\
    import torch
    from io_base import IO

    class Demo(IO):
        def start(self, frames):
            self.model.eval()
            while True:
                data = torch.from_numpy(frames.read())
                output = self.predict(data)
                print(output.argmax())

        def predict(self, data):
            output, feature = self.model.extract_feature(data)
            return output
"""


def test_a_named_method_that_runs_the_models_layers_is_a_forward(tmp_path):
    write_project(tmp_path, {"net.py": _NET, "io_base.py": _IO, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == [7]


def test_a_named_method_that_runs_no_layer_is_no_forward(tmp_path):
    net = _NET.replace("return self.fcn(x), x", "return self.fcn.weight, x")
    write_project(tmp_path, {"net.py": net, "io_base.py": _IO, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == []


def test_a_method_name_some_non_model_class_defines_too_stays_unknown(tmp_path):
    other = """\
        class Reader:
            def extract_feature(self, x):
                return x, x
    """
    write_project(tmp_path, {"net.py": _NET, "io_base.py": _IO, "reader.py": other, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == []
