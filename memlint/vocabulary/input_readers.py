"""Functions that read one input from a file: an image, a sound, an array.

A loop that calls one of them on its own variable and runs a model on what
it read is a data loop over files (IMDN's ``for imname in filelist:
cv2.imread(imname)``), as a loop over a loader is over batches. ``torch.load``
is not one: a loop over checkpoint files loads weights."""

from __future__ import annotations

INPUT_READERS = frozenset(
    {
        "cv2.imread",
        "PIL.Image.open",
        "imageio.imread",
        "imageio.v2.imread",
        "imageio.v3.imread",
        "skimage.io.imread",
        "scipy.misc.imread",
        "scipy.ndimage.imread",
        "matplotlib.pyplot.imread",
        "torchvision.io.read_image",
        "soundfile.read",
        "librosa.load",
        "torchaudio.load",
        "numpy.load",
        "nibabel.load",
        "SimpleITK.ReadImage",
    }
)

# The gate's spelling of each reader: its last name called, its package's
# first name anywhere in the file (imported under whatever alias).
READER_SPELLINGS = frozenset((name.rsplit(".", 1)[-1], name.split(".", 1)[0]) for name in INPUT_READERS)


def may_read_inputs(called: set[str], idents: set[str]) -> bool:
    """The file may call an input reader (the gate's necessary condition)."""
    return any(last in called and root in idents for last, root in READER_SPELLINGS)
