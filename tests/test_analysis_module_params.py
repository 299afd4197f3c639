"""facts.module_params: in-place writes into a proven module's .weight/.bias."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find_all

from memlint.analysis.training.loops import is_emptiness_test
from memlint.analysis.training.module_params import spelling

SRC = """
import torch
import torch.nn as nn
from transformers import BertModel
from elsewhere import Custom, freeze_all

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(3, 3, 1)])
        self.head = Custom()
        self.register_buffer("weight", torch.ones(3))
        self.crit = nn.CrossEntropyLoss(weight=torch.ones(3))
        self.emb = nn.Embedding(10, 3)
        self.emb.weight.requires_grad = False

    def edit(self, w):
        self.layers[0].weight[:, 0] = w
        self.head.proj.bias[0] = 0.0
        self.weight[0] = 1.0
        self.crit.weight[0] = 2.0
        self.layers[0].weight.data[0] = w

bert = BertModel.from_pretrained("bert-base-uncased")
bert.encoder.layer[3].output.dense.weight[:, 7] -= 1.0
frozen = BertModel.from_pretrained("bert-base-uncased")
freeze_all(frozen)
frozen.pooler.dense.weight[0] = 0.0
model = Custom()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model.emb.weight.copy_(torch.zeros(10, 3))
model.fc.weight.detach()[0] = 0.0
unknown = Custom()
unknown.fc.weight[0] = 0.0

def load(net, emb):
    net.emb.weight.copy_(emb)
"""


def _written(facts, text):
    node = find_all(facts.module, text)[0]
    return facts.module_params.written_parameter(node, node)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("self.layers[0].weight[:, 0]", True),  # an nn.ModuleList item of an nn.Module
        ("self.head.proj.bias[0]", True),  # self of an nn.Module subclass, an attribute in between
        ("self.weight[0]", False),  # self.weight itself may be a buffer
        ("self.crit.weight[0]", False),  # a loss keeps its class weights as a buffer
        ("self.layers[0].weight.data[0]", False),  # through .data
        ("bert.encoder.layer[3].output.dense.weight[:, 7]", True),  # from_pretrained
        ("frozen.pooler.dense.weight[0]", False),  # handed to a freezing helper
        ("model.emb.weight", False),  # emb.weight has requires_grad set in the file
        ("model.fc.weight.detach()[0]", False),  # a detached view
        ("unknown.fc.weight[0]", False),  # nothing proves a module
        ("net.emb.weight", False),  # only the parameter's name says it is a module
    ],
)
def test_written_parameter(text, expected):
    assert _written(facts_of(SRC), text) is expected


def test_optimizer_use_proves_the_module():
    facts = facts_of(
        """
        import torch
        from elsewhere import Custom
        model = Custom()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.emb.weight.copy_(torch.zeros(10, 3))
        """
    )
    assert _written(facts, "model.emb.weight")


def test_spelling():
    expr = cst.parse_expression("self.layers[i].weight[:, 0]")
    assert spelling(expr) == "self.layers.weight"
    assert spelling(cst.parse_expression("f(x).weight")) is None


@pytest.mark.parametrize(
    "test, expected",
    [
        ("num_gt == 0", True),
        ("len(boxes) == 0", True),
        ("not targets", True),
        ("x.grad is None", True),
        ("step % 100 == 0", False),  # a throttle: its else runs on most steps too, but say only what is sure
        ("mem > limit", False),
        ("n == 1", False),
    ],
)
def test_is_emptiness_test(test, expected):
    assert is_emptiness_test(cst.parse_expression(test)) is expected
