"""Names of a module holding the CPU device, a literal switch deciding it
included (analysis/training/cpu_devices.py)."""

import libcst as cst
import pytest

from memlint.analysis.training.cpu_devices import cpu_device_names, flag_value, moves_to_cpu


def _names(source: str) -> frozenset[str]:
    return cpu_device_names(cst.parse_module(source))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("cpu_device = torch.device('cpu')\n", {"cpu_device"}),
        ("use_cuda = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", {"device"}),
        ("use_cuda = False\ndevice = 'cuda' if use_cuda else 'cpu'\n", {"device"}),
        ("use_cuda = False\ndevice = torch.device('cpu' if not use_cuda else 'cuda')\n", {"device"}),
        (
            "use_cuda = False\ndevice = torch.device('cuda' if torch.cuda.is_available() and use_cuda else 'cpu')\n",
            {"device"},
        ),
        ("use_cuda = True\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", set()),
        # the switch rebound anywhere, to anything else: unknown
        (
            "use_cuda = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\ndef f():\n    use_cuda = True\n",
            set(),
        ),
        ("use_cuda = torch.cuda.is_available()\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", set()),
        ("use_cuda = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\ndef f(use_cuda):\n    pass\n", set()),
        ("use_cuda: bool = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", set()),
        ("use_cuda = other = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", set()),
        ("use_cuda = flag\ndevice = torch.device('cuda' if use_cuda else 'cpu')\n", set()),
        # the device rebound elsewhere: unknown
        (
            "use_cuda = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\nfor device in devices:\n    pass\n",
            set(),
        ),
        (
            "use_cuda = False\ndevice = torch.device('cuda' if use_cuda else 'cpu')\ndevice = torch.device('cuda')\n",
            set(),
        ),
    ],
)
def test_cpu_device_names(source, expected):
    assert _names(source) == frozenset(expected)


@pytest.mark.parametrize(
    "test, expected",
    [("off", False), ("not off", True), ("off or on", True), ("off and x", False), ("on and x", None), ("x", None)],
)
def test_flag_value(test, expected):
    assert flag_value(cst.parse_expression(test), {"off": False, "on": True}) is expected


@pytest.mark.parametrize(
    "call, expected",
    [
        ("m.to(dev)", True),
        ("m.to(device=dev)", True),
        ("m.cpu()", True),
        ("m.to('cpu')", True),
        ("m.to(torch.device('cpu'))", True),
        ("m.to(other)", False),
        ("m.cuda()", False),
        ("m.to(dev, non_blocking=True)", False),
        ("m.to(dtype=dev)", False),
    ],
)
def test_moves_to_cpu(call, expected):
    node = cst.parse_expression(call)
    assert isinstance(node, cst.Call)
    assert moves_to_cpu(node, frozenset({"dev"})) is expected
