"""The synthetic cell atlas: morphology, a sequence with one planted motif, its protein.

A cell's compartment is named by a targeting motif planted in its sequence
(:data:`MOTIFS`); :func:`make_cells` draws cells, :func:`motif_hits` detects the motifs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator

__all__ = ["AMINO", "COMPARTMENTS", "MASK", "MOTIFS", "Cells", "make_cells", "motif_hits"]

#: The 20 standard amino acids; token ``k`` is ``AMINO[k]``, token 20 is the mask.
AMINO = "ACDEFGHIKLMNPQRSTVWY"
MASK = len(AMINO)
#: Where a protein sits, in label order.
COMPARTMENTS = ("nucleus", "nucleolus", "cytoplasm", "membrane")
#: The planted targeting motifs: the SV40 nuclear localisation signal; an arginine/
#: glycine-rich nucleolar signal; a leucine-rich nuclear export signal L-x3-L-x2-L-x-L
#: (``x`` drawn from polar residues); a hydrophobic transmembrane-like stretch of 8
#: residues from I, L, V, F.
MOTIFS = {"nucleus": "PKKKRKV", "nucleolus": "RRGRGRR", "cytoplasm": "LxxxLxxLxL",
          "membrane": "hhhhhhhh"}
_POLAR = "DEKNQRST"
_HYDRO = "ILVF"
_NES = re.compile("L...L..L.L")


def _tok(s: str) -> np.ndarray:
    return np.array([AMINO.index(a) for a in s])


@dataclass(frozen=True)
class Cells:
    """A batch of synthetic cells.

    ``protein``, ``nucleus``, ``cell``: (n, H, W) images in [0, 1]; ``masks``: (n, 4, H, W)
    ground-truth compartments in :data:`COMPARTMENTS` order; ``labels``: (n,) the
    compartment of each protein; ``sequences``: (n, L) amino-acid tokens.
    """

    protein: np.ndarray
    nucleus: np.ndarray
    cell: np.ndarray
    masks: np.ndarray
    labels: np.ndarray
    sequences: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def morphology(self) -> np.ndarray:
        """The reference channels (n, 2, H, W): nucleus and cell."""
        return np.stack([self.nucleus, self.cell], 1)

    def subset(self, idx) -> Cells:
        return Cells(*(getattr(self, f)[idx] for f in
                       ("protein", "nucleus", "cell", "masks", "labels", "sequences")))


def _ellipse(yy, xx, cy, cx, ry, rx, angle):
    """Normalised elliptic radius of every pixel (<= 1 inside), batched over cells."""
    c, s = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None]
    dy, dx = yy - cy[:, None, None], xx - cx[:, None, None]
    u, v = c * dx + s * dy, -s * dx + c * dy
    return np.sqrt((u / rx[:, None, None]) ** 2 + (v / ry[:, None, None]) ** 2)


def make_cells(n: int, size: int = 16, seq_len: int = 24, *, seed=0) -> Cells:
    r"""Draw ``n`` cells: morphology, a sequence with one planted motif, its protein image.

    A cell is an ellipse (radii 5-7 pixels at ``size=16``), its nucleus an inner ellipse,
    a nucleolus a small disk in the nucleus (a dim hole in the nucleus channel, as in DAPI
    images), the membrane the cell's outer rim. The label $y$ is uniform over
    :data:`COMPARTMENTS`; the sequence is uniform background with the motif of $y$ planted
    at a random position; the protein image is $a\,m_y\odot\tau$ blurred by a Gaussian
    point-spread function ($\sigma=0.6$ px), with brightness $a\sim U(0.6,1)$ and a
    granular texture $\tau$ that no sequence determines (what a regression can only
    average). Deterministic given ``seed``.
    """
    from scipy.ndimage import gaussian_filter

    if n < 1 or size < 12 or seq_len < 12:
        raise ValueError(f"need n >= 1, size >= 12 and seq_len >= 12; got {n}, {size}, "
                         f"{seq_len}")
    rng = as_generator(seed)
    k = size / 16
    yy, xx = np.mgrid[0:size, 0:size].astype(float)
    centre = (size - 1) / 2 + rng.uniform(-1, 1, (2, n)) * k
    cell_r = _ellipse(yy, xx, *centre, *rng.uniform(5, 7, (2, n)) * k,
                      rng.uniform(0, np.pi, n))
    nc = centre + rng.uniform(-1.2, 1.2, (2, n)) * k
    nuc_r = _ellipse(yy, xx, *nc, *rng.uniform(2.4, 3.3, (2, n)) * k,
                     rng.uniform(0, np.pi, n))
    oc = nc + rng.uniform(-0.8, 0.8, (2, n)) * k
    rad = rng.uniform(1.0, 1.3, n) * k
    nucleolus = _ellipse(yy, xx, *oc, rad, rad, np.zeros(n)) <= 1
    cell = cell_r <= 1
    nucleus = (nuc_r <= 1) | nucleolus
    rim = cell & (cell_r > 0.78)
    masks = np.stack([nucleus, nucleolus, cell & ~nucleus, rim], 1)
    labels = rng.integers(0, 4, n)
    # sequences: uniform background, one motif at a random position
    seqs = rng.integers(0, 20, (n, seq_len))
    for i, y in enumerate(labels):
        motif = MOTIFS[COMPARTMENTS[y]]
        if y == 2:
            motif = "".join(rng.choice(list(_POLAR)) if a == "x" else a for a in motif)
        elif y == 3:
            motif = "".join(rng.choice(list(_HYDRO), len(motif)))
        start = rng.integers(0, seq_len - len(motif) + 1)
        seqs[i, start:start + len(motif)] = _tok(motif)
    texture = 1 + 0.5 * gaussian_filter(rng.standard_normal((n, size, size)),
                                        (0, 0.7, 0.7)) / 0.4
    bright = rng.uniform(0.6, 1.0, n)[:, None, None]
    chosen = masks[np.arange(n), labels]
    protein = gaussian_filter(bright * chosen * np.clip(texture, 0, None), (0, 0.6, 0.6))
    nucleus_img = gaussian_filter(nucleus - 0.55 * nucleolus, (0, 0.6, 0.6))
    cell_img = gaussian_filter(0.8 * cell.astype(float), (0, 0.6, 0.6))
    return Cells(np.clip(protein, 0, 1).astype(np.float32),
                 np.clip(nucleus_img, 0, 1).astype(np.float32),
                 np.clip(cell_img, 0, 1).astype(np.float32), masks, labels,
                 seqs.astype(np.int64))


def _tokens(sequences) -> np.ndarray:
    s = np.asarray(sequences)
    if s.ndim != 2 or not np.issubdtype(s.dtype, np.integer):
        raise ValueError(f"sequences must be an (n, L) integer array; got {s.dtype} "
                         f"{s.shape}")
    if s.min(initial=0) < 0 or s.max(initial=0) > MASK:
        raise ValueError("sequence tokens must lie in 0..20 (20 amino acids, 20 = mask)")
    return s


def motif_hits(sequences) -> np.ndarray:
    """(n, 4) booleans: does each sequence carry each compartment's motif?

    Nucleus / nucleolus: a 7-residue window with at most one mismatch to the motif;
    cytoplasm: the export pattern ``L...L..L.L``; membrane: a run of at least 7 residues
    from I, L, V, F. Mask tokens never match.
    """
    s = _tokens(sequences)
    out = np.zeros((len(s), 4), bool)
    for j, name in enumerate(("nucleus", "nucleolus")):
        m = _tok(MOTIFS[name])
        win = np.lib.stride_tricks.sliding_window_view(s, len(m), axis=1)
        out[:, j] = ((win == m).sum(-1) >= len(m) - 1).any(1)
    text = ["".join(AMINO[t] if t < MASK else "-" for t in row) for row in s]
    out[:, 2] = [bool(_NES.search(t)) for t in text]
    hyd = np.isin(s, _tok(_HYDRO))
    run = np.zeros(len(s), int)
    best = np.zeros(len(s), int)
    for col in hyd.T:
        run = np.where(col, run + 1, 0)
        best = np.maximum(best, run)
    out[:, 3] = best >= 7
    return out

