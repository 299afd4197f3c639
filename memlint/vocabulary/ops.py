"""Torch operations by what autograd keeps: which activations save their
output, which functions and methods write in place, parameter attributes."""

from __future__ import annotations

# Module classes (torch.nn.X) whose backward needs their output.
OUTPUT_SAVING_MODULES = frozenset({"Sigmoid", "Tanh", "ReLU", "Softmax", "LogSoftmax", "Softmin"})


# ... and those that need it only when they run in place.
OUTPUT_SAVING_WHEN_INPLACE = frozenset({"ELU", "LeakyReLU", "SELU", "CELU", "RReLU"})


# Position of ``inplace`` among each module's positional parameters.
INPLACE_POSITION = {
    "ReLU": 0,
    "ReLU6": 0,
    "SELU": 0,
    "SiLU": 0,
    "Mish": 0,
    "Hardswish": 0,
    "Hardsigmoid": 0,
    "LeakyReLU": 1,
    "ELU": 1,
    "CELU": 1,
    "Dropout": 1,
    "Dropout1d": 1,
    "Dropout2d": 1,
    "Dropout3d": 1,
    "AlphaDropout": 1,
    "FeatureAlphaDropout": 1,
    "Hardtanh": 2,
    "RReLU": 2,
    "Threshold": 2,
}


# Functions (qualified) whose backward needs their output.
OUTPUT_SAVING_FUNCTIONS = frozenset(
    {
        "torch.sigmoid",
        "torch.tanh",
        "torch.exp",
        "torch.exp2",
        "torch.expm1",
        "torch.sqrt",
        "torch.rsqrt",
        "torch.reciprocal",
        "torch.relu",
        "torch.softmax",
        "torch.log_softmax",
        "torch.special.expit",
        "torch.nn.functional.sigmoid",
        "torch.nn.functional.tanh",
        "torch.nn.functional.relu",
        "torch.nn.functional.softmax",
        "torch.nn.functional.log_softmax",
        "torch.nn.functional.softmin",
        "torch.relu_",
        "torch.sigmoid_",
        "torch.tanh_",
        "torch.exp_",
        "torch.nn.functional.relu_",
        "torch.nn.functional.elu_",
        "torch.nn.functional.leaky_relu_",
        "torch.nn.functional.selu_",
        "torch.nn.functional.celu_",
        "torch.nn.functional.rrelu_",
    }
)


# ... when called with ``inplace=True``.
OUTPUT_SAVING_FUNCTIONS_WHEN_INPLACE = frozenset(
    {
        "torch.nn.functional.elu",
        "torch.nn.functional.leaky_relu",
        "torch.nn.functional.selu",
        "torch.nn.functional.celu",
        "torch.nn.functional.rrelu",
    }
)


# Tensor methods whose backward needs their output.
OUTPUT_SAVING_METHODS = frozenset(
    {
        "sigmoid",
        "tanh",
        "exp",
        "exp2",
        "expm1",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "relu",
        "softmax",
        "log_softmax",
        "sigmoid_",
        "tanh_",
        "exp_",
        "relu_",
        "sqrt_",
        "rsqrt_",
        "reciprocal_",
    }
)


# Functions that modify their first argument when ``inplace=True`` (or always, ``_`` forms).
INPLACE_FUNCTIONS = frozenset(
    {
        "torch.nn.functional.relu",
        "torch.nn.functional.relu6",
        "torch.nn.functional.elu",
        "torch.nn.functional.leaky_relu",
        "torch.nn.functional.selu",
        "torch.nn.functional.celu",
        "torch.nn.functional.rrelu",
        "torch.nn.functional.hardtanh",
        "torch.nn.functional.silu",
        "torch.nn.functional.mish",
        "torch.nn.functional.hardswish",
        "torch.nn.functional.hardsigmoid",
        "torch.nn.functional.dropout",
        "torch.nn.functional.dropout1d",
        "torch.nn.functional.dropout2d",
        "torch.nn.functional.dropout3d",
        "torch.nn.functional.alpha_dropout",
        "torch.nn.functional.threshold",
    }
)


ALWAYS_INPLACE_FUNCTIONS = frozenset(
    {
        "torch.relu_",
        "torch.sigmoid_",
        "torch.tanh_",
        "torch.exp_",
        "torch.nn.functional.relu_",
        "torch.nn.functional.elu_",
        "torch.nn.functional.leaky_relu_",
        "torch.nn.functional.hardtanh_",
        "torch.nn.functional.threshold_",
        "torch.nn.functional.rrelu_",
        "torch.nn.functional.celu_",
        "torch.nn.functional.selu_",
    }
)


# Layers whose output nothing saves, so the activation right after them may run in place.
INPUT_SAVING_LAYERS = frozenset(
    {
        "Conv1d",
        "Conv2d",
        "Conv3d",
        "ConvTranspose1d",
        "ConvTranspose2d",
        "ConvTranspose3d",
        "LazyConv1d",
        "LazyConv2d",
        "LazyConv3d",
        "Linear",
        "LazyLinear",
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "LayerNorm",
    }
)


# In-place tensor methods that do not change the data.
_NOT_DATA = frozenset({"requires_grad_", "share_memory_", "retain_grad_", "detach_", "register_hook_", "set_"})


def is_inplace_method(name: str) -> bool:
    """``add_``, ``mul_``, ``clamp_``...: a tensor method that writes its receiver."""
    return name.endswith("_") and not name.startswith("_") and not name.endswith("__") and name not in _NOT_DATA


PARAMETER_ATTRS = frozenset({"weight", "bias"})


# Context managers whose constructor changes nothing (MEM204): only entering them
# (``with``, or as a decorator) switches the mode. ``set_grad_enabled`` is
# not here: its constructor sets the mode, so as a statement it works.
CONTEXT_ONLY = {
    "torch.no_grad": "no_grad",
    "torch.enable_grad": "enable_grad",
    "torch.inference_mode": "inference_mode",
    "torch.autograd.no_grad": "no_grad",
    "torch.autograd.enable_grad": "enable_grad",
    "torch.autograd.inference_mode": "inference_mode",
    "torch.autograd.grad_mode.no_grad": "no_grad",
    "torch.autograd.grad_mode.enable_grad": "enable_grad",
    "torch.autograd.grad_mode.inference_mode": "inference_mode",
    "torch.autocast": "autocast",
    "torch.amp.autocast": "autocast",
    "torch.amp.autocast_mode.autocast": "autocast",
    "torch.cuda.amp.autocast": "autocast",
    "torch.cuda.amp.autocast_mode.autocast": "autocast",
    "torch.cpu.amp.autocast": "autocast",
    "torch.cpu.amp.autocast_mode.autocast": "autocast",
}
# Their last names, for MEM204's gate (an import alias counts as what it imports).
CONTEXT_ONLY_NAMES = frozenset(CONTEXT_ONLY.values())
