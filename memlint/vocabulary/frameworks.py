"""Framework hooks whose bodies the framework already runs under a grad mode."""

from __future__ import annotations

LIGHTNING_NO_GRAD_HOOKS = frozenset(
    {
        "validation_step",
        "test_step",
        "predict_step",
        "validation_epoch_end",
        "test_epoch_end",
        "on_validation_epoch_end",
        "on_test_epoch_end",
        "on_validation_batch_end",
        "on_test_batch_end",
    }
)

# Frameworks whose models also have ``.eval()`` (and their own ``no_grad``):
# a file importing one of them and no torch evaluates no torch model.
OTHER_EVAL_FRAMEWORKS = frozenset({"paddle", "jittor", "mindspore", "oneflow", "megengine", "mxnet", "tensorflow"})
