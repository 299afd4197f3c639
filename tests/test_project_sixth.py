"""The sixth yardstick batch's misses and false alarms whose deciding fact
is in another module (issue 29): a callable object of another module that
trains, an imported validation helper that leaves the model in eval mode,
a load helper's return value fed to ``load_state_dict``. Each file is
linted in process with its project view."""

from __future__ import annotations

from project_helpers import finding_lines, write_project

# -- MEM201: a callable object of another module runs backward and step ----------

_LOSS = """\
    import torch

    class LossCompute:
        def __init__(self, criterion, opt):
            self.criterion = criterion
            self.opt = opt

        def __call__(self, y, logits):
            loss = self.criterion(logits, y)
            loss.backward()
            self.opt.step()
            self.opt.zero_grad()
            return loss.item()
"""

_TRAIN = """\
    import torch
    import torch.nn as nn
    from lossmod import LossCompute

    def evaluate(loader):
        with torch.no_grad():
            model.eval()
            for x, y in loader:
                model(x)

    def run_epoch(loader):
        for x, y in loader:
            logits = model(x)
            compute_loss(y, logits)

    if __name__ == "__main__":
        model = nn.Linear(2, 2)
        loader = [(torch.zeros(1, 2), torch.zeros(1, dtype=torch.long))]
        compute_loss = LossCompute(nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1))
        for epoch in range(3):
            run_epoch(loader)
            evaluate(loader)
"""


def test_a_loop_calling_an_object_whose_call_trains_is_a_training_loop(tmp_path):
    write_project(tmp_path, {"lossmod.py": _LOSS, "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM201") == []


def test_the_same_object_that_only_computes_a_loss_leaves_the_loop_evaluating(tmp_path):
    quiet = _LOSS.replace("            loss.backward()\n", "").replace("            self.opt.step()\n", "")
    write_project(tmp_path, {"lossmod.py": quiet.replace("            self.opt.zero_grad()\n", ""), "train.py": _TRAIN})
    assert finding_lines(tmp_path / "train.py", "MEM201") == [12]


# -- MEM501: a class attribute does not rebind a module import in the methods --------


def test_a_class_attribute_named_as_an_import_leaves_the_import_resolved_in_methods():
    import libcst as cst

    from memlint.analysis.scope.names import ImportTable

    methods_only = (
        "from torch.cuda import amp\nclass Shape:\n    amp = False\n    def f(self):\n        return amp.autocast()\n"
    )
    assert ImportTable(cst.parse_module(methods_only)).bindings.get("amp") == "torch.cuda.amp"
    # Read in the class body itself after its own binding: which one is meant is not known.
    read_in_body = methods_only.replace("    amp = False\n", "    amp = False\n    use = amp\n")
    assert "amp" not in ImportTable(cst.parse_module(read_in_body)).bindings
    assert "amp" not in ImportTable(cst.parse_module(methods_only + "amp = 2\n")).bindings


# -- MEM203: an imported validation helper switches to eval, nothing switches back ------

_VAL = """\
    import torch

    def validate(net, loader):
        net.eval()
        with torch.no_grad():
            return sum(net(x).sum().item() for x, _ in loader)
"""

_FIT = """\
    from val import validate

    def fit(net, loader, opt, epochs):
        for epoch in range(epochs):
            for x, y in loader:
                loss = (net(x) - y).pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            validate(net, loader)
"""


def test_a_file_that_never_spells_eval_gets_mem203_from_an_imported_validate(tmp_path):
    write_project(tmp_path, {"val.py": _VAL, "fit.py": _FIT})
    assert finding_lines(tmp_path / "fit.py", "MEM203") == [10]
    undone = _FIT.replace(
        "        for epoch in range(epochs):\n", "        for epoch in range(epochs):\n            net.train()\n"
    )
    write_project(tmp_path, {"fit.py": undone})
    assert finding_lines(tmp_path / "fit.py", "MEM203") == []
