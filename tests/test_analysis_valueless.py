"""scope.valueless and is_model_call: a method of the class that returns nothing is no forward."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.scope.valueless import returns_no_value


def first_def(src: str) -> cst.FunctionDef:
    return cst.parse_module(src).body[0]


@pytest.mark.parametrize(
    "src,valueless",
    [
        ("def save_model(self, name):\n    torch.save(self.enc, name)\n", True),
        ("def save_model(self, name):\n    torch.save(self.enc, name)\n    return None\n", True),
        ("def save_model(self, name):\n    def key():\n        return name\n    torch.save(self.enc, key())\n", True),
        ("def run_model(self, x):\n    return self.net(x)\n", False),
        ("def run_model(self, x):\n    yield self.net(x)\n", False),
        ("def run_model(self, x):\n    raise NotImplementedError\n", False),  # a stub: the override returns
        ("def run_model(self, x):\n    '''Doc.'''\n    pass\n", False),
    ],
)
def test_returns_no_value(src, valueless):
    assert returns_no_value(first_def(src)) is valueless


def test_a_valueless_method_of_the_class_is_no_model_call():
    src = """
    import torch
    class Trainer(object):
        def save_model(self, name):
            torch.save({"enc": self.encoder}, name)
        def forward_model(self, x):
            return self.model(x)
        def best(self, metrics):
            for metric in metrics:
                self.save_model(metric)
                self.forward_model(metric)
    """
    facts = facts_of(src)
    save = find(facts.module, "self.save_model(metric)", cst.Call)
    forward = find(facts.module, "self.forward_model(metric)", cst.Call)
    assert not facts.objects.is_model_call(save)
    assert facts.objects.is_model_call(forward)
