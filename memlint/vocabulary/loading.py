"""Method names that say they load weights (``load_pretrained_model``,
``init_weights``, ``restore``). A method that loads into ``self`` is judged
by every call of it; the project summary keeps each module's uses of such
names (summary.loading_uses) so that MEM701 knows when one is called from
another module, without keeping every attribute name of the project."""

from __future__ import annotations

import re

_LOADING = re.compile(r"load|pretrain|restore|resume|weight|ckpt|checkpoint", re.IGNORECASE)
_SEEN: dict[str, bool] = {}


def loading_name(name: str) -> bool:
    """``name`` says it loads weights (a dunder never does)."""
    found = _SEEN.get(name)
    if found is None:
        if len(_SEEN) > 100_000:
            _SEEN.clear()
        found = _SEEN[name] = bool(_LOADING.search(name)) and not name.startswith("__")
    return found
