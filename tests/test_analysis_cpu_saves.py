"""analysis.cpu_saves: a module that writes its checkpoints from CPU tensors only."""

import libcst as cst
import pytest

from memlint.analysis.scope.names import ImportTable
from memlint.analysis.training.cpu_saves import saves_only_cpu_tensors


def cpu_only(src: str) -> bool:
    module = cst.parse_module(src)
    return saves_only_cpu_tensors(module, ImportTable(module))


@pytest.mark.parametrize(
    "src",
    [
        "import torch\ntorch.save(net.cpu().state_dict(), p)\n",
        "import torch\ntorch.save(net.module.cpu().state_dict(), p)\n",
        "import torch\ndef s(m):\n    m.cpu()\n    torch.save(m.state_dict(), p)\n    m.cuda()\n",
        "import torch\ndef s(m):\n    m.to('cpu')\n    torch.save(m.module.state_dict(), p)\n",
        "import torch as T\nT.save({k: v.cpu() for k, v in sd.items()}, p)\n",
    ],
)
def test_cpu_checkpoints(src):
    assert cpu_only(src)


@pytest.mark.parametrize(
    "src",
    [
        "import torch\n",  # nothing saved: nothing known
        "import torch\ntorch.save(net.state_dict(), p)\n",
        "import torch\ntorch.save(net.cpu().state_dict(), p)\ntorch.save(opt.state_dict(), q)\n",
        "import torch\ndef s(m):\n    m.cpu()\n    m.cuda()\n    torch.save(m.state_dict(), p)\n",
        "import torch\ndef a(m):\n    m.cpu()\ndef s(m):\n    torch.save(m.state_dict(), p)\n",
        "import torch\ntorch.save({'model': net.cpu().state_dict(), 'opt': opt.state_dict()}, p)\n",
        "import torch\ntorch.save(features, p)\n",
        "import torch\ndef s(m):\n    m.to(device)\n    torch.save(m.state_dict(), p)\n",
    ],
)
def test_not_known_to_be_cpu(src):
    assert not cpu_only(src)


# -- issue 30: CPU checkpoints spelled otherwise -------------------------------

FSDP_IMPORTS = (
    "import torch\n"
    "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, FullStateDictConfig, StateDictType\n"
)


@pytest.mark.parametrize(
    "src",
    [
        "import torch\ndef s(m):\n    m.eval().cpu()\n    torch.save(m.state_dict(), p)\n",
        "import torch\ndef s(m):\n    m.train(False).to('cpu')\n    torch.save(m.module.state_dict(), p)\n",
        "import torch\ndef s(m):\n    sd = {k: v.cpu() for k, v in m.state_dict().items()}\n    torch.save(sd, p)\n",
        "import torch\ndef s(m):\n    sd = m.cpu().state_dict()\n    torch.save(sd, p)\n",
        FSDP_IMPORTS + "def s(m):\n"
        "    cfg = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)\n"
        "    with FSDP.state_dict_type(m, StateDictType.FULL_STATE_DICT, cfg):\n"
        "        state = m.state_dict()\n"
        "    torch.save(state, p)\n",
        FSDP_IMPORTS + "def s(m):\n"
        "    with FSDP.state_dict_type(m, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True)):\n"
        "        state = m.state_dict()\n"
        "        torch.save(state, p)\n",
    ],
)
def test_cpu_checkpoints_spelled_otherwise(src):
    assert cpu_only(src)


@pytest.mark.parametrize(
    "src",
    [
        "import torch\ndef s(m):\n    m.eval().cuda()\n    torch.save(m.state_dict(), p)\n",
        "import torch\ndef s(m):\n    sd = {k: v.cpu() for k, v in m.state_dict().items()}\n"
        "    sd = m.state_dict()\n    torch.save(sd, p)\n",
        "import torch\ndef a(m):\n    sd = m.cpu().state_dict()\ndef s(m):\n    torch.save(sd, p)\n",
        FSDP_IMPORTS + "def s(m):\n"
        "    cfg = FullStateDictConfig(rank0_only=True)\n"
        "    with FSDP.state_dict_type(m, StateDictType.FULL_STATE_DICT, cfg):\n"
        "        state = m.state_dict()\n"
        "    torch.save(state, p)\n",
        FSDP_IMPORTS + "def s(m):\n"
        "    cfg = FullStateDictConfig(offload_to_cpu=True)\n"
        "    with FSDP.state_dict_type(m, StateDictType.FULL_STATE_DICT, cfg):\n"
        "        pass\n"
        "    state = m.state_dict()\n"
        "    torch.save(state, p)\n",
    ],
)
def test_still_not_known_to_be_cpu(src):
    assert not cpu_only(src)
