"""analysis/scope/class_trees.py: each libcst class as ``ast`` reads it, read
from the module's own ``ast`` tree (no second parse) or parsed alone."""

import ast
import textwrap

import libcst as cst
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.scope.class_trees import ClassTrees

SRC = textwrap.dedent(
    """
    import torch

    class Net(torch.nn.Module):
        def forward(self, x):
            return x

    def build():
        class Net:  # the same name, nested: the second in source order
            pass
        return Net

    if torch.cuda.is_available():
        @decorate
        class Head(torch.nn.Module):
            class Inner:
                pass
    else:
        class Head:
            pass

    try:
        class Tried:
            pass
    except ImportError:
        class Failed:
            pass
    finally:
        class Finally:
            pass
    """
)


def _facts(with_tree: bool) -> ModuleFacts:
    wrapper = MetadataWrapper(cst.parse_module(SRC), unsafe_skip_copy=True)
    return ModuleFacts(wrapper, python_tree=ast.parse(SRC) if with_tree else None)


def _dumps(facts: ModuleFacts) -> dict[str, list[str]]:
    trees = facts.class_trees
    return {
        name: [ast.dump(trees.of(c)) for c in defs]  # type: ignore[arg-type]
        for name, defs in facts.calls.classes.items()
    }


def test_read_from_the_module_tree_in_source_order():
    facts = _facts(with_tree=True)
    tree = facts.python_tree
    assert tree is not None
    own = {id(n) for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    classes = facts.calls.classes
    found = [facts.class_trees.of(c) for defs in classes.values() for c in defs]
    assert all(c is not None and id(c) in own for c in found)  # no class parsed again
    nets = [facts.class_trees.of(c) for c in classes["Net"]]
    assert [n.body[0].__class__ for n in nets] == [ast.FunctionDef, ast.Pass]  # type: ignore[union-attr]
    heads = [facts.class_trees.of(c) for c in classes["Head"]]
    assert [len(h.decorator_list) for h in heads] == [1, 0]  # type: ignore[union-attr]
    assert {"Inner", "Tried", "Failed", "Finally"} <= set(classes)


def test_the_same_tree_as_each_class_parsed_alone():
    # ``ast.dump`` leaves positions out: a class parsed alone starts at line 1.
    assert _dumps(_facts(with_tree=True)) == _dumps(_facts(with_tree=False))


def test_parsed_alone_when_the_counts_differ():
    facts = _facts(with_tree=True)
    other = ast.parse("class Net:\n    x = 1\n")  # a tree that does not match the module
    trees = ClassTrees(facts.module, facts.calls.classes, other)
    net = trees.of(facts.calls.classes["Net"][0])
    assert net is not None and isinstance(net.body[0], ast.FunctionDef)
    assert trees.of(facts.calls.classes["Net"][0]) is net  # parsed once
    assert all(id(net) != id(n) for n in ast.walk(other))
