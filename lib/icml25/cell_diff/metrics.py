"""The metrics: localisation, the paper's IoU and MSF resolution, sharpness, retrieval.

:func:`iou_paper` and :func:`msf_resolution` follow the official evaluation code;
:func:`iou_at_area` scores an image against the true compartment; :func:`high_frequency_fraction`
measures sharpness where MSF cannot (16x16 images); :class:`LocalisationClassifier` names the
compartment an image shows; :func:`retrieve_images` is the nearest-neighbour baseline.
"""

from __future__ import annotations

import numpy as np

from .cells import Cells, _tokens

__all__ = [
    "LocalisationClassifier",
    "compartment_features",
    "high_frequency_fraction",
    "iou_at_area",
    "iou_paper",
    "kmer_features",
    "msf_resolution",
    "radial_psd",
    "retrieve_images",
]


def _images(x, name="images") -> np.ndarray:
    a = np.asarray(x, float)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise ValueError(f"{name} must be an (n, H, H) array; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite")
    return a


def iou_paper(generated, real) -> np.ndarray:
    r"""The paper's IoU per image: :math:`|A\cap B|/|A\cup B|` with $A$ the generated image above
    its 0.5 quantile and $B$ the real image above its median."""
    g, r = _images(generated, "generated"), _images(real, "real")
    if g.shape != r.shape:
        raise ValueError(f"generated and real differ in shape: {g.shape}, {r.shape}")
    a = g > np.quantile(g, 0.5, axis=(1, 2), keepdims=True)
    b = r > np.median(r, axis=(1, 2), keepdims=True)
    union = (a | b).sum((1, 2))
    return np.where(union > 0, (a & b).sum((1, 2)) / np.maximum(union, 1), 1.0)


def iou_at_area(images, masks) -> np.ndarray:
    """IoU of each image's ``|M|`` brightest pixels with the compartment mask ``M``."""
    x = _images(images)
    m = np.asarray(masks, bool)
    if m.shape != x.shape:
        raise ValueError(f"masks must have the images' shape {x.shape}; got {m.shape}")
    flat = x.reshape(len(x), -1)
    area = m.reshape(len(m), -1).sum(1)
    rank = np.argsort(np.argsort(-flat, axis=1, kind="stable"), axis=1)
    top = rank < area[:, None]
    inter = (top & m.reshape(len(m), -1)).sum(1)
    return inter / np.maximum(2 * area - inter, 1)


def radial_psd(images, total: float = 1000.0) -> np.ndarray:
    r"""Radially summed power spectrum of each image, as the paper's MSF metric uses it.

    Negative pixels are clipped to 0, each image is scaled to total intensity ``total``,
    $P=|\mathcal F x|^2/(HW)$, and $P$ is summed over the rings $r \le \rho < r+1$,
    $r=0..H/2$, of the frequency radius $\rho$ in units of $1/H$ cycles per pixel (the
    authors' rings, diplib's ``RadialSum``, which bins by the floor of the radius). Returns
    (n, H//2 + 1).
    """
    x = np.clip(_images(images), 0, None)
    s = x.sum((1, 2), keepdims=True)
    x = np.where(s > 0, x * total / np.where(s > 0, s, 1), 0)
    h = x.shape[1]
    p = np.abs(np.fft.fftshift(np.fft.fft2(x), axes=(1, 2))) ** 2 / (h * h)
    yy, xx = np.mgrid[0:h, 0:h] - h // 2
    r = np.floor(np.hypot(yy, xx)).astype(int).ravel()
    keep = r <= h // 2
    out = np.zeros((len(x), h // 2 + 1))
    np.add.at(out.T, r[keep], p.reshape(len(x), -1)[:, keep].T)
    return out


def msf_resolution(images, pixel_nm: float, threshold: float) -> np.ndarray:
    r"""The paper's MSF resolution: $1/f$ at the first radius $r$ whose radial power falls
    below ``threshold``, $f=r/(H\cdot\mathrm{pixel})$; lower is sharper. An image whose
    power never falls below the threshold gets the Nyquist limit, 2 pixels."""
    if pixel_nm <= 0 or threshold <= 0:
        raise ValueError(f"pixel_nm and threshold must be positive; got {pixel_nm}, "
                         f"{threshold}")
    p = radial_psd(images)
    h = 2 * (p.shape[1] - 1)
    below = p[:, 1:] < threshold
    first = np.where(below.any(1), below.argmax(1) + 1, p.shape[1] - 1)
    return h * pixel_nm / first


def high_frequency_fraction(images, cutoff: float = 0.5) -> np.ndarray:
    """Share of each image's non-DC power at radii above ``cutoff`` times Nyquist."""
    if not 0 < cutoff < 1:
        raise ValueError(f"cutoff must lie in (0, 1); got {cutoff}")
    p = radial_psd(images)[:, 1:]
    r = np.arange(1, p.shape[1] + 1)
    ac = p.sum(1)
    return np.where(ac > 0, p[:, r > cutoff * p.shape[1]].sum(1) / np.where(ac > 0, ac, 1),
                    0.0)


def compartment_features(images, cells: Cells) -> np.ndarray:
    """Mean intensity of each image in the nucleolus, the rest of the nucleus, the inner
    cytoplasm, the membrane rim and outside the cell (of ``cells``' geometry), divided by
    the image's mean over the cell: (n, 5) features that a classifier reads localisation
    from."""
    x = _images(images)
    if len(x) != len(cells) or x.shape[1:] != cells.protein.shape[1:]:
        raise ValueError("images must match the cells in number and size")
    nuc, nol, cyt, rim = (cells.masks[:, j] for j in range(4))
    cellm = nuc | cyt
    regions = [nol, nuc & ~nol, cyt & ~rim, rim, ~cellm]
    x = np.clip(x, 0, None)
    ref = (x * cellm).sum((1, 2)) / cellm.sum((1, 2)) + 1e-6
    return np.stack([(x * m).sum((1, 2)) / np.maximum(m.sum((1, 2)), 1) / ref
                     for m in regions], 1)


class LocalisationClassifier:
    """Logistic regression on :func:`compartment_features`, fitted on real images; it
    names the compartment a (generated) image shows."""

    def __init__(self, cells: Cells):
        from sklearn.linear_model import LogisticRegression

        self.model = LogisticRegression(C=10.0, max_iter=2000)
        self.model.fit(compartment_features(cells.protein, cells), cells.labels)

    def predict(self, images, cells: Cells) -> np.ndarray:
        return self.model.predict(compartment_features(images, cells))


def kmer_features(sequences, k: int = 3):
    """Sparse (n, 20**k) counts of the k-mers of each sequence."""
    from scipy.sparse import csr_matrix

    s = _tokens(sequences)
    if not 1 <= k <= min(4, s.shape[1]):
        raise ValueError(f"k must lie in 1..4 and not exceed the length; got {k}")
    win = np.lib.stride_tricks.sliding_window_view(s, k, axis=1)
    code = (win * (20 ** np.arange(k)[::-1])).sum(-1)
    rows = np.repeat(np.arange(len(s)), code.shape[1])
    return csr_matrix((np.ones(code.size), (rows, code.ravel())),
                      shape=(len(s), 20 ** k))


def retrieve_images(train: Cells, query_sequences, k: int = 3) -> np.ndarray:
    """Nearest-neighbour baseline: the protein image of the training cell whose sequence
    is closest in cosine distance of k-mer counts (scikit-learn ``NearestNeighbors``)."""
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=1, metric="cosine", algorithm="brute")
    nn.fit(kmer_features(train.sequences, k))
    idx = nn.kneighbors(kmer_features(query_sequences, k), return_distance=False)[:, 0]
    return train.protein[idx]

