"""Method names that say they load weights (``load_pretrained_model``,
``init_weights``, ``restore``). A method that loads into ``self`` is judged
by every call of it; the project summary keeps each module's uses of such
names (summary.loading_uses) so that MEM701 knows when one is called from
another module, without keeping every attribute name of the project."""

from __future__ import annotations

import re

_LOADING = re.compile(r"load|pretrain|restore|resume|weight|ckpt|checkpoint", re.IGNORECASE)


class _Verdicts(dict):
    """name -> loading_name(name), computed once per name (the summary asks
    for every attribute of every module: a plain dict lookup after the first)."""

    def __missing__(self, name: str) -> bool:
        if len(self) > 100_000:
            self.clear()
        found = self[name] = bool(_LOADING.search(name)) and not name.startswith("__")
        return found


LOADING_NAMES = _Verdicts()


def loading_name(name: str) -> bool:
    """``name`` says it loads weights (a dunder never does)."""
    return LOADING_NAMES[name]
