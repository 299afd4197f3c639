"""The eighth batch's false alarms left after s17-miss12 (issue 29): TSM's
model class imported from a module the project does not hold (MEM701)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_CONVERT = """
    import torch
    def import_weights():
        import mobilenet_v2_tsm_v2 as tsm_online
        net = tsm_online.MobileNetV2(n_class=27)
        net.load_state_dict(torch.load("../online_demo/mobilenet.pth.tar"))
        return net
    def import_moved():
        import mobilenet_v2_tsm_v2 as tsm_online
        net = tsm_online.MobileNetV2(n_class=27).cuda()
        net.load_state_dict(torch.load("../online_demo/mobilenet.pth.tar"))
        return net
"""


def test_a_class_of_a_module_the_project_lacks_is_not_claimed_until_moved(tmp_path):
    """TSM's ``tsm_fpga/mobilenet_v2_tfslim.py``: no module of the project is
    ``mobilenet_v2_tsm_v2``, so whether ``MobileNetV2`` moves itself is not
    known and the load into a fresh one is not claimed (line 6); moved
    before the load it is reported (line 11). Before, both were."""
    write_project(tmp_path, {"setup.py": "", "tsm_fpga/convert.py": _CONVERT})
    assert finding_lines(tmp_path / "tsm_fpga" / "convert.py", "MEM701") == [11]


def test_a_project_class_that_moves_itself_stays_reported(tmp_path):
    """The same load into a project class whose ``__init__`` moves it: the
    project holds the module, so its code decides, as before."""
    model = """
        import torch.nn as nn
        class MobileNetV2(nn.Module):
            def __init__(self, n_class):
                super().__init__()
                self.fc = nn.Linear(4, n_class).cuda()
    """
    write_project(tmp_path, {"setup.py": "", "tsm_fpga/convert.py": _CONVERT, "tsm_fpga/mobilenet_v2_tsm_v2.py": model})
    assert finding_lines(tmp_path / "tsm_fpga" / "convert.py", "MEM701") == [6, 11]
