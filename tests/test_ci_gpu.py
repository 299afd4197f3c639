"""`.ci/gpu`, the GPU job: where torch sees no CUDA device it says so and
exits 3 having run nothing, so a GPU runner that lost its card cannot pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("torch")


def test_gpu_job_refuses_without_a_cuda_device(tmp_path):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHON=sys.executable)
    out = tmp_path / "gpu-out"
    done = subprocess.run([str(ROOT / ".ci" / "gpu"), str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "no CUDA device" in done.stderr
    assert not list(out.glob("*.log"))  # no step ran
