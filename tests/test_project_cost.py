"""The project stage's cost: the summary is one walk of the module's tree, and
its JSON is what ``dataclasses.asdict`` would give (the cache's format)."""

from __future__ import annotations

import ast
import os
import textwrap
from dataclasses import asdict

from memlint.project import summary as summary_module
from memlint.project.class_moves import class_moves_to_a_device
from memlint.project.summary import summarise, summarise_text
from memlint.read.source import read_bytes

# A move to a device in every place the summary's walk does not enter (a
# lambda, a signature, a class's decorator, bases and keywords, a ``with``
# target, a nested class's bases): each class still moves something (not a
# fresh tensor it builds and hands back: class_moves.py).
MOVES_EVERYWHERE = textwrap.dedent(
    """
    import torch

    class Plain(torch.nn.Module):
        def forward(self, x):
            return x * 2

    class InALambda:
        f = lambda self, x: x.to("cuda")

    class InADefault:
        def forward(self, x, w=make_weights().cuda()):
            return x

    class InAnAnnotation:
        def forward(self, x) -> make_weights().to("cuda"):
            return x

    @register(torch.ones(1).to("cuda"))
    class InADecorator:
        pass

    class InABase(make_base(torch.ones(1).cuda())):
        pass

    class InAKeyword(Base, meta=torch.ones(1).xpu()):
        pass

    class InAWithTarget:
        def run(self):
            with ctx() as self.slots[torch.ones(1).to("cuda")]:
                pass

    class Outer:
        class Inner(make_base(torch.ones(1).npu())):
            pass

    class InANestedFunction:
        def build(self):
            def helper(x=self.weights.to("mps")):
                return x
            return helper

    class InABody:
        def forward(self, x):
            return self.net(x.to_empty(device="cuda"))

    if torch.cuda.is_available():
        class Guarded:
            def go(self):
                return [lambda: t.cuda() for t in self.ts]
    """
)


def test_cpu_classes_see_a_move_anywhere_in_the_class():
    tree = ast.parse(MOVES_EVERYWHERE)
    summary = summarise(tree)
    assert summary.cpu_classes == ["Plain"]
    # The same answer as a walk of each class (what the summary used to do).
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes if not class_moves_to_a_device(c, {"torch": "torch"})] == ["Plain"]


# Classes that move something, each answered from the moves the summary's
# walk met per method (class_moves_to_a_device's ``moves_of``), never by
# filtering every node of every method again.
MOVES_PER_METHOD = textwrap.dedent(
    """
    import torch

    class OnlyToTheCpu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)

        def export(self):
            return self.fc.to("cpu")

    class MovesInALaterMethod(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 2)

        def place(self):
            self.fc.cuda()

    class MovesInANestedDefault(torch.nn.Module):
        def setup(self):
            def inner(w=self.weights.to("cuda")):
                return w
            self.w = inner()

    class FreshTensorOnly(torch.nn.Module):
        def forward(self, x):
            return x + torch.ones(1).cuda()

    class TwoMethodsOneName(torch.nn.Module):
        def go(self):
            return 1

        def go(self):
            self.net.to("cuda")
    """
)


def test_cpu_classes_read_the_moves_each_method_met():
    tree = ast.parse(MOVES_PER_METHOD)
    summary = summarise(tree)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    walked = [c.name for c in classes if not class_moves_to_a_device(c, {"torch": "torch"})]
    assert summary.cpu_classes == walked == ["OnlyToTheCpu", "FreshTensorOnly"]


def test_moves_of_replaces_the_filter_over_the_method_nodes():
    # A method the walk met no move in is read as moving nothing, whatever its
    # nodes hold: the answer comes from ``moves_of``, not from the nodes.
    cls = ast.parse("class C:\n    def place(self):\n        self.net.cuda()\n").body[0]
    assert class_moves_to_a_device(cls, {})
    assert not class_moves_to_a_device(cls, {}, moves_of=lambda _id: [])
    assert class_moves_to_a_device(cls, {}, moves_of=lambda _id: None)


def test_the_summary_walks_each_class_once(monkeypatch):
    # A module of many classes: the summary's helper walks visit each node a
    # bounded number of times, not once more per class (nested classes, or a
    # walk of the whole module per class, made that quadratic).
    source = "import torch\n" + "".join(
        f"class C{i}:\n    def f(self, x):\n        return x + {i}\n" for i in range(50)
    )
    size = sum(1 for _ in ast.walk(ast.parse(source)))
    visits = 0
    real = ast.walk

    def counting(node):
        nonlocal visits
        for child in real(node):
            visits += 1
            yield child

    monkeypatch.setattr(summary_module.ast, "walk", counting)
    summary = summarise_text(source)
    assert summary is not None and len(summary.cpu_classes) == 50
    assert visits < 3 * size


def test_the_summary_json_is_asdicts():
    summary = summarise_text(MOVES_EVERYWHERE + "\nfrom engine import evaluate\nevaluate(1)\n__all__ = ['Plain']\n")
    assert summary is not None and summary.calls and summary.functions
    assert summary.to_json() == asdict(summary)
    assert list(summary.to_json()) == list(asdict(summary))  # the same keys, in the same order


HELPER = """import torch


def evaluate_{i}(model, loader):
    model.eval()
    outs = []
    for x, y in loader:
        outs.append(model(x))
    return outs
"""


def test_the_second_pass_of_several_files_runs_in_workers(tmp_path, monkeypatch):
    # The files that wait for their project's view are the ones past the gate
    # (libcst's work): a few of them already share the workers.
    from concurrent import futures

    import memlint.run.runner as runner
    from memlint.run.results import Settings

    (tmp_path / "pyproject.toml").write_text("")
    files = []
    for i in range(4):
        path = tmp_path / f"helper_{i}.py"
        path.write_text(HELPER.format(i=i))
        files.append(str(path))
    settings = Settings(root=str(tmp_path))
    alone = runner.run(files, settings, jobs=1)
    submitted: list[str] = []

    class InlinePool:
        def __init__(self, max_workers=None, initializer=None):
            pass

        def submit(self, fn, items, *args):
            submitted.extend(p for p, _ in items)
            done: futures.Future = futures.Future()
            done.set_result(fn(items, *args))
            return done

        def shutdown(self, wait=True, cancel_futures=False):
            pass

    monkeypatch.setattr(futures, "ProcessPoolExecutor", InlinePool)
    pooled = runner.run(files, settings, jobs=2)
    assert sorted(submitted) == files  # the first pass (four files) ran inline, the second in the pool
    assert [r.findings for r in pooled] == [r.findings for r in alone]
    assert all(not r.deferred for r in pooled) and all(r.findings for r in alone)


def test_a_warm_run_after_an_edit_does_not_read_again_files_without_the_needles(tmp_path, monkeypatch):
    # Files without a training word are read for the index only to look for
    # a name of the viewed modules' functions; the summary store remembers the
    # digests that hold none, so the next index reads only what changed.
    import memlint.project.index as index
    import memlint.run.runner as runner
    from memlint.run.cache import FindingsCache
    from memlint.run.results import Settings

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "core.py").write_text(HELPER.format(i=0))
    (tmp_path / "main.py").write_text("from core import evaluate_0\n\n\ndef main(m, d):\n    return evaluate_0(m, d)\n")
    for i in range(3):
        (tmp_path / f"notes_{i}.py").write_text(f"NOTE = {i}\n")
    other = tmp_path / "other.py"
    other.write_text("import torch\n\nx = torch.zeros(1)\n")
    files = sorted(str(p) for p in tmp_path.glob("*.py"))
    settings = Settings(root=str(tmp_path))
    cache = FindingsCache(str(tmp_path / ".cache"), fingerprint="test")
    opened: list[str] = []

    def counting(path, *args, **kwargs):
        opened.append(os.path.basename(path))
        return open(path, *args, **kwargs)

    def counting_bytes(path):
        opened.append(os.path.basename(path))
        return read_bytes(path)

    monkeypatch.setattr(index, "open", counting, raising=False)
    monkeypatch.setattr(index, "read_bytes", counting_bytes)
    first = runner.run(files, settings, jobs=1, cache=cache)
    assert {"notes_0.py", "main.py"} <= set(opened)  # the first index reads them
    # The edit changes other.py's summary and spells the helper's name:
    # core.py's view is built again (an edit that does not keeps it without
    # an index, test_project.py).
    other.write_text("import torch\n\nx = torch.zeros(2)\nevaluate_0 = None\n")
    opened.clear()
    index._MEMO.clear()  # a new process, as the next command line run
    again = runner.run(files, settings, jobs=1, cache=cache)
    assert "main.py" in opened  # it holds the needle: summarised for its call
    assert not [name for name in opened if name.startswith("notes_")]
    fresh = runner.run(files, settings, jobs=1)
    assert [r.findings for r in again] == [r.findings for r in first] == [r.findings for r in fresh]
    assert any(r.findings for r in fresh) and any(r.project for r in again)


_LOOP_CALLS_A_HELPER = textwrap.dedent(
    """
    import torch
    from engine import evaluate

    def fit(model, loader, epochs):
        for epoch in range(epochs):
            evaluate(model, loader)
    """
)


def test_a_gate_passed_only_for_the_project_is_read_again_with_the_view():
    """MEM203's gate lets a loop that calls a function of another module
    through (it may switch the model's mode); once the view says no function
    it calls switches or trains (no callees), the rule is dropped before
    libcst parses the file (engine.lint returns no module)."""
    from memlint.lint import engine
    from memlint.project.summary import FunctionFacts
    from memlint.project.view import ProjectView
    from memlint.rule.registry import rule_by_code

    rule = rule_by_code("MEM203")
    quiet = ProjectView(root="/p", path="train.py")
    switching = ProjectView(
        root="/p",
        path="train.py",
        callees=(
            ("evaluate", FunctionFacts("evaluate", False, "eval", "", ("model", "loader"), (), (("model", "eval"),))),
        ),
    )
    assert engine.lint(_LOOP_CALLS_A_HELPER, "train.py", [rule], project=quiet)[1] is None
    assert engine.lint(_LOOP_CALLS_A_HELPER, "train.py", [rule], project=None)[1] is None
    findings, module = engine.lint(_LOOP_CALLS_A_HELPER, "train.py", [rule], project=switching)
    assert module is not None


# Functions of ``tree.body`` that place something on a device (or not) in
# every place the summary's walk reads differently: a decorator, a default,
# a lambda, a nested class's bases, a ``with`` target, a name defined twice,
# a call of another one, a function under an ``if`` (not of ``tree.body``).
PLACES_EVERYWHERE = textwrap.dedent(
    """
    import torch

    def plain(x):
        return x * 2

    def calls_plain(x):
        return plain(x)

    @register(torch.ones(1).to("cuda"))
    def in_a_decorator(x):
        return x

    def in_a_default(x, w=torch.ones(2).cuda()):
        return x

    def in_a_lambda(xs):
        return map(lambda t: t.to("cuda"), xs)

    def in_a_nested_class():
        class Inner(make_base(accelerator.prepare(1))):
            pass
        return Inner

    def in_a_with_target(self):
        with ctx() as self.slots[torch.ones(1).to("cuda")]:
            pass

    def calls_a_placing_one(x):
        return in_a_lambda(x)

    def twice(x):
        return x

    def twice(x):
        return x

    if torch.cuda.is_available():
        def guarded(x):
            return x
    """
)


def test_cpu_functions_are_read_in_the_summary_walk(monkeypatch):
    tree = ast.parse(PLACES_EVERYWHERE)
    expected = summary_module._cpu_functions(tree)
    assert expected == ["calls_plain", "plain"]

    def no_second_walk(tree):
        raise AssertionError("the summary walks the functions again")

    monkeypatch.setattr(summary_module, "_cpu_functions", no_second_walk)
    assert summarise(tree).cpu_functions == expected


def test_a_scope_that_switches_no_model_never_reads_its_calls_names(monkeypatch):
    # The modes a call hands over (arg_modes.py) need a switch (``.eval()``,
    # ``.train()``) of the name in the calling scope: in a scope without one,
    # the names every call runs or hands over are never worked out.
    from memlint.project import arg_modes

    read: list[ast.Call] = []
    real = arg_modes.run_names

    def counting(call):
        read.append(call)
        return real(call)

    monkeypatch.setattr(arg_modes, "run_names", counting)
    body = "".join(f"    y = model(x{i}) + head(y, x{i})\n    engine.step(model, y)\n" for i in range(30))
    quiet = "import torch\nimport engine\n\n\ndef fit(model, head, x0):\n" + body
    summary = summarise_text(quiet)
    assert summary is not None and len(summary.calls) == 30 and not read
    switched = summarise_text(quiet.replace("    y = model(x0)", "    model.train()\n    y = model(x0)", 1))
    assert switched is not None and read  # the switch makes the walk back read them
    assert switched.calls[0].args == (("0", "train", False, ()),)
    assert switched.calls[1].args == (("0", "train", False, ("engine.step",)),)  # handed to it since


_HELPER_WITHOUT_GRAD = textwrap.dedent(
    """
    import torch

    def evaluate(model, loader):
        with torch.no_grad():
            for x, y in loader:
                model(x)
    """
)

_SAMPLER = textwrap.dedent(
    """
    import torch

    @torch.no_grad()
    def sample_images(model, z):
        return model(z)
    """
)

_MOVES_PER_CALL = textwrap.dedent(
    """
    import torch
    import torch.nn as nn

    class Loss(nn.Module):
        def forward(self, x):
            w = torch.ones(3).cuda()
            return (x * w).sum()
    """
)


def _view(**fields):
    from memlint.project.view import ProjectView

    return ProjectView(root="/p", path="utils.py", **fields)


def _parsed(source: str, code: str, view) -> bool:
    """libcst parsed ``source`` for rule ``code`` (engine.lint returns its module)."""
    from memlint.lint import engine
    from memlint.rule.registry import rule_by_code

    return engine.lint(source, "utils.py", [rule_by_code(code)], project=view)[1] is not None


def test_mem202s_helper_waits_for_a_caller_in_training_mode():
    """A helper whose loop runs without grad is flagged only for a model its
    callers elsewhere hand it in training mode: a view without such a caller
    (none, or one in eval mode) keeps libcst away from the file."""
    from memlint.lint import engine
    from memlint.project.view import Caller
    from memlint.rule.registry import rule_by_code

    def caller(mode: str) -> Caller:
        return Caller("train.py", 9, "on", True, True, modes=(("0", mode),))

    assert not _parsed(_HELPER_WITHOUT_GRAD, "MEM202", None)
    assert not _parsed(_HELPER_WITHOUT_GRAD, "MEM202", _view())
    assert not _parsed(_HELPER_WITHOUT_GRAD, "MEM202", _view(callers=(("evaluate", (caller("eval"),)),)))
    training = _view(callers=(("evaluate", (caller("train-trained"),)),))
    findings = engine.lint_text(_HELPER_WITHOUT_GRAD, "utils.py", [rule_by_code("MEM202")], project=training)
    assert [(f.code, f.line) for f in findings] == [("MEM202", 6)]
    assert "train.py:9" in findings[0].message


def test_mem202s_sampler_needs_a_model_in_training_mode_from_somewhere():
    """A sampler with no loop is flagged only for a model in training mode:
    switched by ``.train()`` or built in this file, or from another module
    (a function it calls that switches one, a caller handing one)."""
    from memlint.project.summary import FunctionFacts

    assert not _parsed(_SAMPLER, "MEM202", None)
    assert _parsed(_SAMPLER.replace("return model(z)", "model.train()\n    return model(z)"), "MEM202", None)
    evaluating = FunctionFacts("prepare", False, "eval", "", ("model",), (), (("model", "eval"),))
    assert not _parsed(_SAMPLER, "MEM202", _view(callees=(("prepare", evaluating),)))
    training = FunctionFacts("prepare", False, "train", "", ("model",), (), (("model", "train"),))
    assert _parsed(_SAMPLER, "MEM202", _view(callees=(("prepare", training),)))
    opaque = FunctionFacts("prepare", False, "train", "", ("model",), (), (("model", "train"),), True)
    assert not _parsed(_SAMPLER, "MEM202", _view(callees=(("prepare", opaque),)))


def test_mem703s_method_waits_for_a_module_that_runs_its_class_per_batch():
    from memlint.lint import engine
    from memlint.rule.registry import rule_by_code

    assert not _parsed(_MOVES_PER_CALL, "MEM703", None)
    assert not _parsed(_MOVES_PER_CALL, "MEM703", _view(callers=(("evaluate", ()),)))
    per_batch = _view(called_per_batch=(("Loss", "train.py:12"),))
    findings = engine.lint_text(_MOVES_PER_CALL, "utils.py", [rule_by_code("MEM703")], project=per_batch)
    assert [(f.code, f.line) for f in findings] == [("MEM703", 7)]


def test_mem203_ignores_a_callee_that_cannot_be_read():
    """An opaque function of another module adds only an unknown event to the
    loop (which silences MEM203), and one that only calls ``.train()``
    undoes a switch: neither lets MEM203 reach libcst."""
    from memlint.project.summary import FunctionFacts

    switch = (("model", "eval"),)
    opaque = FunctionFacts("evaluate", False, "eval", "", ("model", "loader"), (), switch, True)
    assert not _parsed(_LOOP_CALLS_A_HELPER, "MEM203", _view(callees=(("evaluate", opaque),)))
    undoes = FunctionFacts("evaluate", False, "train", "", ("model", "loader"), (), (("model", "train"),))
    assert not _parsed(_LOOP_CALLS_A_HELPER, "MEM203", _view(callees=(("evaluate", undoes),)))
    steps = FunctionFacts("evaluate", True, "", "", ("model", "loader"), (), (), True, True)
    assert _parsed(_LOOP_CALLS_A_HELPER, "MEM203", _view(callees=(("evaluate", steps),)))


def test_the_gate_is_read_again_with_the_view_without_a_second_walk(monkeypatch):
    from memlint.gate import facts as gate_facts
    from memlint.lint import engine
    from memlint.rule.registry import rule_by_code

    walks: list[ast.AST] = []
    real = gate_facts.GateFacts.__init__

    def counting(self, tree):
        walks.append(tree)
        real(self, tree)

    monkeypatch.setattr(gate_facts.GateFacts, "__init__", counting)
    assert engine.lint(_LOOP_CALLS_A_HELPER, "train.py", [rule_by_code("MEM203")], project=_view())[1] is None
    assert len(walks) <= 1  # the screening's (none when its tree was already screened)


def test_cpu_builders_count_module_bindings_once_and_only_when_asked() -> None:
    """A builder that returns a class of its own module never asks how often
    a name is bound; builders returning imported classes share one count."""
    from memlint.project import cpu_builders

    own = textwrap.dedent(
        """
        class Net:
            def __init__(self, n):
                self.n = n

        def net(n):
            return Net(n)

        def small():
            return Net(1)
        """
    )
    imported = textwrap.dedent(
        """
        from .models import AlexNet, VGG

        def alexnet(n):
            return AlexNet(n)

        def vgg(n):
            return VGG(n)
        """
    )
    before = cpu_builders._LazyBindings.walks
    assert summarise(ast.parse(own)).cpu_builders == ["net", "small"]
    assert cpu_builders._LazyBindings.walks == before
    assert summarise(ast.parse(imported)).foreign_builders == ["alexnet=AlexNet", "vgg=VGG"]
    assert cpu_builders._LazyBindings.walks == before + 1


def test_closed_instances_read_only_scopes_that_build_an_imported_class(monkeypatch):
    # Every scope binds names; only one bound to an imported class's
    # instance can be a closed instance, so only such a scope is read again.
    read: list[int] = []
    real = summary_module.closed_instances

    def counting(body, params, instances, bindings):
        read.append(len(body))
        return real(body, params, instances, bindings)

    monkeypatch.setattr(summary_module, "closed_instances", counting)
    plain = "import torch\n" + "".join(f"def f{i}(x):\n    y = x + 1\n    return y\n" for i in range(5))
    assert summarise(ast.parse(plain)).closed_instances == []
    assert read == []
    built = "from cam import GradCAM\n\ndef main(paths):\n    cam = GradCAM(1)\n    for p in paths:\n        cam(p)\n"
    assert summarise(ast.parse(built)).closed_instances == [("cam.GradCAM", 4)]
    assert read == [2]


def test_cpu_builders_walk_each_candidate_once_whatever_the_passes(monkeypatch):
    # ``c`` builds through ``b`` through ``a``: three passes over the
    # candidates; each function's body is still walked once.
    from memlint.project import cpu_builders

    source = textwrap.dedent(
        """
        class Net:
            def __init__(self, n):
                self.n = n

        def c(n):
            return b(n)

        def b(n):
            return a(n)

        def a(n):
            return Net(n)

        def other(n):
            return n
        """
    )
    scanned: list[str] = []
    real = cpu_builders._scan

    def counting(fn, *walk):
        scanned.append(fn.name)
        return real(fn, *walk)

    monkeypatch.setattr(cpu_builders, "_scan", counting)
    assert summarise(ast.parse(source)).cpu_builders == ["c", "b", "a"]
    assert sorted(scanned) == ["a", "b", "c", "other"]


def test_object_types_walk_each_method_once(monkeypatch):
    # The object-type facts of a class read what every method assigns to
    # ``self`` and which methods run a model attribute's forward: both come
    # from the one walk of each method, not from two more walks of it.
    from memlint.project import object_types

    source = (
        "import torch\nfrom nets import Net\n\nclass Agent:\n    def __init__(self, n):\n        self.net = Net(n)\n"
    )
    source += "".join(
        f"    def m{i}(self, x):\n        y = self.helper_{i}(x)\n        z = [self.scale * v for v in y]\n        return z\n"
        for i in range(30)
    )
    source += "    def act(self, s):\n        return self.net(s)\n"
    tree = ast.parse(source)
    size = len(nodes_of(tree))
    visited = 0
    real_children, real_nodes = object_types.children, object_types.nodes

    def counting_children(node):
        nonlocal visited
        visited += 1
        return real_children(node)

    def counting_nodes(node):
        nonlocal visited
        found = real_nodes(node)
        visited += len(found)
        return found

    monkeypatch.setattr(object_types, "children", counting_children)
    monkeypatch.setattr(object_types, "nodes", counting_nodes)
    facts = object_types.object_types(tree, {"torch": "torch", "Net": "nets.Net"}, False)
    assert facts.forwards == [("Agent.act", "net", 128, "nets.Net", "")]
    assert visited <= size


def nodes_of(tree):
    from memlint.gate.ast_fields import nodes

    return nodes(tree)


def test_object_types_keep_their_order_with_classes_inside_methods():
    # A class defined in a method: its entries come where its method's walk
    # meets it, and its methods' ``self`` assignments count for the outer
    # class too (the order and counts of one walk per method).
    source = textwrap.dedent(
        """
        from nets import Net, Head

        class Outer:
            def __init__(self, a):
                self.a = a
                class Inner:
                    def __init__(self, b):
                        self.b = b
                    def run(self, x):
                        return self.b(x)
                self.inner = Inner
                self.net = Net()

            def act(self, x):
                return self.net(x)

            def later(self):
                self.a = 1
                class Late:
                    def __init__(self):
                        self.head = Head()
                    def go(self, x):
                        return self.head(x)
                return Late
        """
    )
    from memlint.project.object_types import object_types

    facts = object_types(ast.parse(source), {"Net": "nets.Net", "Head": "nets.Head"}, False)
    assert facts.init_attrs == [("Outer.__init__.Inner", "b", "b")]  # ``self.a`` is assigned twice in Outer
    assert [f[:2] for f in facts.forwards] == [("Outer.act", "net"), ("Outer.later.Late.go", "head")]


def test_cpu_builders_do_not_count_bindings_for_a_name_neither_imported_nor_starred():
    # timm's ``def resnet18(**kw): return _create_resnet(...)``: the callee
    # is the module's own function, never a foreign class: nothing to count.
    from memlint.project import cpu_builders

    source = textwrap.dedent(
        """
        import torch

        def _create(n):
            return n

        def resnet18(n):
            return _create(n)
        """
    )
    before = cpu_builders._LazyBindings.walks
    summary = summarise(ast.parse(source))
    assert summary.cpu_builders == [] and summary.foreign_builders == []
    assert cpu_builders._LazyBindings.walks == before


def test_builds_only_on_cpu_reads_statements_not_every_expression(monkeypatch):
    # The imports it looks for are statements: it never walks the module's
    # expressions, and still finds an import nested anywhere.
    from memlint.project import model_tables

    monkeypatch.setattr(model_tables, "nodes", lambda _node: (_ for _ in ()).throw(AssertionError("walked")))
    head = "class Net:\n    def f(self):\n        return [x * 2 for x in self.xs]\n"
    assert model_tables.builds_only_on_cpu(ast.parse(head), ["Net"])
    for nested in (
        "try:\n    pass\nexcept ImportError:\n    from a import Other\n",
        "def g():\n    with open('f'):\n        from a import Other\n",
        "match x:\n    case 1:\n        from a import *\n",
    ):
        assert not model_tables.builds_only_on_cpu(ast.parse(head + nested), ["Net"])


def test_class_moves_reads_each_method_once(monkeypatch):
    # A class that moves a fresh tensor in one method and registers a buffer:
    # the moves, the registers, the stores into ``self`` and the fresh names
    # all read one list of each method's nodes (each was a walk more).
    from memlint.project import class_moves

    source = "import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
    source += "        super().__init__()\n        self.register_buffer('b', torch.zeros(1))\n"
    source += "".join(f"    def m{i}(self, x):\n        self.h{i} = self.f(x)\n        return x\n" for i in range(20))
    source += "    def hidden(self):\n        h = torch.zeros(2)\n        return h.cuda()\n"
    cls = ast.parse(source).body[1]
    methods: list[ast.AST] = []
    walked = 0
    real_nodes, real_walk = class_moves.nodes, ast.walk

    def recording(node):
        if isinstance(node, ast.FunctionDef):
            methods.append(node)
        return real_nodes(node)

    def counting(node):
        nonlocal walked
        for child in real_walk(node):
            walked += 1
            yield child

    monkeypatch.setattr(class_moves, "nodes", recording)
    monkeypatch.setattr(class_moves.ast, "walk", counting)
    assert not class_moves.class_moves_to_a_device(cls, {"torch": "torch"})
    assert walked == 0
    assert len(methods) == 22 and len(set(map(id, methods))) == 22  # each method read once


def test_class_needs_come_from_the_summarys_walk(monkeypatch):
    # The classes a CPU class constructs (class_needs) are gathered by the
    # summary's own walk of the class, calls in its signatures, lambdas and
    # nested classes included: the class is not walked again.
    from memlint.project import class_moves

    source = textwrap.dedent(
        """
        import torch
        from nets import Encoder

        class Model(Base, nets.Mixin):
            act = staticmethod(lambda x: Act(x))
            def __init__(self, n, norm=nets.Norm(2)):
                self.enc = Encoder(n)
                self.dec = build(n)
                class Inner:
                    head = Head()
            def forward(self, x):
                return self.dec(self.enc(x))
        """
    )
    tree = ast.parse(source)
    expected = class_moves.class_needs(tree, ["Model"])
    assert expected == ["Model=Act,Base,Encoder,Head,nets.Mixin,nets.Norm"]
    read: list[ast.AST] = []
    real = class_moves.nodes

    def recording(node):
        read.append(node)
        return real(node)

    monkeypatch.setattr(class_moves, "nodes", recording)
    summary = summarise(tree)
    assert summary.class_needs == expected
    assert not any(isinstance(node, ast.ClassDef) for node in read)


# Every shape whose reading by object_types' own walk the summary's walk
# must match: local imports of one name twice (the walk keeps the first in
# source order), a ``with`` target, ``x = value`` (its name is no store of
# an unknown value), lambdas, decorators and defaults of nested functions,
# a class body's own statements, comprehensions, ``global``.
OBJECT_SHAPES = textwrap.dedent(
    """
    import torch
    from nets import Net, Other

    def make(n):
        from nets import Net as M
        from other import Net as M
        model = M(n)
        return model

    @wrap(Net())
    def outer(policy, x=Net()):
        global g
        with open_run(Net()) as self.run[Net()]:
            pass
        net = Net()
        other = lambda: Other()
        nets = [Net() for _ in range(2)]
        @deco(other)
        def inner(y=Other()):
            return Net()
        evaluate(net, policy=net)
        return outer

    class Agent:
        table = Net()
        def __init__(self, net):
            self.net = net
            self.actor = Net()
        def act(self, s):
            return self.actor(s)
    """
)


def test_object_types_read_off_the_summarys_walk_are_its_own_walks():
    from memlint.project import object_types
    from memlint.project.summary import _Walker

    tree = ast.parse(OBJECT_SHAPES)
    walker = _Walker(tree)
    own = object_types.object_types(tree, walker.bindings, walker._has_star)
    assert ("make", "model", ("nets.Net",)) in own.bound  # the first import of M in source order
    assert walker.scope_nodes  # every scope's nodes, gathered by the summary
    read = object_types.object_types(tree, walker.bindings, walker._has_star, walker.scope_nodes)
    assert read.to_json() == own.to_json()
    assert summarise(tree).objects.to_json() == own.to_json()  # type: ignore[union-attr]


def test_the_summary_walks_a_module_once_for_its_object_types(monkeypatch):
    # object_types reads the nodes the summary's walk gathered: it walks
    # none itself (it walked every scope's code once more).
    from memlint.project import object_types

    walked = 0
    real = object_types.children

    def counting(node):
        nonlocal walked
        walked += 1
        return real(node)

    monkeypatch.setattr(object_types, "children", counting)
    source = "import torch\nfrom nets import Net\nfrom engine import evaluate\n\ndef run(policy):\n    net = Net()\n"
    source += "".join(f"    evaluate(net.step(policy + {i}), [policy] * {i})\n" for i in range(20))
    summary = summarise(ast.parse(source))
    assert summary.objects is not None and len(summary.objects.sites) == 21
    assert walked == 0
