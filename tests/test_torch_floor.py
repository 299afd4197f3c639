"""The project's torch range (memlint/find/torch_floor.py) and what the
migration rules make of it: one test per source a project declares torch in,
the setting that overrides them, and MEM501/MEM602/MEM804 through the CLI."""

import json
import textwrap

import pytest

from memlint.find import torch_floor
from memlint.find.config import ConfigError, parse_table
from memlint.find.torch_floor import (
    TorchRange,
    range_of_requirement,
    range_of_setting,
    torch_range_for,
)
from memlint.fix.fixer import fix_text
from memlint.lint.engine import lint
from memlint.rule.migrations import MIGRATIONS, needed_by_fix, torch_verdict
from memlint.rule.registry import rule_by_code

AMP = textwrap.dedent(
    """\
    import torch
    from torch.cuda.amp import GradScaler, autocast

    scaler = GradScaler()
    for x in loader:
        with autocast():
            loss = model(x)
        scaler.scale(loss).backward()
    """
)


@pytest.fixture(autouse=True)
def _fresh_folders():
    torch_floor._range_from.cache_clear()  # each test writes its own project files
    yield
    torch_floor._range_from.cache_clear()


def project(tmp_path, files: dict[str, str]):
    """A project root (``.git`` stops the climb) holding ``files``; returns
    the path of a module inside it."""
    (tmp_path / ".git").mkdir(exist_ok=True)
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    module = tmp_path / "pkg" / "train.py"
    module.parent.mkdir(exist_ok=True)
    module.write_text(AMP)
    return module


def floor_of(tmp_path, files):
    found = torch_range_for(project(tmp_path, files))
    return None if found is None else (found.floor, found.ceiling, found.ceiling_included, found.where)


# -- specifiers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("requirement", "floor", "ceiling", "included"),
    [
        ("torch>=1.8", (1, 8), None, False),
        ("torch==1.8.1+cu111", (1, 8, 1), (1, 8, 1), True),
        ("torch~=1.8", (1, 8), (2,), False),
        ("torch~=1.8.1", (1, 8, 1), (1, 9), False),
        ("torch==1.8.*", (1, 8), (1, 9), False),
        ("torch>=1.8,<2.4", (1, 8), (2, 4), False),
        ("torch<=2.3.1", None, (2, 3, 1), True),
        ('Torch[opt] >= 2.0 ; python_version > "3.8"', (2, 0), None, False),
    ],
)
def test_specifiers_give_the_accepted_range(requirement, floor, ceiling, included):
    found = range_of_requirement(requirement, "x")
    assert (found.floor, found.ceiling, found.ceiling_included) == (floor, ceiling, included)


@pytest.mark.parametrize(
    "requirement", ["torch", "torchvision>=0.9", "torch-tb-profiler==0.4", "torch @ file:///w.whl"]
)
def test_no_range_from_a_bare_name_another_package_or_a_url(requirement):
    assert range_of_requirement(requirement, "x") is None


def test_a_range_older_than_a_fix_and_one_before_a_deprecation():
    at_least_18 = range_of_requirement("torch>=1.8", "x")
    assert at_least_18.older_than("2.3") and at_least_18.reaches("2.4")
    pinned = range_of_requirement("torch==1.8.1", "x")
    assert pinned.older_than("2.3") and not pinned.reaches("2.4")
    below = range_of_requirement("torch<2.4", "x")
    assert not below.reaches("2.4") and range_of_requirement("torch<=2.4", "x").reaches("2.4")
    assert not range_of_requirement("torch>=2.3", "x").older_than("2.3")
    assert range_of_requirement("torch>=1.10", "x").older_than("2.3")  # 1.10 is not 1.1


# -- one test per source ----------------------------------------------------


def test_pyproject_dependencies(tmp_path):
    files = {"pyproject.toml": '[project]\nname = "p"\ndependencies = [\n  "numpy",\n  "torch>=1.8",\n]\n'}
    assert floor_of(tmp_path, files) == ((1, 8), None, False, "pyproject.toml:5")


def test_pyproject_optional_dependencies(tmp_path):
    files = {
        "pyproject.toml": """\
            [project]
            name = "p"
            dependencies = ["numpy"]
            [project.optional-dependencies]
            train = ["torch>=1.9,<2.1"]
            """
    }
    assert floor_of(tmp_path, files) == ((1, 9), (2, 1), False, "pyproject.toml:5")


def test_requirements_with_an_include(tmp_path):
    files = {
        "requirements.txt": "numpy\n-r requirements/base.txt\n",
        "requirements/base.txt": "# pinned for the paper\npillow\ntorch==1.8.1 --hash=sha256:00\n",
    }
    assert floor_of(tmp_path, files) == ((1, 8, 1), (1, 8, 1), True, "requirements/base.txt:3")


def test_setup_py_read_statically_never_run(tmp_path):
    files = {
        "setup.py": """\
            import sys
            from setuptools import setup
            open("RAN", "w").write("setup.py was executed")
            requirements = ["numpy", "torch>=1.7.1"]
            setup(name="p", install_requires=requirements, extras_require={"dev": ["pytest"]})
            """
    }
    assert floor_of(tmp_path, files) == ((1, 7, 1), None, False, "setup.py:4")
    assert not (tmp_path / "RAN").exists()


def test_setup_cfg_install_requires(tmp_path):
    files = {
        "setup.cfg": """\
            [metadata]
            name = p
            [options]
            install_requires =
                numpy
                torch>=1.10
            """
    }
    assert floor_of(tmp_path, files) == ((1, 10), None, False, "setup.cfg:6")


def test_environment_yml_conda_and_pip(tmp_path):
    conda = {
        "environment.yml": """\
            name: research
            channels: [pytorch]
            dependencies:
              - python=3.8
              - pytorch=1.8
              - torchvision
            """
    }
    assert floor_of(tmp_path, conda) == ((1, 8), (1, 9), False, "environment.yml:5")
    torch_floor._range_from.cache_clear()
    pip = {
        "environment.yml": """\
            dependencies:
              - python=3.9
              - pip:
                - torch==1.13.1
            """
    }
    assert floor_of(tmp_path, pip) == ((1, 13, 1), (1, 13, 1), True, "environment.yml:4")


def test_the_setting_overrides_the_project_files(tmp_path):
    module = project(tmp_path, {"requirements.txt": "torch==1.8.1\n"})
    setting = range_of_setting("2.3", "pyproject.toml [tool.memlint] torch-version")
    found = torch_range_for(module, setting)
    assert (found.floor, found.ceiling, found.where) == ((2, 3), None, "pyproject.toml [tool.memlint] torch-version")


def test_the_setting_is_validated(tmp_path):
    config = parse_table({"torch-version": "1.8"}, tmp_path / "pyproject.toml")
    assert config.torch_version == "1.8"
    for bad in (">=1.8", "latest", 1.8):
        with pytest.raises(ConfigError, match="torch-version"):
            parse_table({"torch-version": bad}, tmp_path / "pyproject.toml")


def test_several_requirements_combine_to_the_lowest_floor(tmp_path):
    files = {
        "pyproject.toml": '[project]\nname = "p"\ndependencies = ["torch>=2.0"]\n',
        "requirements-dev.txt": "torch==1.12.1\n",
    }
    assert floor_of(tmp_path, files) == ((1, 12, 1), None, False, "requirements-dev.txt:1")


def test_the_nearest_declaring_folder_wins_and_the_climb_stops_at_the_root(tmp_path):
    (tmp_path / "requirements.txt").write_text("torch>=1.6\n")
    inner = tmp_path / "repo"
    inner.mkdir()
    (inner / ".git").mkdir()
    (inner / "src").mkdir()
    module = inner / "src" / "train.py"
    module.write_text(AMP)
    assert torch_range_for(module) is None  # repo/ is a root that declares nothing
    (inner / "requirements.txt").write_text("torch>=1.9\n")
    torch_floor._range_from.cache_clear()
    assert torch_range_for(module).floor == (1, 9)


def test_a_broken_project_file_says_nothing(tmp_path):
    files = {"setup.py": "setup(install_requires=['torch>=1.8'\n", "pyproject.toml": "[project\ntorch"}
    assert floor_of(tmp_path, files) is None


# -- the verdicts -------------------------------------------------------------


def test_every_migration_row_names_the_release_its_fix_needs():
    for row in MIGRATIONS:
        if row.rule == "MEM804":
            assert row.requires == ""  # removing an argument works on every release
        else:
            assert row.requires, row.symbol
    assert needed_by_fix("MEM501", "from torch.amp import GradScaler, autocast").requires == "2.3"
    assert needed_by_fix("MEM501", 'torch.amp.autocast("cuda")').requires == "1.10"


def test_verdicts():
    at_least_18 = range_of_requirement("torch>=1.8", "requirements.txt:3")
    row = needed_by_fix("MEM501", "torch.amp.GradScaler('cuda')")
    verdict = torch_verdict("2.4", row, at_least_18)
    assert verdict.report
    assert verdict.withheld == (
        "fix withheld: the project supports torch 1.8 (requirements.txt:3); `torch.amp.GradScaler` needs torch 2.3: "
        "raise the floor to torch>=2.3, or keep the old spelling until then (ignore MEM501)"
    )
    assert not torch_verdict("2.4", row, range_of_requirement("torch==1.8.1", "x")).report
    assert torch_verdict("2.4", row, range_of_requirement("torch>=2.3", "x")).withheld is None
    assert torch_verdict("2.4", row, None) == torch_verdict("2.4", None, None)


def _lint(source, code, torch: TorchRange | None):
    return lint(source, "train.py", [rule_by_code(code)], torch=torch)[0]


def test_mem501_on_torch_1_8_reports_without_a_fix_and_autocast_alone_keeps_it():
    at_least_18 = range_of_requirement("torch>=1.8", "requirements.txt:1")
    findings = _lint(AMP, "MEM501", at_least_18)
    # The import and its two uses (lines 2, 4, 6), each without the fix.
    assert [(f.line, f.fix) for f in findings] == [(2, None), (4, None), (6, None)]
    assert "torch.amp.GradScaler` needs torch 2.3" in findings[0].message
    assert fix_text(AMP, "train.py", [rule_by_code("MEM501")], torch=at_least_18).text == AMP
    # autocast alone needs 1.10: a project on 1.10 gets the fix.
    only_autocast = "import torch\nwith torch.cuda.amp.autocast():\n    y = model(x)\n"
    assert _lint(only_autocast, "MEM501", range_of_requirement("torch>=1.10", "x"))[0].fix is not None
    assert _lint(only_autocast, "MEM501", at_least_18)[0].fix is None


def test_mem602_and_mem804_follow_the_range():
    checkpoint = "import torch.utils.checkpoint\ny = torch.utils.checkpoint.checkpoint(fn, x)\n"
    assert _lint(checkpoint, "MEM602", range_of_requirement("torch>=1.10", "x"))[0].fix is None
    assert _lint(checkpoint, "MEM602", range_of_requirement("torch>=1.11", "x"))[0].fix is not None
    assert _lint(checkpoint, "MEM602", range_of_requirement("torch==2.0.1", "x")) == []
    verbose = "import torch\ns = torch.optim.lr_scheduler.StepLR(opt, 10, verbose=True)\n"
    assert _lint(verbose, "MEM804", range_of_requirement("torch<2.2", "x")) == []
    assert _lint(verbose, "MEM804", range_of_requirement("torch>=1.8", "x"))[0].fix is not None


# -- through the command line --------------------------------------------------


def test_cli_fix_on_a_project_on_torch_1_8_reports_and_does_not_rewrite(tmp_path, run_memlint):
    module = project(tmp_path, {"requirements.txt": "numpy\ntorch>=1.8\n"})
    proc = run_memlint("check", "--fix", "--select", "MEM501", "pkg/train.py")
    assert proc.returncode == 1, proc.stderr
    assert module.read_text() == AMP
    assert "fix withheld: the project supports torch 1.8 (requirements.txt:2)" in proc.stdout
    # The two ways out a user can act on (yolov5, torch>=1.8: four findings it could not fix).
    assert "raise the floor to torch>=2.3, or keep the old spelling until then (ignore MEM501)" in proc.stdout
    # Pinned exactly to 1.8.1: torch.cuda.amp is not deprecated there, nothing to say.
    (tmp_path / "requirements.txt").write_text("torch==1.8.1\n")
    proc = run_memlint("check", "--fix", "--select", "MEM501", "pkg/train.py")
    assert proc.returncode == 0 and module.read_text() == AMP, proc.stdout
    # On torch 2.3 the fix is applied.
    (tmp_path / "requirements.txt").write_text("torch>=2.3\n")
    assert run_memlint("check", "--fix", "--select", "MEM501", "pkg/train.py").returncode == 0
    assert "torch.amp" in module.read_text()


def test_cli_setting_overrides_and_the_cache_follows_the_requirements(tmp_path, run_memlint):
    project(tmp_path, {"requirements.txt": "torch>=2.4\n"})
    check = ("check", "--select", "MEM501", "--output-format", "json", "pkg/train.py")
    fixable = json.loads(run_memlint(*check).stdout)
    assert [f["fix"] is not None for f in fixable] == [True, True, True]  # the import and its two uses
    (tmp_path / "requirements.txt").write_text("torch>=1.8\n")
    withheld = json.loads(run_memlint(*check).stdout)  # cached run: the key holds the range
    assert [f["fix"] for f in withheld] == [None, None, None]
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\ntorch-version = "2.3"\n')
    assert [f["fix"] is not None for f in json.loads(run_memlint(*check).stdout)] == [True, True, True]


def test_cli_show_settings_names_the_floor_and_its_source(tmp_path, run_memlint):
    project(tmp_path, {"setup.cfg": "[options]\ninstall_requires =\n    torch>=1.7,<2.0\n"})
    proc = run_memlint("check", "--show-settings", "pkg/train.py")
    assert proc.returncode == 0, proc.stderr
    assert "Settings for pkg/train.py:" in proc.stdout
    assert "torch: floor 1.7, ceiling <2.0, from setup.cfg:3: torch>=1.7,<2.0" in proc.stdout
    assert "MEM501" in proc.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\ntorch-version = "1.12"\n')
    proc = run_memlint("check", "--show-settings", "pkg/train.py")
    assert "torch: floor 1.12, ceiling none, from pyproject.toml [tool.memlint] torch-version" in proc.stdout


def test_flake8_plugin_reads_the_same_range(tmp_path):
    from memlint.frontends.flake8_plugin import _torch_range, config_for

    module = project(tmp_path, {"requirements.txt": "torch>=1.8\n"})
    found = _torch_range(str(module), config_for(str(module), None))
    assert found is not None and found.floor == (1, 8) and found.where == "requirements.txt:1"


def test_mem802_scheduler_first_in_a_call_follows_the_range():
    # Stepping the scheduler at the start of each epoch's call was the
    # documented order before torch 1.1: a project pinned below is left alone.
    epoch = (
        "import torch\n"
        "def train_one_epoch(model, loader, optimizer, scheduler):\n"
        "    scheduler.step()\n"
        "    for x in loader:\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n"
    )
    assert _lint(epoch, "MEM802", range_of_requirement("torch==1.0.0", "x")) == []
    assert [f.line for f in _lint(epoch, "MEM802", range_of_requirement("torch==1.3.0", "x"))] == [3]


def test_mem802_every_shape_follows_the_range():
    # The same pin silences the scheduler stepped first in the epoch loop
    # (pt.darts pins torch 1.0.0, Deep-SVDD 0.4.1); a range reaching 1.1 keeps it.
    loop = (
        "import torch\n"
        "scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 10)\n"
        "for epoch in range(10):\n"
        "    scheduler.step()\n"
        "    for x in loader:\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n"
    )
    assert _lint(loop, "MEM802", range_of_requirement("torch==0.4.1", "x")) == []
    assert _lint(loop, "MEM802", range_of_requirement("torch<1.1", "x")) == []
    assert [f.line for f in _lint(loop, "MEM802", range_of_requirement("torch>=0.4.1", "x"))] == [4]
    assert [f.line for f in _lint(loop, "MEM802", None)] == [4]


# -- conda environment files by other names, and pins --------------------------


def test_conda_env_files_by_the_names_people_give_them(tmp_path):
    # decision-transformer's gym/conda_env.yml: the pip section pins 1.8.1.
    files = {
        "conda_env.yml": """\
            name: decision-transformer-gym
            channels:
              - pytorch
            dependencies:
              - python=3.8.5
              - pip:
                - torch==1.8.1
            """
    }
    assert floor_of(tmp_path, files) == ((1, 8, 1), (1, 8, 1), True, "conda_env.yml:7")
    for name in ("environment-cuda.yml", "env.yaml", "conda.yml", "torch_env.yml"):
        assert torch_floor.is_environment_file(name), name
    for name in ("config.yaml", "model.yml", "condaenv.txt", ".pre-commit-config.yaml"):
        assert not torch_floor.is_environment_file(name), name


def test_every_environment_file_of_the_folder_counts(tmp_path):
    files = {
        "environment-cpu.yml": "dependencies:\n  - pytorch=1.6.0\n",
        "environment-gpu.yml": "dependencies:\n- pytorch>=1.8.1\n",
    }
    # The lowest floor, and no ceiling: one of them sets none.
    assert floor_of(tmp_path, files) == ((1, 6, 0), None, False, "environment-cpu.yml:2")


def test_yaml_naming_torch_outside_its_dependencies_says_nothing(tmp_path):
    # A channel named pytorch, a config that names torch: not requirements.
    files = {
        "env.yml": "channels:\n  - pytorch\ndependencies:\n  - python=3.8\nnotes:\n  - torch==1.0.0\n",
        "train_env.yaml": "backend: torch\nversion: 1.2\n",
    }
    assert floor_of(tmp_path, files) is None
    # ... so the climb goes on to the folder above, which declares it.
    (tmp_path / "requirements.txt").write_text("torch>=1.9\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "env.yml").write_text(files["env.yml"])
    torch_floor._range_from.cache_clear()
    found = torch_range_for(sub / "train.py")
    assert found is not None and found.where == "requirements.txt:1"


def test_an_equality_is_a_pin_that_a_wider_range_elsewhere_keeps():
    # cnnimageretrieval: requirements.txt pins torch==1.0.0, a later
    # setup.py allows >=1.0.0,<1.4.0; the code was written for 1.0.0.
    pin = range_of_requirement("torch==1.0.0", "requirements.txt:1")
    wide = range_of_requirement("torch>=1.0.0,<1.4.0", "setup.py:20")
    both = torch_floor.combine([wide, pin])
    assert (both.floor, both.ceiling, both.where) == ((1, 0, 0), (1, 4, 0), "setup.py:20")
    assert both.reaches("1.1") and both.predates("1.1")  # deprecations: the range; behaviour: the pin
    assert both.pinned.where == "requirements.txt:1"
    assert not wide.predates("1.1") and wide.pinned is None
    assert range_of_requirement("torch==1.8.*", "x").pinned is not None
    assert range_of_requirement("torch>=1.8,<=1.8.1", "x").pinned is None  # a range, not an equality
    # Several pins: the newest counts (the code ran on each).
    newer = torch_floor.combine([pin, range_of_requirement("torch==1.2.0", "requirements-gpu.txt:1")])
    assert not newer.predates("1.1") and newer.predates("1.3")


def test_conda_versions_are_pins(tmp_path):
    files = {"environment.yml": "dependencies:\n  - pytorch=1.2\n", "setup.py": SETUP_WIDE}
    found = torch_range_for(project(tmp_path, files))
    assert found.pinned is not None and found.pinned.ceiling == (1, 3)
    assert found.predates("1.11") and not found.predates("1.2")


SETUP_WIDE = """\
from setuptools import setup
setup(name="p", install_requires=["torch>=1.0"])
"""


def test_mem802_and_mem602_follow_the_pin_that_a_wider_range_keeps(tmp_path):
    pinned = torch_floor.combine(
        [range_of_requirement("torch>=1.0.0,<1.4.0", "setup.py:20"), range_of_requirement("torch==1.0.0", "r:1")]
    )
    epoch = (
        "import torch\n"
        "def train_one_epoch(model, loader, optimizer, scheduler):\n"
        "    scheduler.step()\n"
        "    for x in loader:\n"
        "        model(x).backward()\n"
        "        optimizer.step()\n"
    )
    assert _lint(epoch, "MEM802", pinned) == []
    assert [f.line for f in _lint(epoch, "MEM802", range_of_requirement("torch>=1.0.0,<1.4.0", "x"))] == [3]
    # MEM602: a pin without `use_reentrant` (1.11) makes the advice wrong: silent.
    checkpoint = "import torch.utils.checkpoint\ny = torch.utils.checkpoint.checkpoint(fn, x)\n"
    on_181 = torch_floor.combine(
        [range_of_requirement("torch>=1.8", "s:1"), range_of_requirement("torch==1.8.1", "r:1")]
    )
    assert _lint(checkpoint, "MEM602", on_181) == []
    assert _lint(checkpoint, "MEM602", range_of_requirement("torch<1.11", "x")) == []
    # A floor below 1.11 without a pin: reported, the fix withheld (RULES.md).
    assert _lint(checkpoint, "MEM602", range_of_requirement("torch>=1.8", "x"))[0].fix is None
    # A pin with the argument, a range reaching the warning: reported and fixed.
    on_213 = torch_floor.combine(
        [range_of_requirement("torch>=1.11", "s:1"), range_of_requirement("torch==2.1.3", "r:1")]
    )
    assert _lint(checkpoint, "MEM602", on_213)[0].fix is not None


def test_cli_mem602_silent_in_a_conda_env_pinned_project(tmp_path, run_memlint):
    module = project(tmp_path, {"gym/conda_env.yml": "dependencies:\n  - pip:\n    - torch==1.8.1\n"})
    gym = tmp_path / "gym" / "models" / "gpt2.py"
    gym.parent.mkdir(parents=True)
    gym.write_text("import torch.utils.checkpoint\ny = torch.utils.checkpoint.checkpoint(fn, x)\n")
    module.write_text(gym.read_text())
    proc = run_memlint("check", "--select", "MEM602", "--output-format", "json", ".")
    # Only the module outside gym/ (no pin there) is told.
    found = [f["filename"].replace("\\", "/") for f in json.loads(proc.stdout)]
    assert len(found) == 1 and found[0].endswith("pkg/train.py"), found
    proc = run_memlint("check", "--show-settings", "gym/models/gpt2.py")
    assert "torch: floor 1.8.1, ceiling <=1.8.1, from conda_env.yml:3: torch==1.8.1" in proc.stdout


@pytest.mark.parametrize(
    "name,text",
    [
        (
            "setup.cfg",
            "[metadata]\nlicense_file = LICENSE\n\n[flake8]\nmax-line-length = 120\n\n[tool:pytest]\nnorecursedirs = data\n",
        ),
        ("pyproject.toml", "[tool.black]\nline-length = 120\n\n[tool.isort]\nprofile = 'black'\n"),
    ],
)
def test_a_vendored_folders_tool_settings_do_not_cut_the_pin_off(tmp_path, name, text):
    # A vendored library's lint configuration declares no package: the
    # project's own pin above it still applies.
    files = {"requirements.txt": "torch~=1.12.1+cu113\n", f"vendor/yolo/{name}": text}
    project(tmp_path, files)
    module = tmp_path / "vendor" / "yolo" / "common.py"
    module.write_text(AMP)
    found = torch_range_for(module)
    assert found is not None and found.floor == (1, 12, 1)


@pytest.mark.parametrize(
    "name,text",
    [
        ("setup.cfg", "[metadata]\nname = yolo\n\n[options]\npackages = find:\n"),
        ("pyproject.toml", "[project]\nname = 'yolo'\ndependencies = ['numpy']\n"),
        ("pyproject.toml", "[build-system]\nrequires = ['setuptools']\n"),
        ("pyproject.toml", "[tool.poetry]\nname = 'yolo'\n"),
        ("setup.py", "from setuptools import setup\nsetup(name='yolo')\n"),
    ],
)
def test_a_nested_package_declaration_still_ends_the_climb(tmp_path, name, text):
    files = {"requirements.txt": "torch~=1.12.1+cu113\n", f"vendor/yolo/{name}": text}
    project(tmp_path, files)
    module = tmp_path / "vendor" / "yolo" / "common.py"
    module.write_text(AMP)
    assert torch_range_for(module) is None
