"""--simulate's model of a CUDA run (in-process, fake tensors), the CPU
tracker beside the CUDA counters, and the graph meter at the script's end."""

from __future__ import annotations

import pytest


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def test_cublas_workspace_follows_the_config():
    from memlint.verify.simulate import cublas_workspace_bytes

    assert cublas_workspace_bytes(":4096:8") == 32 * 2**20
    assert cublas_workspace_bytes(":4096:2:16:8") == 8 * 2**20 + 128 * 2**10
    assert cublas_workspace_bytes("") == 32 * 2**20  # torch's default


def _adam_peak(torch, script_device):
    from torch import nn

    from memlint.verify.meters import StorageBytesMode
    from memlint.verify.simulate import simulation

    here = __file__
    tracker = StorageBytesMode()
    with simulation(torch, tracker, own=lambda f: f == here), tracker:
        device = "cuda" if script_device == "cuda" and torch.cuda.is_available() else "cpu"
        model = nn.Sequential(*[nn.Linear(1000, 1000) for _ in range(4)]).to(device)
        opt = torch.optim.Adam(model.parameters())
        model(torch.randn(8, 1000, device=device)).sum().backward()
        tracker.reset_peak()
        opt.step()
        return tracker.peak, tracker.live


def test_a_simulated_cuda_run_takes_the_foreach_path_rounds_blocks_and_adds_the_workspace(torch, monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    params = 4 * (1000 * 1000 + 1000) * 4
    cpu_peak, _ = _adam_peak(torch, "cpu")
    cuda_peak, cuda_live = _adam_peak(torch, "cuda")
    # foreach: one temporary the size of all parameters at once, where the
    # per-parameter loop holds one parameter's.
    assert cuda_peak - cpu_peak > 0.4 * params + 32 * 2**20


def test_a_simulated_cuda_tensor_takes_whole_allocator_blocks(torch):
    from memlint.verify.meters import StorageBytesMode
    from memlint.verify.simulate import simulation

    tracker = StorageBytesMode()
    with simulation(torch, tracker, own=lambda f: f == __file__), tracker:
        small = torch.ones(10)  # before the script names CUDA: as on the CPU
        assert tracker.live == 40
        on_gpu = torch.ones(10, device="cuda")
        assert tracker.live == 40 + 512
        del small, on_gpu


def test_library_code_hears_the_truth_about_cuda(torch):
    from memlint.verify.simulate import simulation

    truth = torch.cuda.is_available()
    library = compile("torch.cuda.is_available()", "/site-packages/lib.py", "eval")
    with simulation(torch, None, own=lambda f: f == __file__):
        assert torch.cuda.is_available() is True  # the script's own call
        assert eval(library, {"torch": torch}) is truth
    assert torch.cuda.is_available() is truth


def test_cpu_tracker_counts_only_cpu_storages(torch):
    from memlint.verify.meters import StorageBytesMode

    mode = StorageBytesMode(device_type="cpu")
    with mode:
        a = torch.ones(1000)
        b = torch.ones(10, device="meta")
        assert mode.live == 4000
        del a, b
    assert mode.live == 0


def test_graph_meter_reads_the_script_globals_at_the_end(torch):
    from memlint.verify.meters import GraphNodes

    meter = GraphNodes(lambda f: False)  # no frame of the script is left
    w = torch.ones(3, requires_grad=True)
    kept = [(w * 2).sum() for _ in range(4)]
    assert meter.sample() == 0
    assert meter.sample({"predictions": kept}) >= 8
