"""How a tracker that keeps ``**kwargs`` values is spelled in a module
summary (project/trackers.py, project/keyword_trackers.py) and read back by
MEM102: shared by the project stage and the rule, which may not import the
project stage."""

from __future__ import annotations

# ``TensorTracker.position`` of a tracker keeping the values of its ``**``
# parameter (``update(self, batch=1, **kwargs)``); its ``param`` is the ``**``
# name followed by the named parameters (``"kwargs batch"``).
KEYWORDS = -1


def keyword_names(param: str) -> tuple[str, frozenset[str]]:
    """The ``**`` name and the named parameters of a ``KEYWORDS`` tracker's ``param``."""
    kw, *named = param.split()
    return kw, frozenset(named)
