"""The project's modules and how an import names one of them.

Imports resolve inside the project root only, as Python would find them when
the project is run from its root or a script is run from its own folder
(``python train.py`` puts the script's folder first on ``sys.path``): an
absolute name is looked up under the importing file's folder, the root and
``root/src``; a relative one (``from .engine import evaluate``) from the
importing file's package. Installed packages and anything else are not found:
unknown.
"""

from __future__ import annotations

import os
import sys

from memlint.find.discovery import DEFAULT_EXCLUDE

# A folder this large is not a project (a home folder with a .git): no index.
MAX_FILES = 50_000
# Without a marker the project is the checked paths' folder: a file in a large
# scratch folder (``/tmp/x.py``) is not a project of that size.
MAX_UNMARKED_FILES = 5_000
_SKIP = frozenset(DEFAULT_EXCLUDE)


def project_files(root: str, limit: int = MAX_FILES, folders: list[str] | None = None) -> list[str] | None:
    """Every ``.py`` and ``.ipynb`` file under ``root``, skipping the folders discovery
    skips by default and virtual environments; None past ``limit``. ``folders``
    gets every folder whose entries the result depends on (those walked and
    the virtual environments skipped: a ``pyvenv.cfg`` removed un-skips one)."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not skipped_folder(folder, d, folders))
        if folders is not None:
            folders.append(folder)
        # Notebooks too: they call the project's functions (notebook_code.py).
        found.extend(os.path.join(folder, name) for name in sorted(files) if name.endswith((".py", ".ipynb")))
        if len(found) > limit:
            return None
    return found


def skipped_folder(parent: str, name: str, folders: list[str] | None = None) -> bool:
    """A folder the project's walk does not enter (``folders``: project_files')."""
    if name in _SKIP or name.startswith("."):
        return True
    if os.path.isfile(os.path.join(parent, name, "pyvenv.cfg")):
        if folders is not None:
            folders.append(os.path.join(parent, name))
        return True
    return False


class ModuleMap:
    """The project's files (absolute paths) and import resolution among them."""

    def __init__(self, root: str, files: list[str]) -> None:
        self.root = os.path.abspath(root)
        self.files = frozenset(os.path.abspath(f) for f in files)
        # resolve's answers by (name, importer's folder, extra): they depend on
        # nothing else, and the views ask the same ones over and over
        # (transformers: 128,000 lookups, a third of the parent's view building).
        self._resolved: dict[tuple[str, str, tuple[str, ...]], tuple[str, str] | None] = {}
        self._folders: dict[str, str] = {}  # importer -> its absolute folder
        self._modules: dict[tuple[str, ...], str | None] = {}  # _module_file's answers
        self._siblings: set[tuple[str, str, tuple[str, ...]]] = set()  # resolve's keys _sibling answered

    def display(self, path: str) -> str:
        """The path as a message shows it: relative to the root, with ``/``."""
        return os.path.relpath(path, self.root).replace(os.sep, "/")

    def resolve(self, name: str, importer: str, extra: tuple[str, ...] = ()) -> tuple[str, str] | None:
        """``(file, rest)`` for a dotted name as written in ``importer`` (its
        imports applied, a relative one keeps its leading dots): the project
        file of the longest prefix that is a module, and the rest of the name
        (``evaluate``, ``Trainer.validate``, empty for the module itself).
        ``extra``: folders the importer puts on ``sys.path`` itself, after its own."""
        here = self._folders.get(importer)
        if here is None:
            here = os.path.dirname(os.path.abspath(importer))
            if os.path.isabs(importer):  # a relative one depends on the working folder too
                self._folders[importer] = here
        key = (name, here, extra)
        try:
            found = self._resolved[key]
        except KeyError:
            found = self._resolved[key] = self._resolve(name, here, extra)
        if found is not None and found[0] == importer and key in self._siblings:
            return None  # a package's module naming itself bare (no implicit relative imports)
        return found

    def _resolve(self, name: str, here: str, extra: tuple[str, ...]) -> tuple[str, str] | None:
        """resolve's answer for an importer in the folder ``here``."""
        level = len(name) - len(name.lstrip("."))
        parts = [p for p in name[level:].split(".") if p]
        if level:
            base = here
            for _ in range(level - 1):
                base = os.path.dirname(base)
            bases = [base]
        else:
            if not parts:
                return None
            # A script's folder is on the path when it is run (``python
            # train.py``); a package's folder is not (no implicit relative imports).
            script = os.path.join(here, "__init__.py") not in self.files
            # A package's module is imported from the folder holding its
            # top-level package (``models/fusion_net.py`` as ``models.fusion_net``
            # from ``version2/``): its absolute imports resolve from there too.
            top = here
            while os.path.join(top, "__init__.py") in self.files and os.path.dirname(top) != top:
                top = os.path.dirname(top)
            bases = list(dict.fromkeys([here if script else top, *extra, self.root, os.path.join(self.root, "src")]))
        for base in bases:
            for k in range(len(parts), -1, -1):
                if k == 0 and not level:
                    break
                found = self._module_file(base, parts[:k])
                if found is not None:
                    return found, ".".join(parts[k:])
        if (
            not level
            and parts[0] == os.path.basename(self.root)
            and os.path.join(self.root, "__init__.py") in self.files
        ):
            # The root is itself the package its modules import by name
            # (GraphSAINT's ``graphsaint/setup.py`` beside ``__init__.py``;
            # ``python -m graphsaint.pytorch_version.train`` from the folder
            # above): ``graphsaint.utils`` is the root's ``utils.py``.
            for k in range(len(parts), 0, -1):
                found = self._module_file(self.root, parts[1:k])
                if found is not None:
                    return found, ".".join(parts[k:])
        if not level and not script and parts[0] not in sys.stdlib_module_names:
            sibling = self._sibling(here, parts)
            if sibling is not None:
                self._siblings.add((name, here, extra))
            return sibling
        return None

    def _sibling(self, here: str, parts: list[str]) -> tuple[str, str] | None:
        """A bare import of a module beside the importer, in a folder that
        holds an ``__init__.py`` (MSRN's ``Train/trainer.py`` importing
        ``utility``), found nowhere else: the folder is on ``sys.path`` when
        the code runs (``python main.py`` beside them), since a package's
        absolute import of that name would fail. The leftover ``__init__.py``
        does not make it a package. A standard library name never resolves
        here (a package's ``import logging`` is the library's)."""
        for k in range(len(parts), 0, -1):
            found = self._module_file(here, parts[:k])
            if found is not None:
                return found, ".".join(parts[k:])
        return None

    def _module_file(self, base: str, parts: list[str]) -> str | None:
        key = (base, *parts)  # the folders of a project share bases and names: joined once
        try:
            return self._modules[key]
        except KeyError:
            pass
        stem = os.path.join(base, *parts)
        found = None
        for candidate in (stem + ".py", os.path.join(stem, "__init__.py")):
            if candidate in self.files:
                found = candidate
                break
        self._modules[key] = found
        return found
