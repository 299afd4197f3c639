"""project/eval_forwards.py and analysis/autograd/eval_off_calls.py: a model
whose forward returns, in eval mode, only what it computed with grad off."""

import ast
import textwrap

from memlint.lint.engine import lint_text
from memlint.project.eval_forwards import eval_off_forward
from memlint.project.object_types import is_off_context
from memlint.rule.registry import all_rules


def off(body: str) -> bool:
    fn = ast.parse("def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")).body[0]
    assert isinstance(fn, ast.FunctionDef)
    return eval_off_forward(fn, is_off_context)


def test_the_eval_branch_returns_what_no_grad_computed():
    assert off(
        """\
        preds = self.net(x)
        if self.training:
            return self.loss(preds)
        else:
            with torch.no_grad():
                res = self.predict(preds)
            return res
        """
    )
    assert off(
        """\
        preds = self.net(x)
        if not self.training:
            with torch.no_grad():
                return self.predict(preds), None
        else:
            return self.loss(preds)
        """
    )
    # Flow is not followed: a return after the eval branch counts as reachable in eval mode.
    assert not off(
        """        if not self.training:
            with torch.no_grad():
                return self.predict(x)
        return self.loss(x)
        """
    )


def test_any_return_with_history_on_the_eval_path_is_no_proof():
    assert not off(  # the value computed with grad on
        """\
        preds = self.net(x)
        if self.training:
            return self.loss(preds)
        with torch.no_grad():
            res = self.predict(preds)
        return res, preds
        """
    )
    assert not off(  # a name also bound outside the block
        """\
        res = self.net(x)
        if self.training:
            return res
        with torch.no_grad():
            res = self.predict(res)
        return res
        """
    )
    assert not off(  # a plain name inside the block passes the tensor on
        """\
        preds = self.net(x)
        if self.training:
            return preds
        with torch.no_grad():
            return preds
        """
    )
    assert not off("return self.net(x)\n")  # no grad-off block at all


MODEL = """\
import torch
import torch.nn as nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
    def forward(self, x):
        preds = self.fc(x)
        if self.training:
            return preds.sum()
        with torch.no_grad():
            res = preds.sigmoid().sum()
        return res
def run(loader, eval_loader):
    net = Net().to("cuda")
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for x in loader:
        opt.zero_grad()
        net(x).backward()
        opt.step()
    SWITCH
    total = 0
    for x in eval_loader:
        total += net(x)
    return total
"""


def _mem101(switch: str) -> list:
    rule = next(r for r in all_rules() if r.code == "MEM101")
    return lint_text(MODEL.replace("SWITCH", switch), "example.py", [rule])


def test_a_call_in_eval_mode_returns_no_history():
    assert _mem101("net.eval()") == []


def test_a_call_in_train_or_unknown_mode_keeps_the_finding():
    assert len(_mem101("pass")) == 1
    assert len(_mem101("net.train()")) == 1
    assert len(_mem101("net.eval()\n    enable_dropout(net)")) == 1  # a call that may flip the mode
