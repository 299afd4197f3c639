"""The project stage: what other modules of the checked project say.

Real training code is split across modules (``train.py`` calls
``engine.evaluate``; ``torch`` reaches a script through ``from utils import
*``), so a fact that decides a finding may live in another file. This stage,
between find and parse, finds each file's project root (``roots.py``),
resolves imports inside it (``modules.py``), keeps a small serialisable
summary per module read from Python's ``ast`` tree (``summary.py``, cached by
digest in ``store.py``), and answers, per checked file, the few questions its
rules may ask of the rest of the project (``view.py``: ``ProjectView``, built
by ``index.py``; ``live.py`` keeps one in memory for the language server).
Anything it cannot resolve is unknown, and unknown stays silent.
"""
