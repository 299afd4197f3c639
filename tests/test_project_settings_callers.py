"""MEM103 across modules: a penalty helper in losses.py that builds its own
graph (``D(Variable(mix, requires_grad=True))``), backpropagates it once
with ``retain_graph=True`` and returns ``.item()``; its only caller, in
gan.py, passes settings for the parameters the graph reads from outside
(analysis/autograd/settings_callers.py). Silent for each trap: a caller that
hands a tensor, a helper that returns or keeps the graph, one that reads a
parameter with the caller's history, a later backward in the helper."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_LOSSES = """\
import torch


def penalty(real, fake, D, weight, backward=True):
    alpha = torch.rand(real.size(0), 1)
    mix = alpha * real + (1 - alpha) * fake
    mix = torch.autograd.Variable(mix, requires_grad=True)
    grads = torch.autograd.grad(outputs=D(mix).sum(), inputs=mix, create_graph=True, retain_graph=True)[0]
    loss = ((grads.norm(2, dim=1) - 1) ** 2).mean() * weight
    if backward:
        loss.backward(retain_graph=True)
    return loss.item()
"""

_GAN = """\
from losses import penalty


class GAN:
    def step(self, real):
        fake = self.G(self.noise()).detach()
        loss = self.D(real).mean() - self.D(fake).mean()
        gp = penalty(real, fake, self.D, self.config.lambda_gp, backward=True)
        loss.backward()
        self.opt.step()
        return gp
"""

_MESSAGE = (
    "`retain_graph=True` but nothing backpropagates through this graph again; its buffers are kept for nothing"
    " (the graph is built here; no caller backpropagates again: {where})"
)


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))


def _cli(cwd: Path, *args: str) -> list[tuple[str, int, str]]:
    out = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--exit-zero", "--output-format", "json"]
        + ["--select", "MEM103", *(args or (".",))],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted((Path(f["filename"]).name, f["location"]["row"], f["message"]) for f in json.loads(out or "[]"))


@pytest.mark.parametrize("target", [".", "losses.py"])
def test_a_penalty_whose_callers_pass_settings_is_reported(tmp_path, target):
    _write(tmp_path, {"losses.py": _LOSSES, "gan.py": _GAN})
    assert _cli(tmp_path, target) == [("losses.py", 11, _MESSAGE.format(where="gan.py:8"))]


_TRAPS = {
    "caller-hands-a-tensor": (
        _LOSSES,
        _GAN.replace("self.config.lambda_gp", "self.scale(real)"),
        "the weight may carry the caller's graph, which it backpropagates afterwards",
    ),
    "caller-hands-a-name": (
        _LOSSES,
        _GAN.replace("self.config.lambda_gp", "w"),
        "what a name holds is not known",
    ),
    "returns-the-loss": (
        _LOSSES.replace("return loss.item()", "return loss"),
        _GAN,
        "the helper returns the loss: a caller may backpropagate through the graph again",
    ),
    "keeps-the-loss": (
        _LOSSES.replace("    return loss.item()", "    history.append(loss)\n    return loss.item()"),
        _GAN,
        "the loss is kept in a container from outside",
    ),
    "no-cut": (
        _LOSSES.replace("    mix = torch.autograd.Variable(mix, requires_grad=True)\n", ""),
        _GAN,
        "the graph runs through ``real`` and ``fake``, which the caller hands as names",
    ),
    "later-grad": (
        _LOSSES.replace(
            "    return loss.item()",
            "    extra = torch.autograd.grad(loss, D.parameters())\n    return loss.item() + sum(e.sum().item() for e in extra)",
        ),
        _GAN,
        "the helper differentiates the same loss again after the retained backward",
    ),
    "called-in-its-own-module": (
        _LOSSES + "\n\ndef total(real, fake, D):\n    return penalty(real, fake, D, 10.0)\n",
        _GAN,
        "a caller in the same module is judged there (retained_sites.done_after)",
    ),
    "no-caller": (
        _LOSSES,
        _GAN.replace("gp = penalty(real, fake, self.D, self.config.lambda_gp, backward=True)", "gp = 0"),
        "no caller in the project: what a caller would pass is not known",
    ),
}


@pytest.mark.parametrize("case", sorted(_TRAPS))
def test_a_caller_or_helper_that_may_backpropagate_again_keeps_it_silent(tmp_path, case):
    losses, gan, why = _TRAPS[case]
    assert (losses, gan) != (_LOSSES, _GAN)
    _write(tmp_path, {"losses.py": losses, "gan.py": gan})
    assert [f for f in _cli(tmp_path) if f[0] == "losses.py" and f[1] == 11] == [], why


# -- a helper handed the caller's graph, at the end of the caller's step ----------

_DIVERSITY = """\
import torch


def diversity(phi_fake, phi_real, backward=True):
    def gram(phi):
        phi = phi / phi.norm(dim=1, keepdim=True)
        return phi @ phi.t()

    loss = (gram(phi_fake) - gram(phi_real)).pow(2).mean()
    if backward:
        loss.backward(retain_graph=True)
    return loss.item()
"""

_STEP = """\
from diversity import diversity


class GAN:
    def penalty(self, out):
        loss = self.crit(out)
        loss.backward(retain_graph=True)
        return loss.item()

    def step_g(self, real):
        fake = self.G(self.noise(real.size(0)))
        out, phi_fake = self.D(fake, True)
        self.log["cls"] = self.penalty(out)
        loss = self.crit(out)
        self.log["g"] = loss.item()
        loss.backward(retain_graph=True)
        _, phi_real = self.D(real, True)
        self.log["div"] = diversity(phi_fake, phi_real, backward=True)
        self.opt.step()
        return self.log
"""


def test_a_helper_called_last_in_the_callers_step_is_reported(tmp_path):
    _write(tmp_path, {"diversity.py": _DIVERSITY, "gan.py": _STEP})
    assert _cli(tmp_path, "diversity.py") == [("diversity.py", 11, _MESSAGE.format(where="gan.py:18"))]


_FINAL_TRAPS = {
    "later-backward": (
        "        self.opt.step()\n",
        "        self.opt.step()\n        out.sum().backward()\n",
        "the caller backpropagates again through the discriminator's graph",
    ),
    "later-training-method": (
        "        self.opt.step()\n",
        "        self.opt.step()\n        self.penalty(out)\n",
        "a method of the caller's class backpropagates afterwards",
    ),
    "returned": ("        return self.log\n", "        return phi_fake\n", "the features are returned"),
    "kept": ("        self.opt.step()\n", "        self.opt.step()\n        self.feats = phi_fake\n", "kept on self"),
    "in-a-loop": (
        '        self.log["div"] = diversity(phi_fake, phi_real, backward=True)\n',
        '        for w in (1, 2):\n            self.log["div"] = w * diversity(phi_fake, phi_real, backward=True)\n',
        "the second pass backpropagates through the same graph",
    ),
    "parameter": (
        "diversity(phi_fake, phi_real, backward=True)",
        "diversity(phi_fake, real, backward=True)",
        "the caller's caller may backpropagate through its parameter",
    ),
}


@pytest.mark.parametrize("case", sorted(_FINAL_TRAPS))
def test_a_caller_that_may_reach_the_graph_again_keeps_it_silent(tmp_path, case):
    old, new, why = _FINAL_TRAPS[case]
    assert old in _STEP
    _write(tmp_path, {"diversity.py": _DIVERSITY, "gan.py": _STEP.replace(old, new)})
    assert _cli(tmp_path, "diversity.py") == [], why
