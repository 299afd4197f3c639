"""project.checkpoint_files: which names a module saves from a CPU state,
read as the project stage reads them (on ``ast``): a name rebound loses
its ``.cpu()`` move, a CPU state given a GPU entry is no longer one, and a
loop replacing every entry by its value on the CPU makes one (KAIR's
``save_network``)."""

from __future__ import annotations

import ast

import pytest

from memlint.project.checkpoint_files import checkpoint_files


def _saved(source: str) -> tuple[list[str], list[str]]:
    cpu, other, _loaded = checkpoint_files(ast.parse(source), {"torch": "torch"})
    return cpu, other


@pytest.mark.parametrize(
    "rebind",
    [
        "    net = build().cuda()\n",
        "    net = other\n",
        "    net: object = other\n",
        "    for net in others:\n        pass\n",
    ],
)
def test_a_rebound_name_loses_its_cpu_move(rebind):
    src = "import torch\ndef s(net, other, others):\n    net.cpu()\n" + rebind
    assert _saved(src + "    torch.save(net.state_dict(), 'a.pth')\n") == ([], ["a.pth"])


def test_a_rebound_owner_loses_its_parts_moves():
    src = "import torch\ndef s(net, other):\n    net.module.cpu()\n    net = other\n"
    assert _saved(src + "    torch.save(net.module.state_dict(), 'a.pth')\n") == ([], ["a.pth"])


@pytest.mark.parametrize("same", ["    net = net.cpu()\n", "    net.cpu()\n    net = net.eval()\n"])
def test_a_name_rebound_to_itself_keeps_its_move(same):
    src = "import torch\ndef s(net):\n" + same + "    torch.save(net.state_dict(), 'a.pth')\n"
    assert _saved(src) == (["a.pth"], [])


_PER_KEY = (
    "import torch\n"
    "def save_network(network, label):\n"
    "    state_dict = network.state_dict()\n"
    "    for key, param in state_dict.items():\n"
    "        state_dict[key] = param.cpu()\n"
)


def test_a_per_key_cpu_loop_is_a_cpu_state():
    assert _saved(_PER_KEY + "    torch.save(state_dict, '{}_G.pth'.format(label))\n") == (["*_G.pth"], [])


@pytest.mark.parametrize(
    "after",
    [
        "    state_dict['opt'] = optimizer.state_dict()\n",
        "    state_dict.update(extra)\n",
        "    state_dict = network.state_dict()\n",
    ],
)
def test_a_cpu_state_changed_after_its_loop_is_not(after):
    assert _saved(_PER_KEY + after + "    torch.save(state_dict, 'a.pth')\n") == ([], ["a.pth"])


@pytest.mark.parametrize(
    "loop",
    [
        "    for key, param in state_dict.items():\n        if 'fc' in key:\n            state_dict[key] = param.cpu()\n",
        "    for key, param in state_dict.items():\n        if key:\n            break\n        state_dict[key] = param.cpu()\n",
        "    for key, param in state_dict.items():\n        state_dict[key] = other.cpu()\n",
        "    for key, param in other.items():\n        state_dict[key] = param.cpu()\n",
    ],
)
def test_a_loop_that_may_leave_an_entry_is_no_cpu_state(loop):
    src = "import torch\ndef s(network, other):\n    state_dict = network.state_dict()\n" + loop
    assert _saved(src + "    torch.save(state_dict, 'a.pth')\n") == ([], ["a.pth"])


def test_a_cpu_state_given_a_gpu_entry_is_not():
    head = "import torch\ndef s(net, optimizer):\n    sd = net.cpu().state_dict()\n"
    gpu = head + "    sd['optimizer'] = optimizer.state_dict()\n    torch.save(sd, 'a.pth')\n"
    plain = head + "    sd['epoch'] = 3\n    torch.save(sd, 'a.pth')\n"
    assert _saved(gpu) == ([], ["a.pth"])
    assert _saved(plain) == (["a.pth"], [])
