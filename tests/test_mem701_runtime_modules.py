"""MEM701 where the model is loaded, then moved, by the code around it.

- DeepSDF's scripts build ``arch.Decoder(...)`` from a module named at run
  time (``arch = __import__("networks." + name, fromlist=["Decoder"])``),
  load, then move it: the class is one of that name somewhere in the
  project (summary.eval_names, ProjectView.eval_builders), and when every
  such class moves nothing the later move says the model is on the CPU at
  the load.
- The same build, load and move in the block of ``if __name__ ==
  "__main__":`` runs in order there (later_moves.enclosing_blocks).
"""

from __future__ import annotations

import textwrap

from project_helpers import finding_lines, write_project

from memlint.project.summary import summarise_text

_DECODER = """
    import torch.nn as nn
    class Decoder(nn.Module):
        def __init__(self, latent, dims):
            super().__init__()
            self.fc = nn.Linear(latent, dims)
"""

_SCRIPT = """
    import json
    import sys
    import torch
    def mesh(folder, spec):
        arch = __import__("networks." + spec["arch"], fromlist=["Decoder"])
        decoder = arch.Decoder(spec["latent"], **spec["net"])
        decoder = torch.nn.DataParallel(decoder)
        state = torch.load(folder + "/latest.pth")
        decoder.load_state_dict(state["model_state_dict"])
        decoder = decoder.module.cuda()
        return decoder
"""


def _deepsdf(tmp_path, decoder: str = _DECODER, script: str = _SCRIPT) -> list[int]:
    write_project(
        tmp_path,
        {"pyproject.toml": "", "networks/__init__.py": "", "networks/plain.py": decoder, "mesh.py": script},
    )
    return finding_lines(tmp_path / "mesh.py", "MEM701")


def test_a_class_called_on_a_module_imported_at_run_time_is_named_like_eval():
    summary = summarise_text(textwrap.dedent(_SCRIPT))
    assert summary is not None and summary.eval_names == ["Decoder"]
    other = _SCRIPT.replace('arch = __import__("networks." + spec["arch"], fromlist=["Decoder"])', "arch = pick(spec)")
    again = summarise_text(textwrap.dedent(other))
    assert again is not None and again.eval_names == []


def test_a_runtime_class_that_moves_nothing_loaded_then_moved_is_silent(tmp_path):
    assert _deepsdf(tmp_path) == []


def test_importlib_spelling_is_the_same(tmp_path):
    script = _SCRIPT.replace("import json", "import importlib").replace(
        '__import__("networks." + spec["arch"], fromlist=["Decoder"])',
        'importlib.import_module("networks." + spec["arch"])',
    )
    assert _deepsdf(tmp_path, script=script) == []


def test_a_runtime_class_that_moves_itself_keeps_the_load_reported(tmp_path):
    moving = _DECODER + "            self.cuda()\n"
    assert _deepsdf(tmp_path, decoder=moving) == [9]


def test_a_class_of_that_name_defined_nowhere_keeps_the_load_reported(tmp_path):
    assert _deepsdf(tmp_path, decoder=_DECODER.replace("class Decoder", "class Encoder")) == [9]


def test_a_module_name_bound_otherwise_too_keeps_the_load_reported(tmp_path):
    script = _SCRIPT.replace("    def mesh(", "    arch = None\n    def mesh(")
    assert _deepsdf(tmp_path, script=script) == [10]


def test_no_move_after_the_load_keeps_it_reported(tmp_path):
    assert _deepsdf(tmp_path, script=_SCRIPT.replace("decoder.module.cuda()", "decoder.module")) == [9]


def test_the_main_block_is_read_in_order(tmp_path):
    script = """
        import sys
        import torch
        if __name__ == "__main__":
            arch = __import__("networks." + sys.argv[1], fromlist=["Decoder"])
            decoder = arch.Decoder(4, **net_spec)
            decoder = torch.nn.DataParallel(decoder)
            state = torch.load(sys.argv[2])
            decoder.load_state_dict(state["model_state_dict"])
            decoder = decoder.module.cuda()
    """
    assert _deepsdf(tmp_path, script=script) == []
    moved_first = script.replace("Decoder(4, **net_spec)", "Decoder(4, **net_spec).cuda()")
    assert _deepsdf(tmp_path, script=moved_first) == [8]
