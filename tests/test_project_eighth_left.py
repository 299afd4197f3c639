"""The eighth batch's false alarms left after s17-miss12 (issue 29): TSM's
model class imported from a module the project does not hold (MEM701)."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_CONVERT = """
    import sys
    import torch
    sys.path.append("tf_models/research/slim")
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
    known and the load into a fresh one is not claimed (line 8); moved
    before the load it is reported (line 13). Before, both were."""
    write_project(tmp_path, {"setup.py": "", "tsm_fpga/convert.py": _CONVERT})
    assert finding_lines(tmp_path / "tsm_fpga" / "convert.py", "MEM701") == [13]


def test_an_unresolved_import_without_path_edits_stays_reported(tmp_path):
    """No ``sys.path`` edit: the missing module is most often a project file
    the checked copy lacks (recall_real's EfficientDet ``train.py``, saved
    alone): the load stays reported, as before."""
    script = _CONVERT.replace('sys.path.append("tf_models/research/slim")', "")
    write_project(tmp_path, {"setup.py": "", "tsm_fpga/convert.py": script})
    assert finding_lines(tmp_path / "tsm_fpga" / "convert.py", "MEM701") == [8, 13]


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
    assert finding_lines(tmp_path / "tsm_fpga" / "convert.py", "MEM701") == [8, 13]


_DARKNET = """
    import torch
    import torch.nn as nn
    class Darknet(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 2)
            self.loss_names = ["loss", "box"]
        def forward(self, x, y=None):
            out = self.fc(x)
            if y is None:
                return torch.cat([out], 0)
            loss = ((out - y) ** 2).mean()
            losses = {"loss": loss.item(), "box": loss.item()}
            return loss, torch.Tensor(list(losses.values())).cuda()
"""

_JDE_TRAIN = """
    import torch
    from collections import defaultdict
    from models import *
    def train(loader):
        model = Darknet()
        model.cuda().train()
        model = torch.nn.DataParallel(model)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        rloss = defaultdict(float)
        for i, (x, y) in enumerate(loader):
            loss, components = model(x, y)
            components = torch.mean(components.view(-1, 2), dim=0)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            for ii, key in enumerate(model.module.loss_names):
                rloss[key] = (rloss[key] * i + components[ii]) / (i + 1)
"""


def test_the_summary_lists_the_fresh_elements_of_a_forward_tuple():
    import textwrap

    from memlint.project.summary import ModuleSummary, summarise_text

    summary = summarise_text(textwrap.dedent(_DARKNET), always=True)
    assert summary is not None and summary.forward_items == {"Darknet": [2, 1]}
    assert ModuleSummary.from_json(summary.to_json()).forward_items == {"Darknet": [2, 1]}
    # A return of anything but a tuple or one concatenated tensor: nothing is known.
    other = summarise_text(textwrap.dedent(_DARKNET).replace("torch.cat([out], 0)", "self.helper(out)"), always=True)
    assert other is not None and other.forward_items == {}


def test_a_fresh_element_of_a_project_model_s_tuple_keeps_no_graph(tmp_path):
    """JDE's ``loss, components = model(...)``: ``Darknet.forward`` (another
    module, through a star import) builds ``components`` fresh from
    ``.item()`` floats, so the running means keep no graph. Before, every
    element of a model call's tuple was taken to carry history."""
    write_project(tmp_path, {"setup.py": "", "models.py": _DARKNET, "train.py": _JDE_TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM102") == []


def test_an_element_with_history_stays_reported(tmp_path):
    model = _DARKNET.replace("torch.Tensor(list(losses.values())).cuda()", "torch.stack([loss, loss])")
    write_project(tmp_path, {"setup.py": "", "models.py": model, "train.py": _JDE_TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM102") == [18]
