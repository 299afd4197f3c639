"""``memlint verify nb.ipynb``: a notebook runs as one script, its code cells
in order, as ``check`` lints them (memlint.run.notebook): IPython magics and
shell escapes (``%matplotlib inline``, ``!pip install``) are masked to ``...``,
so they do nothing; a cell under a cell magic other than Python's own
(``%%bash``, ``%%writefile``) is left out. The fixed twin is that script with
memlint's fixes, and the findings name their cell."""

from __future__ import annotations

from dataclasses import dataclass, replace

from memlint.read.source import SourceFile
from memlint.run.notebook import Joined, join, load_notebook
from memlint.verify.twin import Twin


class NotebookNotRunnable(Exception):
    """The notebook has nothing verify can run; the message says why."""


@dataclass(frozen=True)
class NotebookScript:
    source: SourceFile  # the notebook's file, with the joined cells as its text
    joined: Joined

    def locate(self, twin: Twin) -> Twin:
        """The twin with its findings' lines counted within their cells."""
        findings = []
        for f in twin.findings:
            where = self.joined.locate(f.line)
            findings.append(replace(f, cell=where[0].number, line=where[1]) if where else f)
        return replace(twin, findings=findings)


def notebook_script(path: str) -> NotebookScript:
    """Raises memlint.run.notebook.NotebookError (a SourceError) for a file
    that is not a notebook, NotebookNotRunnable for one with no Python to run."""
    notebook = load_notebook(path)
    if not notebook.cells:
        raise NotebookNotRunnable(
            "the notebook has no Python code cells to run (a kernel other than Python, or only cells "
            "under non-Python cell magics)"
        )
    joined = join(notebook.cells)
    return NotebookScript(replace(notebook.source, text=joined.text, bom=False, encoding="utf-8"), joined)


def is_notebook(path: str) -> bool:
    return path.lower().endswith(".ipynb")
