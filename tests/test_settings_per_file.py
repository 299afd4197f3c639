"""Settings per file, as ruff does: every file is checked with the nearest
``[tool.memlint]`` up its folder tree, whatever paths the command line names,
and the command line's own selection wins over the config's. Through the real
`memlint` command."""

import json
import os
import textwrap

LEAKY = textwrap.dedent(
    """\
    import torch

    def train(model, loader, optimizer):
        for x in loader:
            optimizer.step()
            torch.cuda.empty_cache()
    """
)
DEPRECATED_AMP = textwrap.dedent(
    """\
    import torch
    from torch.cuda import amp

    def train(model, loader, optimizer):
        scaler = amp.GradScaler()
        for imgs, targets in loader:
            with amp.autocast():
                loss = model(imgs, targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    """
)
FUSABLE = (
    "import torch.nn as nn\nblock = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU())\n"
)


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def found(proc, root):
    """(path relative to root, code) of every finding in a JSON report."""
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return sorted((os.path.relpath(i["filename"], root), i["code"]) for i in json.loads(proc.stdout))


def json_check(run_memlint, root, *args):
    return found(run_memlint("check", "--output-format", "json", "--no-cache", *args, cwd=root), root)


def nested(tmp_path):
    """A repository without settings, a project inside it ignoring MEM702 in
    its scripts/ folder (a pattern relative to the project), and a
    sub-project inside that one with settings of its own."""
    write(
        tmp_path,
        {
            "top.py": LEAKY,
            "proj/pyproject.toml": '[tool.memlint]\nper-file-ignores = { "scripts/*" = ["MEM702"] }\n'
            'extend-exclude = ["generated"]\n',
            "proj/train.py": LEAKY,
            "proj/scripts/legacy.py": LEAKY,
            "proj/generated/out.py": LEAKY,
            "proj/sub/pyproject.toml": '[tool.memlint]\nignore = ["MEM7"]\n',
            "proj/sub/train.py": LEAKY,
        },
    )


EVERYWHERE = [("proj/train.py", "MEM702"), ("top.py", "MEM702")]


def test_a_walk_checks_each_file_with_its_nearest_config(tmp_path, run_memlint):
    nested(tmp_path)
    assert json_check(run_memlint, tmp_path, ".") == EVERYWHERE
    # From inside the project, and naming the project's folder: the same.
    assert json_check(run_memlint, tmp_path / "proj", ".") == [("train.py", "MEM702")]
    assert json_check(run_memlint, tmp_path, "proj", "top.py") == EVERYWHERE


def test_files_named_one_by_one_get_their_own_config(tmp_path, run_memlint):
    # What pre-commit does: every changed file on one command line.
    nested(tmp_path)
    files = ["top.py", "proj/train.py", "proj/scripts/legacy.py", "proj/sub/train.py"]
    assert json_check(run_memlint, tmp_path, *files) == EVERYWHERE
    assert json_check(run_memlint, tmp_path, "proj/train.py", "proj/scripts/legacy.py") == [("proj/train.py", "MEM702")]
    # --force-exclude applies the project's own excludes, from its own folder.
    files.append("proj/generated/out.py")
    assert json_check(run_memlint, tmp_path, "--force-exclude", *files) == EVERYWHERE


def test_fix_leaves_alone_what_the_nearest_config_ignores(tmp_path, run_memlint):
    nested(tmp_path)
    proc = run_memlint("check", "--fix", "proj/train.py", "proj/scripts/legacy.py", "proj/sub/train.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "empty_cache" not in (tmp_path / "proj/train.py").read_text()
    assert (tmp_path / "proj/scripts/legacy.py").read_text() == LEAKY
    assert (tmp_path / "proj/sub/train.py").read_text() == LEAKY


def test_config_option_forces_one_file_for_all(tmp_path, run_memlint):
    nested(tmp_path)
    write(tmp_path, {"memlint.toml": "extend-exclude = []\n"})
    got = json_check(run_memlint, tmp_path, "--config", "memlint.toml", ".")
    assert got == sorted(
        [(p, "MEM702") for p in ("top.py", "proj/train.py", "proj/scripts/legacy.py", "proj/generated/out.py")]
        + [("proj/sub/train.py", "MEM702")]
    )


def test_cache_entries_follow_each_files_settings(tmp_path, run_memlint):
    nested(tmp_path)
    args = ("check", "--output-format", "json", "proj/sub/train.py", "top.py")
    assert found(run_memlint(*args), tmp_path) == [("top.py", "MEM702")]
    write(tmp_path, {"proj/sub/pyproject.toml": "[tool.memlint]\n"})
    assert found(run_memlint(*args), tmp_path) == [("proj/sub/train.py", "MEM702"), ("top.py", "MEM702")]


def test_a_broken_nested_config_is_an_error_naming_it(tmp_path, run_memlint):
    nested(tmp_path)
    write(tmp_path, {"proj/sub/pyproject.toml": '[tool.memlint]\nignore = ["NOPE1"]\n'})
    proc = run_memlint("check", "top.py", "proj/sub/train.py")
    assert proc.returncode == 2
    assert "sub/pyproject.toml" in proc.stderr and "NOPE1" in proc.stderr


def test_resolver_reads_each_folder_once(tmp_path, monkeypatch):
    nested(tmp_path)
    import memlint.find.resolver as resolver_module
    from memlint.find.resolver import ConfigResolver

    calls = []
    real = resolver_module._own_answer
    monkeypatch.setattr(
        resolver_module, "_own_answer", lambda folder, parents: calls.append(folder) or real(folder, parents)
    )
    resolver = ConfigResolver()
    for name in ("proj/train.py", "proj/scripts/legacy.py", "proj/sub/train.py", "proj/train.py"):
        resolver.config_for(tmp_path / name)
    assert len(calls) == len(set(calls))
    assert resolver.config_for(tmp_path / "proj/sub/train.py").ignore == ["MEM7"]
    assert resolver.config_for(tmp_path / "proj/scripts/legacy.py").root == (tmp_path / "proj").resolve()


# The command line wins (ruff's order): --select replaces the config's
# selection, its ignores included; --extend-select and --ignore refine it.


def test_select_on_the_command_line_overrides_the_configs_ignore(tmp_path, run_memlint):
    write(tmp_path, {"pyproject.toml": '[tool.memlint]\nignore = ["MEM501"]\n', "train.py": DEPRECATED_AMP})
    assert not run_memlint("check", "--no-cache", "train.py").stdout.count("MEM501")
    proc = run_memlint("check", "--no-cache", "--select", "MEM501", "train.py")
    assert proc.returncode == 1 and "MEM501" in proc.stdout, proc.stdout + proc.stderr


def test_extend_select_and_ignore_refine_the_configs_selection(tmp_path, run_memlint):
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.memlint]\nselect = ["MEM7", "MEM4"]\nignore = ["MEM702"]\n',
            "train.py": LEAKY,
            "block.py": FUSABLE,
            "amp.py": DEPRECATED_AMP,
        },
    )
    assert json_check(run_memlint, tmp_path, ".") == [("block.py", "MEM403")]
    assert json_check(run_memlint, tmp_path, "--extend-select", "MEM702", ".") == [
        ("block.py", "MEM403"),
        ("train.py", "MEM702"),
    ]
    assert json_check(run_memlint, tmp_path, "--ignore", "MEM4", ".") == []
    assert json_check(run_memlint, tmp_path, "--select", "MEM5", ".") == [("amp.py", "MEM501")] * 3  # import, 2 uses


def test_per_file_ignores_hold_under_a_command_line_select(tmp_path, run_memlint):
    write(
        tmp_path,
        {"pyproject.toml": '[tool.memlint]\nper-file-ignores = { "legacy/*" = ["MEM7"] }\n', "legacy/t.py": LEAKY},
    )
    assert json_check(run_memlint, tmp_path, "--select", "MEM702", ".") == []
