"""ModuleFacts: the one place rules ask questions about a module.

Every analysis is computed lazily on first use and cached for the module, so a
file whose enabled rules only need import resolution never pays for dataflow.
"""

from __future__ import annotations

from functools import cached_property

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.names import ImportTable


class ModuleFacts:
    def __init__(self, wrapper: MetadataWrapper) -> None:
        self.wrapper = wrapper
        self.module: cst.Module = wrapper.module

    @cached_property
    def names(self) -> ImportTable:
        return ImportTable(self.module)
