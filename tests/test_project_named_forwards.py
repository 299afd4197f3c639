"""A named method of a model the project cannot type (issue 29, ST-GCN's
``self.model.extract_feature(data)``; the model class comes from a config
string): the call is a forward when every project class defining that
method is an ``nn.Module`` that runs one of its layers in it. Each file is
linted in process with its project view."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_NET = """\
    import torch.nn as nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.fcn = nn.Linear(2, 2)

        def forward(self, x):
            return self.fcn(x)

        def extract_feature(self, x):
            return self.fcn(x), x
"""

_IO = """\
    from importlib import import_module

    class IO:
        def __init__(self, name):
            self.model = import_module(name).Model()
"""

_DEMO = """\
    import torch
    from io_base import IO

    class Demo(IO):
        def start(self, frames):
            self.model.eval()
            while True:
                data = torch.from_numpy(frames.read())
                output = self.predict(data)
                print(output.argmax())

        def predict(self, data):
            output, feature = self.model.extract_feature(data)
            return output
"""


def test_a_named_method_that_runs_the_models_layers_is_a_forward(tmp_path):
    write_project(tmp_path, {"net.py": _NET, "io_base.py": _IO, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == [7]


def test_a_named_method_that_runs_no_layer_is_no_forward(tmp_path):
    net = _NET.replace("return self.fcn(x), x", "return self.fcn.weight, x")
    write_project(tmp_path, {"net.py": net, "io_base.py": _IO, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == []


def test_a_method_name_some_non_model_class_defines_too_stays_unknown(tmp_path):
    other = """\
        class Reader:
            def extract_feature(self, x):
                return x, x
    """
    write_project(tmp_path, {"net.py": _NET, "io_base.py": _IO, "reader.py": other, "demo.py": _DEMO})
    assert finding_lines(tmp_path / "demo.py", "MEM201") == []


# tabnet's ``explain``: the network's named method hands on to a submodule's
# method of the same kind, which runs that submodule's layers.
_TABNET = """\
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.splitter = nn.Linear(4, 4)

        def forward(self, x):
            return self.splitter(x)

        def forward_masks(self, x):
            return self.splitter(x), {}

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = Encoder()

        def forward(self, x):
            return self.encoder(x)

        def forward_masks(self, x):
            return self.encoder.forward_masks(x)
"""

_EXPLAIN = """\
    import torch
    from network import Net

    class Model:
        def __init__(self):
            self.network = Net()

        def explain(self, loader):
            self.network.eval()
            res = []
            for data in loader:
                m_explain, masks = self.network.forward_masks(data.float())
                res.append(m_explain.cpu().detach().numpy())
            return res
"""


def test_a_named_method_handing_on_to_a_submodules_named_forward_is_a_forward(tmp_path):
    write_project(tmp_path, {"network.py": _TABNET, "abstract_model.py": _EXPLAIN})
    assert finding_lines(tmp_path / "abstract_model.py", "MEM201") == [11]


def test_a_named_method_handing_on_to_a_submodule_method_that_runs_no_layer_is_no_forward(tmp_path):
    net = _TABNET.replace("return self.splitter(x), {}", "return self.splitter.weight, {}")
    write_project(tmp_path, {"network.py": net, "abstract_model.py": _EXPLAIN})
    assert finding_lines(tmp_path / "abstract_model.py", "MEM201") == []


def test_a_named_method_handing_on_under_no_grad_is_no_forward(tmp_path):
    net = _TABNET.replace(
        "        def forward_masks(self, x):\n            return self.splitter(x), {}",
        "        @torch.no_grad()\n        def forward_masks(self, x):\n            return self.splitter(x), {}",
    ).replace("import torch.nn as nn", "import torch\n    import torch.nn as nn")
    write_project(tmp_path, {"network.py": net, "abstract_model.py": _EXPLAIN})
    assert finding_lines(tmp_path / "abstract_model.py", "MEM201") == []


# Wav2Lip's SyncNetInstance: the model's class comes from a star import of a
# module the project does not hold; ``forward_lip`` is defined nowhere in it.
_SYNC = """\
    import torch
    from SyncNetModel import *

    class SyncNetInstance(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.__S__ = S(num_layers_in_fc_layers=1024).cuda()

        def evaluate(self, opt, frames):
            self.__S__.eval()
            feats = []
            for i in range(0, len(frames), opt.batch_size):
                out = self.__S__.forward_lip(frames[i].cuda())
                feats.append(out.data.cpu())
            return torch.cat(feats, 0)
"""

_SCORES = """\
    from SyncNetInstance_calc_scores import SyncNetInstance

    s = SyncNetInstance()
    s.evaluate(opt, frames)
"""


def _sync_project(tmp_path, sync=_SYNC, extra=None):
    files = {"SyncNetInstance_calc_scores.py": sync, "calculate_scores.py": _SCORES}
    files.update(extra or {})
    write_project(tmp_path, files)
    return finding_lines(tmp_path / "SyncNetInstance_calc_scores.py", "MEM201")


def test_a_forward_named_method_no_project_class_defines_is_a_forward(tmp_path):
    assert _sync_project(tmp_path) == [12]


def test_a_method_not_named_for_a_forward_no_project_class_defines_stays_unknown(tmp_path):
    assert _sync_project(tmp_path, _SYNC.replace("forward_lip", "lip_stats")) == []


def test_a_forward_named_method_a_project_class_defines_without_a_layer_stays_unknown(tmp_path):
    other = """\
        class Reader:
            def forward_lip(self, x):
                return x
    """
    assert _sync_project(tmp_path, extra={"reader.py": other}) == []


def test_a_forward_named_method_on_a_receiver_not_switched_in_the_function_stays_unknown(tmp_path):
    assert (
        _sync_project(tmp_path, _SYNC.replace("            self.__S__.eval()\n", "            self.prepare()\n")) == []
    )


def test_a_forward_named_method_on_a_model_named_receiver_never_switched_stays_unknown(tmp_path):
    """LLaMA-Adapter's ``self.model.forward_only(tokens)`` in ``generate``: no
    project class defines ``forward_only`` and nothing switches ``self.model``
    to eval; the name alone is not enough."""
    generation = """\
        import torch
        from model import Transformer

        class LLaMA:
            def __init__(self, model: Transformer):
                self.model = model

            def generate(self, tokens, total_len):
                for cur_pos in range(1, total_len):
                    logits = self.model.forward_only(tokens[:, :cur_pos], cur_pos)
                    tokens[:, cur_pos] = torch.argmax(logits, dim=-1)
                return tokens
    """
    model = """\
        import torch.nn as nn

        class Transformer(nn.Module):
            def __init__(self):
                super().__init__()
                self.output = nn.Linear(4, 4)

            def forward(self, x):
                return self.output(x)
    """
    write_project(tmp_path, {"generation.py": generation, "model.py": model})
    assert finding_lines(tmp_path / "generation.py", "MEM201") == []
