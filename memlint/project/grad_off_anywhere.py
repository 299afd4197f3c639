"""Does any module of the project turn autograd off? (index side).

A method that switches its model to eval and runs it, handing back only
numbers (person-reid-triplet-loss-baseline's ``ExtractFeature.__call__``), is
called through a name the project stores (``test_set.set_feat_func(
ExtractFeature(model, TVT))``, then ``self.extract_feat_func(ims)`` per
batch in another module): no call site names it, so none says the mode it
runs in. When no file of the project spells any way of turning grad off,
every call of it runs with grad on, whoever makes it (MEM201).

A word scan of the files' bytes, stopped at the first file that spells one:
a project that turns grad off anywhere answers after a few files; one that
never does is read once. Every file read is a dependency of the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from memlint.read.source import read_bytes

# Every spelling that turns grad off, or may (a project helper named for it):
# ``torch.no_grad``, ``inference_mode``, ``set_grad_enabled(False)``,
# ``torch._C._set_grad_enabled``, ``@torch.no_grad()`` as a decorator.
_NEEDLES = (b"no_grad", b"inference_mode", b"grad_enabled")


def grad_never_off(files: Iterable[str], note_read: Callable[[str], None]) -> bool:
    """No file of ``files`` spells a way of turning grad off (one that cannot
    be read counts as spelling one); read in the order given."""
    for path in files:
        if not path.endswith((".py", ".ipynb")):
            continue
        note_read(path)
        try:
            data = read_bytes(path)
        except OSError:
            return False
        if data is None or any(n in data for n in _NEEDLES):
            return False
    return True
