"""MEM802 on ``self.scheduler`` built by a project factory of another module.

MGN-pytorch's ``Trainer.__init__`` sets ``self.scheduler =
utility.make_scheduler(args, self.optimizer)``, whose every ``return``
builds a torch scheduler (``lrs.StepLR``/``lrs.MultiStepLR``, bound in
branches), and ``train()`` steps it before the batch loop steps the
optimizer. The view types the attribute in the class's methods
(typed_objects ``_scheduler_attr_types``, from ObjectTypes.scheduler_attrs),
ObjectTable reads a class attribute's kind from it, and the optimizer the
scheduler follows is the factory's argument that is one (``self.optimizer``,
not ``args``).
"""

from __future__ import annotations

from project_helpers import finding_lines, write_project

_UTILITY = """
    import torch.optim.lr_scheduler as lrs
    def make_scheduler(args, optimizer):
        if args.decay_type == "step":
            scheduler = lrs.StepLR(optimizer, step_size=args.lr_decay)
        elif args.decay_type.find("step") >= 0:
            scheduler = lrs.MultiStepLR(optimizer, milestones=[10, 20])
        return scheduler
"""

_TRAINER = """
    import torch
    import utility
    class Trainer:
        def __init__(self, args, model, loader):
            self.model = model
            self.loader = loader
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            self.scheduler = utility.make_scheduler(args, self.optimizer)
        def train(self):
            self.scheduler.step()
            self.model.train()
            for x, y in self.loader:
                self.optimizer.zero_grad()
                loss = self.model(x).sum()
                loss.backward()
                self.optimizer.step()
"""


def _lines(tmp_path, utility: str = _UTILITY, trainer: str = _TRAINER) -> list[int]:
    write_project(tmp_path, {"pyproject.toml": "", "utility.py": utility, "trainer.py": trainer})
    return finding_lines(tmp_path / "trainer.py", "MEM802")


def test_a_scheduler_attribute_from_a_factory_of_another_module_is_reported(tmp_path):
    assert _lines(tmp_path) == [11]


def test_a_factory_returning_a_home_made_scheduler_is_silent(tmp_path):
    home_made = """
        class WarmUp:
            def __init__(self, optimizer):
                self.optimizer = optimizer
            def step(self):
                pass
        def make_scheduler(args, optimizer):
            return WarmUp(optimizer)
    """
    assert _lines(tmp_path, utility=home_made) == []


def test_an_attribute_also_set_to_anything_else_is_silent(tmp_path):
    rebound = _TRAINER.replace(
        "        def train(self):\n",
        "        def reset(self, scheduler):\n            self.scheduler = scheduler\n        def train(self):\n",
    )
    assert _lines(tmp_path, trainer=rebound) == []


def test_a_scheduler_of_another_optimizer_than_the_loop_steps_is_silent(tmp_path):
    other = _TRAINER.replace(
        "utility.make_scheduler(args, self.optimizer)", "utility.make_scheduler(args, self.d_optimizer)"
    ).replace(
        "            self.scheduler =",
        "            self.d_optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n            self.scheduler =",
    )
    assert _lines(tmp_path, trainer=other) == []


def test_a_factory_beside_the_trainer_in_a_folder_with_a_stray_init_is_reported(tmp_path):
    # MSRN's ``Train/`` and ``Test/code/``: each holds an ``__init__.py`` and is run
    # as ``python main.py`` from inside, so ``import utility`` is the sibling.
    files = {"README.md": "", ".git/HEAD": ""}
    for folder in ("Train", "Test/code"):
        files |= {f"{folder}/__init__.py": "", f"{folder}/utility.py": _UTILITY, f"{folder}/trainer.py": _TRAINER}
    write_project(tmp_path, files)
    assert finding_lines(tmp_path / "Train" / "trainer.py", "MEM802") == [11]
    assert finding_lines(tmp_path / "Test" / "code" / "trainer.py", "MEM802") == [11]
