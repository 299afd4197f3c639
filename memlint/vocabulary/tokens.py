"""Words in names that say what a loop or function is about (``val_loader``,
``evaluate``): the gate and the loop analysis read the same lists, so the
gate widens whenever the analysis does."""

from __future__ import annotations

import re

# The pre-filter of rules about training code: real training scripts often
# import model, data and helpers from local modules and never say ``torch``,
# but they call the training verbs (issue 14, item 7).
TRAINING_CODE_TOKENS = ("torch", "backward", "zero_grad", ".step(")


def name_tokens(name: str) -> set[str]:
    """``validateEpoch`` -> {"validate", "epoch"}; ``val_loader`` -> {"val", "loader"};
    ``testloader`` -> {"testloader", "test", "loader"}."""
    found = _TOKENS.get(name)
    if found is None:
        if len(_TOKENS) > 8192:  # a long-lived process (the server) sees every name it ever linted
            _TOKENS.clear()
        found = _TOKENS[name] = frozenset(_name_tokens(name))
    return set(found)  # callers may add to their copy


# name -> its tokens: the analyses ask about the same few hundred names many times per file.
_TOKENS: dict[str, frozenset[str]] = {}


# ``testloader``, ``valset``: data names written as one word (the PyTorch
# CIFAR tutorial's spelling) also yield their two halves.
_COMPOUND_DATA = re.compile(r"(train|val|valid|test|eval|dev)(loader|loaders|dataloader|dl|ds|set|data)")


def _name_tokens(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    tokens = {t for t in re.split(r"[_\W\d]+", spaced.lower()) if t}
    for t in list(tokens):
        m = _COMPOUND_DATA.fullmatch(t)
        if m:
            tokens.update(m.groups())
    return tokens


# A GAN's sampler (``sample_images``, ``save_samples``): MEM202 reads one
# like an evaluation function.
SAMPLE_FUNCTION_TOKENS = frozenset({"sample", "samples", "sampling"})

EVAL_FUNCTION_TOKENS = frozenset(
    {
        "val",
        "valid",
        "validate",
        "validation",
        "validating",
        "eval",
        "evaluate",
        "evaluation",
        "evaluating",
        "test",
        "testing",
        "predict",
        "prediction",
        "predictions",
        "infer",
        "inference",
        "inferencing",
        "score",
        "scoring",
        "generate",
        "generation",
    }
)


EVAL_DATA_TOKENS = frozenset({"val", "valid", "validation", "test", "testing", "eval", "dev", "holdout"})


DATA_TOKENS = (
    frozenset(
        {
            "loader",
            "loaders",
            "dataloader",
            "dataloaders",
            "dl",
            "batch",
            "batches",
            "dataset",
            "ds",
            "epoch",
            "epochs",
            "step",
            "steps",
            "iters",
            "iter",
            "iterations",
            "iteration",
            "episode",
            "episodes",
            "train",
            "training",
            "val",
            "valid",
            "validation",
            "test",
            "eval",
            "data",
            "updates",
            "niter",
            "minibatch",
            "minibatches",
        }
    )
    | EVAL_DATA_TOKENS
)


# Iterables of single inputs (``for img in val_images``): a loop over them
# runs once per sample, not once per batch.
SAMPLE_TOKENS = frozenset({"images", "imgs", "samples", "frames"})
# The same named by one element and a collection (``for name in image_list``,
# ``img_paths``, ``frame_files``); ``image`` alone may be one input's rows.
_SAMPLE_ITEMS = frozenset({"image", "img", "sample", "frame"})
_COLLECTIONS = frozenset({"list", "lst", "paths", "files", "names", "ids"})


def names_samples(tokens: set[str] | frozenset[str]) -> bool:
    """An iterable named by these tokens holds single inputs, not batches."""
    return bool(tokens & SAMPLE_TOKENS) or bool(tokens & _SAMPLE_ITEMS and tokens & _COLLECTIONS)


# A callable named for what needs gradients (``saliency(model, x)``,
# ``gradcam(...)``): the loop analysis reads its call as a need for grad
# (MEM201's trap), unless the project shows it only computes on arrays
# (project/array_helpers.py).
GRAD_NAME_TOKENS = frozenset(
    {
        "saliency",
        "gradcam",
        "cam",
        "grad",
        "grads",
        "gradient",
        "gradients",
        "adversarial",
        "attack",
        "fgsm",
        "pgd",
        "integrated",
        "attribution",
        "attributions",
        "explain",
        "tta",
        "adapt",
        "smoothgrad",
    }
)
