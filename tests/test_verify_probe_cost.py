"""What the probe does per step, made cheap without seeing less: result
fingerprints that still see one flipped bit, a forward's outputs recorded
without restarting the allocator meter, and none of the probe's own tensors
counted by it."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from memlint.verify.meters import AllocatorBytes, StorageBytesMode  # noqa: E402
from memlint.verify.probe import Probe  # noqa: E402
from memlint.verify.results import WORD_SUM_BYTES, Scratch, fingerprint, fingerprint_in_place  # noqa: E402


@pytest.fixture
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _flip(t, index):
    u = t.clone()
    u.view(torch.int32).view(-1)[index] ^= 1
    return u


@pytest.mark.parametrize("bit", [0, 1 << 30])
def test_a_large_tensors_digest_sees_one_flipped_bit_anywhere(bit):
    t = torch.randn(64, 1000)  # 256 KB: digested through its word sum
    assert t.numel() * 4 >= WORD_SUM_BYTES
    for index in (0, 12_345, t.numel() - 1):
        u = t.clone()
        u.view(torch.int32).view(-1)[index] ^= bit or 1
        assert fingerprint([t], True)["digest"] != fingerprint([u], True)["digest"]
    assert fingerprint([t], True) == fingerprint([t.clone()], True)


def test_digests_see_the_tail_bytes_an_odd_offset_and_the_shape():
    t = torch.randn(1025)  # 4100 bytes: 512 words and a 4-byte tail
    assert fingerprint([t], True)["digest"] != fingerprint([_flip(t, 1024)], True)["digest"]
    base = torch.randn(5001)
    odd = base[1:]  # starts 4 bytes into its storage: no 8-byte word view
    assert fingerprint([odd], True)["digest"] != fingerprint([_flip(odd.clone(), 7)], True)["digest"]
    assert fingerprint([odd], True) == fingerprint([odd.clone()], True)
    assert fingerprint([t.view(25, 41)], True)["digest"] != fingerprint([t], True)["digest"]


def test_in_place_and_copying_fingerprints_agree():
    tensors = [torch.randn(300, 20), torch.randn(3, dtype=torch.float64)]
    scratch = Scratch()
    assert fingerprint_in_place(tensors, True, scratch) == fingerprint(tensors, True)
    # The sums are the tensors' own sums, taken in their own type.
    assert fingerprint(tensors, False)["sums"] == [float(t.sum()) for t in tensors]
    # A tensor that needs a copy first is left to the caller, who pauses.
    for other in (torch.randn(4, 6)[:, 1:], torch.randn(8).half(), torch.arange(8)):
        assert fingerprint_in_place([tensors[0], other], True, scratch) is None
    assert fingerprint_in_place([torch.randn(5001)[1:]], True, scratch) is None  # off the word boundary
    assert fingerprint([torch.randn(4, 6)[:, 1:]], True)["digest"] is not None


@pytest.fixture
def allocator_meter():
    if not AllocatorBytes.available():
        pytest.skip("this torch has no profiler memory events")
    return AllocatorBytes()


def test_an_in_place_fingerprint_allocates_nothing(one_thread, allocator_meter):
    tensors = [torch.randn(512, 1024), torch.randn(100_001), torch.randn(7, dtype=torch.float64)]
    scratch = Scratch()
    with allocator_meter, torch.no_grad():
        allocator_meter.reset_peak()
        live = allocator_meter.sample()[0]
        assert fingerprint_in_place(tensors, True, scratch) is not None
        assert allocator_meter.sample()[:2] == (live, live)


def _train(steps):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return model, x


def _probe(meter):
    return Probe(steps=10**9, tensor_meter=meter, graph_meter=None, heap_meter=None, digest=True)


def test_a_training_step_restarts_the_allocator_meter_once(one_thread, allocator_meter, monkeypatch):
    starts = []
    start = AllocatorBytes._start
    monkeypatch.setattr(AllocatorBytes, "_start", lambda self: (starts.append(1), start(self))[1])
    probe = _probe(allocator_meter)
    probe.install()
    try:
        with allocator_meter:
            starts.clear()
            _train(5)
    finally:
        probe.uninstall()
    # One pause per optimizer step (and the first forward's, a step boundary
    # until an optimizer has stepped); a forward's outputs need none.
    assert len(starts) == 1 + 5
    assert len(probe.outputs) == 5 and len(probe.params) == 5
    # Recorded as the paused path records them (under the storage tracker).
    reference = _probe(StorageBytesMode())
    assert reference._unpaused_outputs is False  # a dispatch mode sees every op: it pauses
    reference.install()
    try:
        with reference.tensor:
            _train(5)
    finally:
        reference.uninstall()
    assert reference.outputs == probe.outputs and reference.params == probe.params


def test_the_probes_own_work_is_not_in_the_allocator_meters_peak(one_thread, allocator_meter):
    probe = _probe(allocator_meter)
    probe.install()
    try:
        with allocator_meter:
            _train(6)
    finally:
        probe.uninstall()
    live, peaks = probe.samples["tensor_live"], probe.samples["tensor_peak"]
    assert len(set(live[1:])) == 1 and len(set(peaks[1:])) == 1  # steady: nothing of ours adds up
    # The step's peak is the script's own: the same as with no result recorded.
    quiet = AllocatorBytes()
    bare = Probe(steps=10**9, tensor_meter=quiet, graph_meter=None, heap_meter=None, record_results=False)
    bare.install()
    try:
        with quiet:
            _train(6)
    finally:
        bare.uninstall()
    assert bare.samples["tensor_peak"][1:] == peaks[1:]


@pytest.mark.parametrize(
    ("accelerator", "visible", "only_cpu"),
    [(None, None, True), ("cuda", "", True), ("cuda", None, False), ("cuda", "0", False), ("mps", "", False)],
)
def test_the_allocator_meter_reads_event_devices_only_where_another_can_allocate(
    monkeypatch, accelerator, visible, only_cpu
):
    from memlint.verify import meters

    device = torch.device(accelerator) if accelerator else None
    monkeypatch.setattr(torch._C, "_accelerator_getAccelerator", lambda: device, raising=False)
    if visible is None:
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    else:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    assert meters._only_the_cpu_allocates() is only_cpu
    if AllocatorBytes.available():
        assert (AllocatorBytes()._cpu is None) is only_cpu


def test_the_allocator_meter_starts_an_activity_this_torch_does_not_trace(allocator_meter):
    from torch._C import _profiler

    untraced = allocator_meter._untraced
    if untraced is None:
        pytest.skip("this torch traces every activity it knows")
    assert untraced not in torch._C._autograd._supported_activities()
    with allocator_meter:
        assert allocator_meter._activities == {untraced}
        a = torch.zeros(1000)
        assert allocator_meter.sample()[:2] == (4000, 4000)
        held = [torch.ones(250) for _ in range(4)]
        assert allocator_meter.sample()[0] == 8000
        del a, held
        assert allocator_meter.sample()[0] == 0
    # The CPU activity, where the untraced one would report no block.
    fallback = AllocatorBytes()
    fallback._reports_blocks_with = lambda activities: False
    with fallback:
        assert fallback._activities == {_profiler.ProfilerActivity.CPU}
        b = torch.zeros(1000)
        assert fallback.sample()[:2] == (4000, 4000)
        del b
    assert not torch._C._autograd._profiler_enabled()


def test_outputs_of_inference_mode_and_grad_forwards_are_recorded_unpaused(one_thread, allocator_meter):
    probe = _probe(allocator_meter)
    probe.install()
    try:
        with allocator_meter:
            model, x = _train(2)
            with torch.inference_mode():
                expected = [fingerprint([model(x)], True)]
            with torch.no_grad():
                expected.append(fingerprint([model(x)], True))
            expected.append(fingerprint([model(x.requires_grad_())], True))
    finally:
        probe.uninstall()
    # After the first step, recorded unpaused: as fingerprint() records them.
    assert len(probe.outputs) == 2 + 3 and probe.outputs[-3:] == expected
