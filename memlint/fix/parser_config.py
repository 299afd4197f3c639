"""The parser settings for code a fix builds into a module.

libcst parses new code for a module with ``module.config_for_parsing`` (its
newline, indent and encoding), but refuses back an indent it read itself
when that indent holds a form feed: ``class A:\\n\\x0c pass`` is valid Python,
and ``config_for_parsing`` raises ValueError on it. Every fix helper that
parses new code asks here, so none of them raises an internal error on such
a file (MEM104's fix did, found by the CST fuzz test).
"""

from __future__ import annotations

import libcst as cst


def parser_config(module: cst.Module) -> cst.PartialParserConfig:
    try:
        return module.config_for_parsing
    except ValueError:
        # Code built for a fix carries its own indentation (statements are
        # placed by libcst's tree, not by the setting), so the default indent
        # serves; the newline and encoding are still the module's.
        return cst.PartialParserConfig(encoding=module.encoding, default_newline=module.default_newline)
