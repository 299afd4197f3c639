"""Import roots that never hold a module of the checked project."""

from __future__ import annotations

import sys

# The standard library and the libraries training code imports: a call under
# one of these heads is never of a project function or class (the summary
# keeps no such call; the gate takes none for a project class).
NEVER_PROJECT_ROOTS = frozenset(sys.stdlib_module_names) | {
    "torch",
    "torchvision",
    "torchaudio",
    "numpy",
    "scipy",
    "pandas",
    "sklearn",
    "PIL",
    "cv2",
    "tqdm",
    "matplotlib",
    "einops",
    "wandb",
    "tensorboardX",
}
