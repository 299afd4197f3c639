"""A map_location that is None whenever CUDA is available
(analysis/training/gpu_none_locations.py)."""

import libcst as cst
import pytest
from analysis_helpers import facts_of, find

from memlint.analysis.training.gpu_none_locations import none_on_gpu

LOAD = """
import torch
def load_checkpoint(path, use_gpu{params}):
    {body}
    return torch.load(path, map_location={value})
"""


def _none_on_gpu(body: str, value: str = "map_location", params: str = "") -> bool:
    facts = facts_of(LOAD.format(body=body, value=value, params=params))
    call = find(facts.module, f"torch.load(path, map_location={value})", cst.Call)
    given = call.args[1].value
    return none_on_gpu(given, call, facts)


@pytest.mark.parametrize(
    "body, value, expected",
    [
        ("map_location = None if torch.cuda.is_available() else 'cpu'", "map_location", True),
        ("map_location = 'cpu' if not torch.cuda.is_available() else None", "map_location", True),
        ("map_location = None if use_gpu else 'cpu'", "map_location", True),
        ("pass", "None if args.cuda else 'cpu'", True),
        ("pass", "None", True),
        ("map_location = 'cpu' if torch.cuda.is_available() else None", "map_location", False),
        ("map_location = None if args.cpu else 'cuda:0'", "map_location", False),  # the test says nothing of CUDA
        (
            "map_location = None if torch.cuda.is_available() else 'cpu'\n    map_location = 'cpu'",
            "map_location",
            False,
        ),
        # branches of an ``if`` statement are not read: one binding is "cpu", unknown
        (
            "if torch.cuda.is_available():\n        map_location = None\n    else:\n        map_location = 'cpu'",
            "map_location",
            False,
        ),
        ("global map_location\n    map_location = None", "map_location", False),
        ("pass", "'cpu'", False),
        ("pass", "lambda s, l: s", False),
    ],
)
def test_none_on_gpu(body, value, expected):
    assert _none_on_gpu(body, value) is expected


def test_a_parameter_is_unknown():
    assert _none_on_gpu("pass", "map_location", params=", map_location=None") is False
