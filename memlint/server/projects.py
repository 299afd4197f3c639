"""The workspace's projects as the server keeps them, and which open
documents a change makes stale.

Every lint of an open document puts its text in the live index
(project/live.py), so its dependants see the editor's text, saved or not,
and records the digest of the project view the lint read (None when no
active rule asked for one: its findings do not depend on the project). When
a module's summary changes (an edit, a file changed on disk, a document
closed), exactly the open documents whose view now has another digest are
stale: their findings may differ, the others' cannot.

Used from the lint thread only: the index is not shared with the event loop.
"""

from __future__ import annotations

from collections.abc import Iterable

from memlint.parse.guard import python_tree
from memlint.project.live import Workspace
from memlint.project.view import ProjectView
from memlint.server.linting import LintResult, lint_document
from memlint.server.settings import DocumentSettings


def _digest(view: ProjectView | None) -> str:
    return view.digest() if view is not None else ""


class ProjectSession:
    def __init__(self) -> None:
        self.workspace = Workspace()
        # uri -> (path, digest of the view its last lint read; None: it read none)
        self.read: dict[str, tuple[str, str | None]] = {}

    def lint(self, uri: str, text: str, path: str, settings: DocumentSettings) -> tuple[LintResult, list[str]]:
        """The document's lint with its project, and the other open
        documents its text makes stale."""
        tree = python_tree(text)  # one parse: the summary's and the gate's
        changed = self.workspace.set_text(path, text, tree)
        seen: list[ProjectView | None] = []

        def view() -> ProjectView | None:
            seen.append(self.workspace.view(path))
            return seen[-1]

        result = lint_document(text, path, settings.rules, settings.torch, project=view, tree=tree)
        self.read[uri] = (path, _digest(seen[-1]) if seen else None)
        return result, self.stale(skip=uri) if changed else []

    def close(self, uri: str, path: str) -> list[str]:
        """The document was closed: the others see its file again."""
        self.read.pop(uri, None)
        return self.stale() if self.workspace.drop_text(path) else []

    def disk_changed(self, paths: Iterable[str]) -> list[str]:
        return self.stale() if self.workspace.disk_changed(paths) else []

    def rescan(self) -> list[str]:
        return self.stale() if self.workspace.rescan() else []

    def stale(self, skip: str | None = None) -> list[str]:
        """The open documents whose view changed since their last lint."""
        return [
            uri
            for uri, (path, digest) in self.read.items()
            if uri != skip and digest is not None and _digest(self.workspace.view(path)) != digest
        ]
