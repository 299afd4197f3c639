"""memlint verify: run a script and its fixed twin, measure memory, compare results.

In the memlint process (no torch needed):
  cli.py      argparse and orchestration (``memlint verify``)
  twin.py     the fixed twin, made by the fix engine or given with --fixed
  runner.py   one fresh process per run: environment, timeout, progress line
  outcome.py  both runs summarised and the verdict decided
  verdict.py  growth per step (least squares), peaks, noise floors
  results.py  result fingerprints (recorded in the child) and their comparison
  report.py   the before/after table and the JSON schema
  plot.py     --plot (matplotlib)
  pytest_plugin.py  the pytest11 plugin for GPU CI

In the measured process (imports torch):
  bootstrap.py  settles threads, seeds and determinism, runs the script with runpy
  probe.py      hooks at step boundaries: sample, record, stop after --steps
  meters.py     tensor bytes, autograd graph nodes, host heap
  simulate.py   --simulate: FakeTensorMode on a fake CPU device
"""
