"""Helpers for the analysis unit tests: build ModuleFacts, find nodes by text."""

import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts


def facts_of(src: str) -> ModuleFacts:
    return ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))


def find_all(module: cst.Module, text: str, kind=cst.CSTNode) -> list:
    """Nodes of type ``kind`` whose source is ``text``, in source order."""
    found = []

    class V(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kind) and module.code_for_node(node).strip() == text:
                found.append(node)
            return True

    module.visit(V())
    return found


def find(module: cst.Module, text: str, kind=cst.CSTNode, index: int = 0):
    found = find_all(module, text, kind)
    assert len(found) > index, f"{text!r} not found"
    return found[index]
