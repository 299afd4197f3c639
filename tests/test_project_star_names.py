"""The names a star import of project modules brings (project/star_names.py):
a name none of them binds is undefined in the importer, as without the star
import (the ninth batch's bts_test.py, issue 29)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

from memlint.project.index import view_from_disk

_HELPERS = """
    import torch
    from torch.utils.data import Dataset
    class Loader(Dataset):
        def __len__(self):
            return 1
    def _private():
        return 0
"""

# ``Net`` comes from a module named at run time (``vars()[key] = val``):
# which class it is, and whether it moves itself, is not known.
_SCRIPT = """
    import torch
    from helpers import *
    for key, val in vars(__import__(NAME)).items():
        vars()[key] = val
    def test(path):
        model = Net()
        model = torch.nn.DataParallel(model)
        model.load_state_dict(torch.load(path))
        model.cuda()
"""


def test_a_name_no_star_source_binds_is_undefined(tmp_path):
    """Before, any star import could bring ``Net``: the load was reported,
    and the same function without the star import was not."""
    write_project(tmp_path, {"helpers.py": _HELPERS, "test.py": _SCRIPT})
    assert finding_lines(tmp_path / "test.py", "MEM701") == []
    assert view_from_disk(str(tmp_path / "test.py")).star_names == ("Dataset", "Loader", "torch")


def test_a_star_source_binding_the_name_keeps_the_finding(tmp_path):
    moving = _HELPERS + "    class Net(torch.nn.Module):\n        def __init__(self):\n            self.cuda()\n"
    write_project(tmp_path, {"helpers.py": moving, "test.py": _SCRIPT})
    assert finding_lines(tmp_path / "test.py", "MEM701") == [9]


def test_nested_star_imports_are_followed(tmp_path):
    write_project(
        tmp_path,
        {"base.py": "import torch\nclass Net(torch.nn.Module):\n    pass\n", "helpers.py": "from base import *\n"},
    )
    write_project(tmp_path, {"test.py": _SCRIPT})
    assert view_from_disk(str(tmp_path / "test.py")).star_names == ("Net", "torch")


def test_star_imports_not_all_known_stay_open(tmp_path):
    """A library's star import, or a project module binding names in a
    module-level loop: any name may come from it, and the load is reported."""
    library = _SCRIPT.replace("from helpers import *", "from torchvision.models import *")
    looping = _HELPERS + "    for name in ('Net',):\n        globals()[name] = Loader\n"
    write_project(tmp_path, {"lib/test.py": library, "loop/helpers.py": looping, "loop/test.py": _SCRIPT})
    assert finding_lines(tmp_path / "lib" / "test.py", "MEM701") == [9]
    assert view_from_disk(str(tmp_path / "loop" / "test.py")).star_names is None
    assert finding_lines(tmp_path / "loop" / "test.py", "MEM701") == [9]
