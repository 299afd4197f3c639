"""facts.autocast: which calls run inside an enabled autocast block."""

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts


def backward_blocks(src: str) -> list[bool]:
    module = cst.parse_module(textwrap.dedent(src))
    facts = ModuleFacts(MetadataWrapper(module, unsafe_skip_copy=True))
    found = []

    class V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                found.append(facts.autocast.block_of(node) is not None)

    module.visit(V())
    return found


def test_spellings_and_enabled_flag():
    assert backward_blocks(
        """
        import torch
        from torch.cuda.amp import autocast as ac
        with torch.autocast("cuda"):
            a.backward()
        with ac():
            b.backward()
        with torch.amp.autocast("cuda", enabled=use_amp):
            c.backward()
        with torch.autocast("cuda", torch.float16, False):
            d.backward()
        with ac(enabled=False):
            e.backward()
        with accelerator.autocast():
            f.backward()
        g.backward()
        """
    ) == [True, True, True, False, False, False, False]


def test_nested_disabled_region_and_functions_defined_inside():
    assert backward_blocks(
        """
        import torch
        with torch.autocast("cuda"):
            with torch.autocast("cuda", enabled=False):
                a.backward()
            b.backward()
            def closure():
                c.backward()
            step(lambda: d.backward())
        """
    ) == [False, True, False, False]


def test_context_held_in_a_variable():
    assert backward_blocks(
        """
        from contextlib import nullcontext
        import torch
        ctx = nullcontext() if device == "cpu" else torch.amp.autocast(device_type="cuda")
        other = open("log.txt")
        off = torch.autocast("cuda", enabled=False)
        later = torch.autocast("cuda")
        later = something_else()
        with ctx:
            a.backward()
        with other:
            b.backward()
        with off:
            c.backward()
        with later:
            d.backward()
        """
    ) == [True, False, False, False]
