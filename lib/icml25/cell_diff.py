r"""CELL-Diff (Zheng & Huang, ICML 2025) at toy size: one transformer, two diffusions.

The paper's model turns a protein sequence and reference cell-morphology images into a
fluorescence image of the protein, and a protein image back into sequences. One network
denoises both modalities:

* the **image** $x_0$ (the protein channel) by continuous DDPM diffusion,
  $x_t=\sqrt{\bar\alpha_t}\,x_0+\sqrt{1-\bar\alpha_t}\,\varepsilon$ with the cosine
  (``squaredcos_cap_v2``) schedule over $T=200$ steps and the loss
  $\lVert\varepsilon-\varepsilon_\theta(x_t,c,S,t)\rVert^2$, where $c$ are the morphology
  channels and $S$ the sequence;
* the **sequence** $S$ by order-agnostic autoregressive diffusion (OA-ARDM): draw
  $t\sim U\{1..D\}$ and a random order $\sigma$, mask the $D-t+1$ positions with
  $\sigma\ge t$, and minimise the cross-entropy of the masked positions given the visible
  ones and the clean image, weighted by $1/(D-t+1)$, i.e. averaged over masked positions.

Each training sample takes one of the two objectives with probability 1/2; when its
sequence is masked, its image timestep is set to 0 (the clean image conditions the
sequence), as in the official code.

Here: 16x16 synthetic cells (:func:`make_cells`) whose protein sits in the compartment
named by a motif planted in a 24-residue sequence; a DiT-style transformer over 4x4 image
patches and residue tokens (:class:`UnifiedNet`); the schedules are ``diffusers``'
``DDPMScheduler`` / ``DDIMScheduler``. Baselines: the same network without the sequence,
the same network trained by direct regression, nearest-neighbour retrieval on sequence
k-mers. Metrics: localisation by a classifier on compartment intensities, the paper's IoU
and MSF resolution, high-frequency power, motif hits of generated sequences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial

import numpy as np

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command, train_in_worker
from icml25.common.stats import bootstrap_ci

__all__ = [
    "AMINO", "COMPARTMENTS", "MOTIFS", "Cells", "make_cells", "motif_hits",
    "UnifiedNet", "train_model", "train_models", "save_checkpoint", "load_models",
    "sample_images", "sample_sequences", "predict_regression",
    "retrieve_images", "kmer_features", "compartment_features", "LocalisationClassifier",
    "iou_paper", "iou_at_area", "radial_psd", "high_frequency_fraction",
    "msf_resolution", "oaardm_mask", "bootstrap_ci",
]

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
#: The committed models (:func:`load_models`): training seed 0 only, made by
#: :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1).
CHECKPOINT = "cell_diff/models.pt"
TRAIN_COMMAND = "python -m icml25.cell_diff train data/cell_diff/models.pt"
#: What training the committed file cost on one core, measured when it was trained (292
#: CPU-seconds for the three models of seed 0).
#: The file itself holds no timing, so that retraining gives its sha256 again.
TRAINING_CPU_MINUTES = 5
T_TRAIN = 200


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

    def subset(self, idx) -> "Cells":
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
    rng = np.random.default_rng(seed)
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


# --------------------------------------------------------------------------- metrics

def _images(x, name="images") -> np.ndarray:
    a = np.asarray(x, float)
    if a.ndim != 3 or a.shape[1] != a.shape[2]:
        raise ValueError(f"{name} must be an (n, H, H) array; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite")
    return a


def iou_paper(generated, real) -> np.ndarray:
    r"""The paper's IoU per image: $|A\cap B|/|A\cup B|$ with $A$ the generated image above
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
    $P=|\mathcal F x|^2/(HW)$, and $P$ is summed over rings of integer radius
    $r=0..H/2$ (frequency $r/H$ cycles per pixel). Returns (n, H//2 + 1).
    """
    x = np.clip(_images(images), 0, None)
    s = x.sum((1, 2), keepdims=True)
    x = np.where(s > 0, x * total / np.where(s > 0, s, 1), 0)
    h = x.shape[1]
    p = np.abs(np.fft.fftshift(np.fft.fft2(x), axes=(1, 2))) ** 2 / (h * h)
    yy, xx = np.mgrid[0:h, 0:h] - h // 2
    r = np.rint(np.hypot(yy, xx)).astype(int).ravel()
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


# --------------------------------------------------------------------------- model

def _torch():
    import torch

    return torch


def _nn():
    return _torch().nn


class _Block(_nn().Module):
    """A DiT block: attention and MLP, each modulated by the timestep (adaLN-zero)."""

    def __init__(self, d: int, heads: int):
        nn = _nn()
        super().__init__()
        self.norm1 = nn.LayerNorm(d, elementwise_affine=False)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(d, elementwise_affine=False)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.ada = nn.Linear(d, 6 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, h, c):
        s1, b1, g1, s2, b2, g2 = self.ada(c).unsqueeze(1).chunk(6, -1)
        x = self.norm1(h) * (1 + s1) + b1
        h = h + g1 * self.attn(x, x, x, need_weights=False)[0]
        return h + g2 * self.mlp(self.norm2(h) * (1 + s2) + b2)


class UnifiedNet(_nn().Module):
    r"""One bidirectional transformer over [image patch tokens ; residue tokens].

    Image tokens: 4x4 patches of [noisy protein $x_t$, nucleus, cell]; residue tokens: an
    embedding of 21 symbols (20 amino acids, mask); learned positions and a token-type
    embedding; the timestep $t$ enters every block by adaLN-zero. Heads: image tokens to
    $\varepsilon_\theta$ (or, for the regression baseline, the image itself), residue
    tokens to 20 amino-acid logits. ``use_sequence=False`` drops the residue tokens.
    """

    def __init__(self, size: int = 16, seq_len: int = 24, d: int = 64, depth: int = 4,
                 heads: int = 4, patch: int = 4, use_sequence: bool = True):
        nn, torch = _nn(), _torch()
        super().__init__()
        if size % patch:
            raise ValueError(f"size {size} is not a multiple of the patch {patch}")
        self.size, self.patch, self.d, self.seq_len = size, patch, d, seq_len
        self.use_sequence = use_sequence
        n_img = (size // patch) ** 2
        self.embed_img = nn.Conv2d(3, d, patch, stride=patch)
        self.pos_img = nn.Parameter(0.02 * torch.randn(1, n_img, d))
        self.embed_seq = nn.Embedding(MASK + 1, d)
        self.pos_seq = nn.Parameter(0.02 * torch.randn(1, seq_len, d))
        # a small convolutional residue encoder gives each token its neighbourhood (the
        # k-mers a motif is made of); it stands in for the frozen protein language model
        self.seq_conv = nn.Sequential(nn.Conv1d(d, d, 5, padding=2), nn.GELU(),
                                      nn.Conv1d(d, d, 5, padding=2))
        self.token_type = nn.Embedding(2, d)
        self.time = nn.Sequential(nn.Linear(d, d), nn.SiLU(), nn.Linear(d, d))
        self.blocks = nn.ModuleList(_Block(d, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(d, elementwise_affine=False)
        self.ada = nn.Linear(d, 2 * d)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)
        # patch features back to pixels, then a small convolution that sees the input
        # pixels too (cheap at 16x16, and it unblocks the 4x4 patch grid)
        self.out_img = nn.Linear(d, patch * patch * 8)
        self.refine = nn.Sequential(nn.Conv2d(11, 32, 3, padding=1), nn.SiLU(),
                                    nn.Conv2d(32, 1, 3, padding=1))
        self.out_seq = nn.Linear(d, len(AMINO))

    def _time_embedding(self, t):
        torch = _torch()
        half = self.d // 2
        freq = torch.exp(-np.log(1000.0) * torch.arange(half) / half)
        arg = t.float()[:, None] * freq[None]
        return self.time(torch.cat([arg.sin(), arg.cos()], 1))

    def forward(self, x_t, morphology, sequence, t):
        """``x_t`` (B,1,H,W), ``morphology`` (B,2,H,W), ``sequence`` (B,L) tokens, ``t`` (B,)
        -> (image output (B,1,H,W), residue logits (B,L,20) or None)."""
        torch = _torch()
        b = x_t.shape[0]
        h = self.embed_img(torch.cat([x_t, morphology], 1)).flatten(2).transpose(1, 2)
        parts = [h + self.pos_img + self.token_type.weight[0]]
        if self.use_sequence:
            e = self.embed_seq(sequence)
            e = e + self.seq_conv(e.transpose(1, 2)).transpose(1, 2)
            parts.append(e + self.pos_seq + self.token_type.weight[1])
        h = torch.cat(parts, 1)
        c = self._time_embedding(t)
        for block in self.blocks:
            h = block(h, c)
        shift, scale = self.ada(c).unsqueeze(1).chunk(2, -1)
        h = self.norm(h) * (1 + scale) + shift
        n_img = self.pos_img.shape[1]
        g, p = self.size // self.patch, self.patch
        img = self.out_img(h[:, :n_img]).reshape(b, g, g, p, p, 8)
        img = img.permute(0, 5, 1, 3, 2, 4).reshape(b, 8, self.size, self.size)
        img = self.refine(torch.cat([img, x_t, morphology], 1))
        logits = self.out_seq(h[:, n_img:]) if self.use_sequence else None
        return img, logits


def scheduler(kind: str = "ddpm"):
    """``diffusers``' DDPM or DDIM scheduler with the paper's settings: 200 training steps,
    the cosine (``squaredcos_cap_v2``) schedule, epsilon prediction."""
    import warnings

    with warnings.catch_warnings():  # diffusers imports tqdm.auto, which warns in Jupyter
        warnings.filterwarnings("ignore", message="IProgress not found")
        from diffusers import DDIMScheduler, DDPMScheduler

    cls = {"ddpm": DDPMScheduler, "ddim": DDIMScheduler}.get(kind)
    if cls is None:
        raise ValueError(f"kind must be 'ddpm' or 'ddim'; got {kind!r}")
    return cls(num_train_timesteps=T_TRAIN, beta_schedule="squaredcos_cap_v2",
               prediction_type="epsilon", clip_sample=True)


def oaardm_mask(batch: int, length: int, generator) -> "object":
    r"""OA-ARDM masking: per row draw $t\sim U\{1..D\}$ and a random order $\sigma$; mask
    the $D-t+1$ positions with $\sigma\ge t$. Returns a (batch, length) bool tensor with
    1 to ``length`` masked positions per row."""
    torch = _torch()
    if batch < 1 or length < 1:
        raise ValueError(f"batch and length must be positive; got {batch}, {length}")
    t = torch.randint(1, length + 1, (batch, 1), generator=generator)
    order = torch.rand(batch, length, generator=generator).argsort(1).argsort(1)
    return order >= t - 1  # sigma in 0..D-1: positions of rank >= t-1 are masked


def _to_model(cells: Cells):
    torch = _torch()
    x0 = torch.from_numpy(2 * cells.protein[:, None] - 1)
    morph = torch.from_numpy(2 * cells.morphology - 1)
    return x0, morph, torch.from_numpy(cells.sequences)


def unified_loss(model, x0, morph, seq, generator, sched, p_image: float = 0.5):
    r"""The paper's alternating objective on one batch: each sample is an image sample
    with probability ``p_image`` ($t\sim U\{0..199\}$, sequence visible, $\varepsilon$-MSE)
    or a sequence sample ($t=0$, OA-ARDM masking, cross-entropy averaged over the masked
    positions). Returns (total, image loss, sequence loss); total = image + sequence."""
    torch = _torch()
    b = x0.shape[0]
    is_img = torch.rand(b, generator=generator) < p_image
    t = torch.randint(0, T_TRAIN, (b,), generator=generator)
    t = torch.where(is_img, t, torch.zeros_like(t))
    noise = torch.randn(x0.shape, generator=generator)
    x_t = sched.add_noise(x0, noise, t)
    masked = oaardm_mask(b, seq.shape[1], generator) & ~is_img[:, None]
    seq_in = torch.where(masked, torch.full_like(seq, MASK), seq)
    eps, logits = model(x_t, morph, seq_in, t)
    zero = x0.new_zeros(())
    img_loss = ((eps - noise) ** 2).mean((1, 2, 3))[is_img].mean() if is_img.any() else zero
    if logits is None or not (~is_img).any():
        return img_loss, img_loss, zero
    ce = torch.nn.functional.cross_entropy(logits.transpose(1, 2), seq, reduction="none")
    per_seq = (ce * masked).sum(1) / masked.sum(1).clamp(min=1)
    seq_loss = per_seq[~is_img].mean()
    return img_loss + seq_loss, img_loss, seq_loss


#: What ``python -m icml25.cell_diff train`` trains, per seed.
TRAINING = dict(size=16, seq_len=24, n_train=3000, d=64, depth=3, heads=4, patch=4,
                steps=3000, batch=48, lr=2e-3, no_sequence_steps=600,
                regression_steps=600)
MODELS = ("cell_diff", "no_sequence", "regression")


def build(name: str, config: dict):
    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {name!r}")
    return UnifiedNet(config["size"], config["seq_len"], config["d"], config["depth"],
                      config["heads"], config["patch"], use_sequence=name != "no_sequence")


def train_model(name: str, cells: Cells, config: dict, *, seed=0):
    """Train one model with Adam (cosine-decayed learning rate): ``cell_diff`` on the
    alternating objective, ``no_sequence`` on the image objective without residue tokens,
    ``regression`` by MSE of its direct prediction of the image from (zeros, morphology,
    sequence) at $t=0$. Returns (model, record with the loss curves ``image`` and
    ``sequence``, one value per step)."""
    torch = _torch()
    seeds = np.random.default_rng(seed).integers(2**31, size=2)
    torch.manual_seed(int(seeds[0]))
    g = torch.Generator().manual_seed(int(seeds[1]))
    model = build(name, config)
    steps = config["steps" if name == "cell_diff" else f"{name}_steps"]
    opt = torch.optim.Adam(model.parameters(), lr=config["lr"])
    lr_at = torch.optim.lr_scheduler.OneCycleLR(opt, config["lr"], total_steps=steps,
                                                pct_start=0.05)
    x0, morph, seq = _to_model(cells)
    sched = scheduler("ddpm")
    hist = {"image": [], "sequence": []}
    for _ in range(steps):
        idx = torch.randint(0, len(cells), (config["batch"],), generator=g)
        if name == "regression":
            pred, _ = model(torch.zeros_like(x0[idx]), morph[idx], seq[idx],
                            torch.zeros(len(idx), dtype=torch.long))
            loss = img = ((pred - x0[idx]) ** 2).mean()
            sl = None
        else:
            p = 0.5 if name == "cell_diff" else 1.0
            loss, img, sl = unified_loss(model, x0[idx], morph[idx], seq[idx], g, sched, p)
        opt.zero_grad()
        loss.backward()
        opt.step()
        lr_at.step()
        hist["image"].append(float(img.detach()))
        hist["sequence"].append(float(sl.detach()) if sl is not None else float("nan"))
    record = {k: np.asarray(v, np.float32) for k, v in hist.items()}
    return model.eval(), record


def train_models(seed: int, config: dict = TRAINING) -> dict:
    """Train :data:`MODELS` for one seed on ``make_cells(n_train, seed=[seed, 1])``."""
    cells = make_cells(config["n_train"], config["size"], config["seq_len"],
                       seed=[seed, 1])
    return {name: train_model(name, cells, config, seed=[seed, 10, j])
            for j, name in enumerate(MODELS)}


def save_checkpoint(path, seeds=range(1), config: dict = TRAINING, jobs: int = 1) -> str:
    """Train every model for every seed and save them in float16 with their loss curves
    (:func:`icml25.common.checkpoints.save`: the bytes depend only on the weights, the
    config and the curves). Returns the file's sha256."""
    results = map_seeds(partial(train_in_worker, train_models),
                        [(int(s), config) for s in seeds], jobs)
    return checkpoints.save(
        path, config=dict(config),
        seeds={s: {n: checkpoints.half(w) for n, (w, _) in r.items()} for s, r in results},
        records={s: {n: rec for n, (_, rec) in r.items()} for s, r in results})


def load_models(seed: int) -> tuple[dict, dict]:
    """The committed models of training seed ``seed``: ``{name: (model, record)}`` and the
    config. The committed file holds seed 0 only (a chapter's seed draws its test cells and
    sampling noise, not the training); another seed is an error naming
    :data:`TRAIN_COMMAND`."""
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(CHECKPOINT))
    config = ckpt.config
    out = {}
    for name, weights in checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND).items():
        model = build(name, config)
        model.load_state_dict({k: v.float() for k, v in weights.items()})
        record = ckpt.records[seed][name]
        out[name] = (model.eval(), {k: np.asarray(v) for k, v in record.items()})
    return out, config


# --------------------------------------------------------------------------- sampling

def sample_images(model, cells: Cells, *, steps: int = 20, sampler: str = "ddim",
                  seed=0, sequences=None) -> np.ndarray:
    r"""Sequence -> image: denoise from $x_T\sim N(0,I)$ conditioned on the morphology and
    the sequence (``sequences`` overrides ``cells.sequences``), with ``diffusers``' DDIM
    ($\eta=0$, ``steps`` steps) or ancestral DDPM (all 200 steps). Returns (n, H, W) in
    [0, 1]."""
    torch = _torch()
    if steps < 1 or steps > T_TRAIN:
        raise ValueError(f"steps must lie in 1..{T_TRAIN}; got {steps}")
    sched = scheduler(sampler)
    sched.set_timesteps(T_TRAIN if sampler == "ddpm" else steps)
    _, morph, seq = _to_model(cells)
    if sequences is not None:
        seq = torch.from_numpy(_tokens(sequences))
    g = torch.Generator().manual_seed(int(np.random.default_rng(seed).integers(2**31)))
    x = torch.randn((len(cells), 1, model.size, model.size), generator=g)
    with torch.no_grad():
        for t in sched.timesteps:
            eps, _ = model(x, morph, seq, t.repeat(len(x)))
            x = sched.step(eps, t, x, generator=g).prev_sample
    return ((x[:, 0].clamp(-1, 1) + 1) / 2).numpy()


def predict_regression(model, cells: Cells, sequences=None) -> np.ndarray:
    """The regression baseline's image: one forward pass at $t=0$ from zeros."""
    torch = _torch()
    x0, morph, seq = _to_model(cells)
    if sequences is not None:
        seq = torch.from_numpy(_tokens(sequences))
    with torch.no_grad():
        pred, _ = model(torch.zeros_like(x0), morph, seq,
                        torch.zeros(len(x0), dtype=torch.long))
    return ((pred[:, 0].clamp(-1, 1) + 1) / 2).numpy()


def sample_sequences(model, cells: Cells, *, seed=0, temperature: float = 1.0,
                     protein=None) -> np.ndarray:
    r"""Image -> sequence (OA-ARDM sampling): start all masked and, in a random order per
    cell, sample one position at a time from the softmax of its logits / ``temperature``
    given the clean protein image (``protein`` overrides ``cells.protein``) at $t=0$, the
    morphology and the residues already drawn. Returns (n, L) tokens."""
    torch = _torch()
    if temperature <= 0:
        raise ValueError(f"temperature must be positive; got {temperature}")
    if not model.use_sequence:
        raise ValueError("the model has no sequence head")
    x0, morph, _ = _to_model(cells)
    if protein is not None:
        x0 = torch.from_numpy(2 * _images(protein, "protein").astype(np.float32)[:, None]
                              - 1)
    n, length = len(cells), model.seq_len
    g = torch.Generator().manual_seed(int(np.random.default_rng(seed).integers(2**31)))
    order = torch.rand(n, length, generator=g).argsort(1)
    seq = torch.full((n, length), MASK, dtype=torch.long)
    t0 = torch.zeros(n, dtype=torch.long)
    rows = torch.arange(n)
    with torch.no_grad():
        for i in range(length):
            _, logits = model(x0, morph, seq, t0)
            pos = order[:, i]
            probs = torch.softmax(logits[rows, pos] / temperature, -1)
            seq[rows, pos] = torch.multinomial(probs, 1, generator=g)[:, 0]
    return seq.numpy()


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.cell_diff train data/cell_diff/models.pt [--jobs 2]``."""
    train_command("python -m icml25.cell_diff", save_checkpoint, seeds=1, argv=argv)


if __name__ == "__main__":  # pragma: no cover
    main()
