"""A model whose ``forward`` needs autograd (issue 29, IDR's renderer:
``IDRNetwork.forward`` runs ``self.implicit_network.gradient(x)``, which runs
``torch.autograd.grad`` for the surface normals): an evaluation loop over it
with grad on is no waste, and stays silent, whether the project types the
model or builds it from a class looked up at run time by a config string
(project/grad_forwards.py). The same project without the gradient, or with
a class the lookup can name that needs none, is reported."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_NETWORK = """\
    import torch
    from torch import nn

    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x):
            return self.fc(x)

        def gradient(self, x):
            x.requires_grad_(True)
            y = self.forward(x)
            return torch.autograd.grad(y, x, torch.ones_like(y), create_graph=True)[0]

    class Renderer(nn.Module):
        def __init__(self):
            super().__init__()
            self.field = Field()
            self.head = nn.Linear(3, 3)

        def forward(self, x):
            normals = self.field.gradient(x)
            return self.head(normals)
"""

_UTILS = """\
    def get_class(kls):
        parts = kls.split(".")
        m = __import__(".".join(parts[:-1]))
        for comp in parts[1:]:
            m = getattr(m, comp)
        return m
"""

_LOOKED_UP = """\
    import torch
    import utils

    def evaluate(conf, loader, path):
        model = utils.get_class(conf.model_class)(conf=conf)
        model.cuda()
        model.load_state_dict(torch.load(path, map_location="cpu"))
        model.eval()
        for x in loader:
            out = model(x.cuda())
            print(out.detach().mean().item())
"""

_TYPED = """\
    import torch
    from network import Renderer

    def evaluate(loader):
        model = Renderer().cuda()
        model.eval()
        for x in loader:
            out = model(x.cuda())
            print(out.detach().mean().item())
"""

_NO_GRADIENT = _NETWORK.replace("normals = self.field.gradient(x)", "normals = self.field(x)")


def _lines(tmp_path, network=_NETWORK, script=_LOOKED_UP):
    write_project(
        tmp_path,
        {"network.py": network, "utils.py": _UTILS, "eval.py": script, "setup.py": "", "__init__.py": ""},
    )
    return finding_lines(tmp_path / "eval.py", "MEM201")


def test_a_model_looked_up_at_run_time_in_a_project_whose_forward_needs_grad_is_silent(tmp_path):
    assert _lines(tmp_path) == []


def test_a_typed_model_whose_forward_runs_an_attributes_autograd_grad_is_silent(tmp_path):
    assert _lines(tmp_path, script=_TYPED) == []


def test_a_forward_calling_autograd_grad_itself_needs_grad(tmp_path):
    network = _NETWORK.replace(
        "normals = self.field.gradient(x)",
        "x.requires_grad_(True)\n            normals = torch.autograd.grad(self.field(x).sum(), x, create_graph=True)[0]",
    )
    assert network != _NETWORK
    assert _lines(tmp_path, network, _TYPED) == []


def test_without_the_gradient_the_looked_up_model_is_reported(tmp_path):
    assert _NO_GRADIENT != _NETWORK
    assert _lines(tmp_path, _NO_GRADIENT) == [9]


def test_without_the_gradient_the_typed_model_is_reported(tmp_path):
    assert _lines(tmp_path, _NO_GRADIENT, _TYPED) == [7]


def test_a_gradient_in_a_method_forward_never_calls_is_no_need(tmp_path):
    network = _NO_GRADIENT + "\n        def normals(self, x):\n            return self.field.gradient(x)\n"
    assert _lines(tmp_path, network, _TYPED) == [7]
