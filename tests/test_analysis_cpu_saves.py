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


# -- s21 kinds701: rebinding, per-key CPU loops, the kind of state saved ------

from memlint.analysis.training.cpu_saves import cpu_saves  # noqa: E402


def kinds(src: str):
    module = cst.parse_module(src)
    return cpu_saves(module, ImportTable(module))


_PER_KEY = (
    "import torch\n"
    "def save_network(network, path):\n"
    "    state_dict = network.state_dict()\n"
    "    for key, param in state_dict.items():\n"
    "        state_dict[key] = param.cpu()\n"
    "    torch.save(state_dict, path)\n"
)
_GPU_OPTIMIZER = "def save_optimizer(optimizer, path):\n    torch.save(optimizer.state_dict(), path)\n"


def test_a_per_key_cpu_loop_is_a_cpu_state():
    assert cpu_only(_PER_KEY)


@pytest.mark.parametrize(
    "loop",
    [
        "    for key, param in state_dict.items():\n        if 'fc' in key:\n            state_dict[key] = param.cpu()\n",
        "    for key, param in state_dict.items():\n        if 'x' in key:\n            continue\n"
        "        state_dict[key] = param.cpu()\n",
        "    for key, param in state_dict.items():\n        state_dict[key] = other.cpu()\n",
        "    for key, param in other.items():\n        state_dict[key] = param.cpu()\n",
        "    for key, param in state_dict.items():\n        state_dict[key] = param.cuda()\n",
    ],
)
def test_a_loop_that_may_leave_an_entry_is_no_cpu_state(loop):
    src = "import torch\ndef s(network, path):\n    state_dict = network.state_dict()\n" + loop
    assert not cpu_only(src + "    torch.save(state_dict, path)\n")


@pytest.mark.parametrize(
    "after",
    [
        "    state_dict['opt'] = optimizer.state_dict()\n",
        "    state_dict.update(extra)\n",
        "    state_dict = network.state_dict()\n",
    ],
)
def test_a_cpu_state_changed_after_its_loop_is_not(after):
    lines = _PER_KEY.splitlines(keepends=True)
    assert not cpu_only("".join(lines[:-1]) + after + lines[-1])


@pytest.mark.parametrize(
    "rebind",
    [
        "    net = build().cuda()\n",
        "    net = other\n",
        "    net: object = other\n",
    ],
)
def test_a_rebound_name_loses_its_cpu_move(rebind):
    src = (
        "import torch\ndef s(net, other, path):\n    net.cpu()\n" + rebind + "    torch.save(net.state_dict(), path)\n"
    )
    assert not cpu_only(src)


def test_a_name_rebound_to_itself_keeps_its_move():
    assert cpu_only("import torch\ndef s(net, p):\n    net = net.cpu()\n    torch.save(net.state_dict(), p)\n")
    assert cpu_only(
        "import torch\ndef s(net, p):\n    net.cpu()\n    net = net.eval()\n    torch.save(net.state_dict(), p)\n"
    )


def test_a_gpu_optimizer_save_beside_cpu_model_saves():
    found = kinds(_PER_KEY + _GPU_OPTIMIZER)
    assert not found.only_cpu
    assert found.module_states_cpu


@pytest.mark.parametrize(
    "save",
    [
        "    torch.save(net.state_dict(), p)\n",  # a model's state on the GPU
        "    torch.save({'model': net.state_dict(), 'optimizer': optimizer.state_dict()}, p)\n",
        "    torch.save({'optimizer': optimizer.state_dict(), 'model_sd': sd}, p)\n",
        "    torch.save(opt_state, p)\n",  # a name: not proven an optimizer's
        "    torch.save({**extra, 'optimizer': optimizer.state_dict()}, p)\n",
    ],
)
def test_a_save_that_may_hold_model_state_counts_for_models(save):
    found = kinds(_PER_KEY + "def other(net, optimizer, sd, opt_state, extra, p):\n" + save)
    assert not found.module_states_cpu


def test_only_optimizer_saves_prove_nothing_for_models():
    found = kinds("import torch\n" + _GPU_OPTIMIZER)
    assert not found.module_states_cpu


def test_optimizer_and_bookkeeping_dicts_are_no_model_state():
    src = _PER_KEY + "def s(optimizer, scheduler, epoch, p):\n"
    src += "    torch.save({'optimizer': optimizer.state_dict(), 'lr': scheduler.state_dict(), 'epoch': epoch}, p)\n"
    assert kinds(src).module_states_cpu


@pytest.mark.parametrize(
    "change", ["    sd['optimizer'] = optimizer.state_dict()\n", "    sd.update(optimizer=optimizer.state_dict())\n"]
)
def test_a_cpu_state_given_a_gpu_entry_is_not(change):
    src = "import torch\ndef s(net, optimizer, p):\n    sd = net.cpu().state_dict()\n" + change
    assert not cpu_only(src + "    torch.save(sd, p)\n")
    assert cpu_only(
        "import torch\ndef s(net, p):\n    sd = net.cpu().state_dict()\n    sd['n'] = 3\n    torch.save(sd, p)\n"
    )


def test_a_loop_variable_loses_its_cpu_move():
    src = "import torch\ndef s(net, others, p):\n    net.cpu()\n    for net in others:\n        pass\n"
    assert not cpu_only(src + "    torch.save(net.state_dict(), p)\n")


@pytest.mark.parametrize(
    "save,cpu",
    [
        ("{'model_state_dict': {k: v.cpu() for k, v in m.state_dict().items()}, 'field': field}", True),
        ("{'model': m.cpu().state_dict(), 'epoch': 3}", True),
        ("{'model': {k: v.cpu() for k, v in m.state_dict().items()}, 'net_g': g.state_dict()}", False),
        ("{'model': {k: v.cpu() for k, v in m.state_dict().items()}, 'weights': weights}", False),
        ("{'model': {k: v.cpu() for k, v in m.state_dict().items()}, **extra}", False),
        ("{'field': field, 'epoch': 3}", False),
    ],
)
def test_a_dict_literal_holding_a_cpu_state_beside_plain_values(save, cpu):
    # decaNLP's train.py: the CPU state nested in the saved dict.
    assert cpu_only(f"import torch\ntorch.save({save}, p)\n") is cpu


# partial-conv's util/io.py: a helper returning a state whose entries a keys
# loop moves to a CPU device bound to a name, saved per prefix into a dict
# beside the optimizers' states.
_HELPER = (
    "import torch\n"
    "def get_state_dict_on_cpu(obj):\n"
    "    cpu_device = torch.device('cpu')\n"
    "    state_dict = obj.state_dict()\n"
    "    for key in state_dict.keys():\n"
    "        state_dict[key] = state_dict[key].to(cpu_device)\n"
    "    return state_dict\n"
)
_CKPT = (
    "def save_ckpt(name, models, optimizers, n_iter):\n"
    "    ckpt_dict = {'n_iter': n_iter}\n"
    "    for prefix, model in models:\n"
    "        ckpt_dict[prefix] = get_state_dict_on_cpu(model)\n"
    "    for prefix, optimizer in optimizers:\n"
    "        ckpt_dict[prefix] = optimizer.state_dict()\n"
    "    torch.save(ckpt_dict, name)\n"
)


@pytest.mark.parametrize(
    "loop",
    [
        "    for key in state_dict.keys():\n        state_dict[key] = state_dict[key].to(cpu_device)\n",
        "    for key in state_dict:\n        state_dict[key] = state_dict[key].cpu()\n",
        "    for key in list(state_dict.keys()):\n        state_dict[key] = state_dict[key].to('cpu')\n",
    ],
)
def test_a_keys_loop_to_the_cpu_returned_by_a_helper(loop):
    src = _HELPER.replace(
        "    for key in state_dict.keys():\n        state_dict[key] = state_dict[key].to(cpu_device)\n", loop
    )
    assert cpu_only(src + "def save(net, p):\n    torch.save(get_state_dict_on_cpu(net), p)\n")
    found = kinds(src + _CKPT)
    assert found.module_states_cpu and not found.only_cpu


@pytest.mark.parametrize(
    "change",
    [
        # the device name bound elsewhere to anything else: not known to be the CPU
        ("def other(cpu_device):\n    pass\n", None),
        # the loop moves another entry than the one it walks
        ("", ("state_dict[key] = state_dict[key].to(cpu_device)", "state_dict[key] = other[key].to(cpu_device)")),
        # the helper may return a state not moved
        ("", ("    return state_dict\n", "    if obj:\n        return obj.state_dict()\n    return state_dict\n")),
        # a model state saved from the GPU into the dict too
        (
            "",
            (
                "ckpt_dict[prefix] = optimizer.state_dict()",
                "ckpt_dict[prefix] = optimizer.state_dict()\n    ckpt_dict['raw'] = net.state_dict()",
            ),
        ),
    ],
)
def test_a_keys_loop_or_helper_not_proven(change):
    extra, edit = change
    src = _HELPER + _CKPT + extra
    if edit is not None:
        src = src.replace(*edit)
    assert not kinds(src).module_states_cpu


def test_a_dict_of_plain_values_alone_proves_nothing():
    src = "import torch\ndef s(epoch, enc, p):\n    d = {'epoch': epoch, 'encoder': enc}\n    torch.save(d, p)\n"
    assert not kinds(src).module_states_cpu
    assert not kinds("import torch\ntorch.save({'epoch': epoch}, p)\n").module_states_cpu
