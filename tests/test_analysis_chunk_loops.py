"""analysis/training/chunk_loops.py: loops over the chunks of one tensor."""

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from memlint.analysis.facts import ModuleFacts
from memlint.analysis.training.chunk_loops import chunk_loop_around, iterates_chunks


def _loops(src: str):
    facts = ModuleFacts(MetadataWrapper(cst.parse_module(textwrap.dedent(src)), unsafe_skip_copy=True))
    return facts, facts.loops.all


@pytest.mark.parametrize(
    "src",
    [
        """
        import torch
        def f(model, rays, chunk_size):
            for c in torch.split(rays, chunk_size):
                model(c)
        """,
        """
        import torch
        def f(model, rays, n):
            chunks = rays.chunk(n)
            for i, c in enumerate(chunks):
                model(c)
        """,
        """
        import torch
        from collections import OrderedDict
        def f(model, batch, chunk_size):
            split = OrderedDict()
            for key in batch:
                split[key] = torch.split(batch[key], chunk_size)
            for s in range(len(split["rays"])):
                model(split["rays"][s])
        """,
        """
        def f(model, rays, args):
            for c in rays.split(args.chunk):
                model(c)
        """,
    ],
)
def test_iterates_chunks(src):
    facts, loops = _loops(src)
    last = loops[-1]
    assert iterates_chunks(last.node, last.scope, facts.names)


@pytest.mark.parametrize(
    "src",
    [
        """
        def f(run):
            for split in "train,val".split(","):
                run(split)
        """,
        """
        import torch
        def f(model, chunks):
            for s in range(len(chunks)):
                model(chunks[s])
        """,
        """
        import torch
        def f(model, rays, chunk_size, other):
            chunks = torch.split(rays, chunk_size)
            if other is not None:
                chunks = other
            for c in chunks:
                model(c)
        """,
        """
        import torch
        def f(model, batch, chunk_size):
            split = load()
            split["rays"] = torch.split(batch, chunk_size)
            for s in range(len(split["rays"])):
                model(split["rays"][s])
        """,
    ],
)
def test_not_chunks(src):
    facts, loops = _loops(src)
    last = loops[-1]
    assert not iterates_chunks(last.node, last.scope, facts.names)


def test_nested_loop_sits_in_the_chunk_loop():
    facts, loops = _loops(
        """
        import torch
        def f(models, rays, chunk_size):
            for c in torch.split(rays, chunk_size):
                for m in range(len(models)):
                    models[m](c)
        def g(models, loader):
            for x in loader:
                for m in range(len(models)):
                    models[m](x)
        """
    )
    chunk, level, batch, inner = loops
    assert chunk_loop_around(facts.loops, level) is chunk
    assert chunk_loop_around(facts.loops, inner) is None
