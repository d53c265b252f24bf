"""The TopK sparse autoencoder (Gao et al., 2024): model, metrics and training."""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from icml25.common.optim import Adam, sqrt
from icml25.common.streams import stream_int
from icml25.common.validation import check_int

_CODES_REMEMBERED = 6  # encodings TopKSAE.codes keeps (a few MB each)


class TopKSAE(nn.Module):
    r"""A TopK sparse autoencoder (Gao et al., 2024, "Scaling and evaluating sparse autoencoders").

    .. math::
        z = \operatorname{TopK}_k\big(\operatorname{ReLU}(W_\text{enc}(\tilde x - b_\text{dec})
            + b_\text{enc})\big),\qquad \hat{\tilde x} = W_\text{dec}^\top z + b_\text{dec},
        \qquad \tilde x = (x - \mu)/s

    ``d`` is the input width :math:`d`, ``n_latents`` the dictionary size :math:`m` (rows of
    :math:`W_\text{dec}\in\mathbb R^{m\times d}`, kept at unit norm), ``k`` the number :math:`k`
    of active latents per input. :math:`\mu` and the scalar :math:`s` (root mean squared norm per
    dimension) standardise the inputs; they are set by :func:`train_sae`.
    """

    def __init__(self, d: int, n_latents: int, k: int, seed: int = 0):
        super().__init__()
        if not 1 <= k <= n_latents:
            raise ValueError(f"k must lie in 1..n_latents={n_latents}, got {k}")
        if d < 1:
            raise ValueError(f"d must be positive, got {d}")
        self.k = int(k)
        g = torch.Generator().manual_seed(seed)
        w = torch.randn(n_latents, d, generator=g)
        w /= w.norm(dim=1, keepdim=True)
        self.W_dec = nn.Parameter(w)
        self.W_enc = nn.Parameter(w.T.clone())  # tied initialisation, as Gao et al.
        self.b_enc = nn.Parameter(torch.zeros(n_latents))
        self.b_dec = nn.Parameter(torch.zeros(d))
        self.register_buffer("mu", torch.zeros(d))
        self.register_buffer("s", torch.ones(()))

    @property
    def n_latents(self) -> int:
        return self.W_dec.shape[0]

    def preacts(self, x: torch.Tensor) -> torch.Tensor:
        """Pre-activations :math:`\\operatorname{ReLU}(W_\\text{enc}(\\tilde x - b_\\text{dec})
        + b_\\text{enc})`."""
        return torch.relu(((x - self.mu) / self.s - self.b_dec) @ self.W_enc + self.b_enc)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Codes :math:`z`: the :math:`k` largest pre-activations kept, the rest set to 0."""
        pre = self.preacts(x)
        top = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter_(-1, top.indices, top.values)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Reconstruction in the input's units:
        :math:`s\\,(W_\\text{dec}^\\top z + b_\\text{dec}) + \\mu`."""
        return (z @ self.W_dec + self.b_dec) * self.s + self.mu

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.decode(self.encode(x))

    def codes(self, X) -> np.ndarray:
        """:meth:`encode` on a numpy array, as float32 numpy (for scikit-learn).

        The last few results are remembered by the bytes of ``X`` and the versions of the
        weights: a probe's fit, transform and scoring encode the same rows several times (nine
        encodings, four distinct, per evaluation). A remembered result is the one a fresh
        encoding gives, bit for bit; any change to the weights forgets it. The array returned
        is read-only.
        """
        X = np.ascontiguousarray(X, dtype=np.float32)
        weights = (self.W_enc, self.b_enc, self.b_dec, self.mu, self.s)
        key = (X.shape, hashlib.blake2b(X, digest_size=16).digest(),
               tuple((w.data_ptr(), w._version) for w in weights))
        memo = self.__dict__.setdefault("_codes_memo", {})
        if key not in memo:
            with torch.no_grad():
                z = self.encode(torch.from_numpy(X)).numpy()
            z.flags.writeable = False
            while len(memo) >= _CODES_REMEMBERED:
                memo.pop(next(iter(memo)))  # the oldest
            memo[key] = z
        return memo[key]

    def __getstate__(self):
        # the memo is a cache: it does not travel to worker processes or into pickles
        state = super().__getstate__()
        return {k: v for k, v in state.items() if k != "_codes_memo"}


def sae_metrics(sae: TopKSAE, X) -> dict:
    r"""Reconstruction and sparsity of ``sae`` on ``X``.

    ``fve`` is the fraction of variance explained
    :math:`1 - \sum_i\|x_i-\hat x_i\|^2 / \sum_i\|x_i-\bar x\|^2`, ``l0`` the mean number of
    non-zero codes, ``dead`` the fraction of latents that never fire on ``X``.
    """
    X = torch.as_tensor(np.asarray(X, dtype=np.float32))
    with torch.no_grad():
        z = sae.encode(X)
        err = ((sae.decode(z) - X) ** 2).sum()
        var = ((X - X.mean(0)) ** 2).sum()
    return {"fve": float(1 - err / var), "l0": float((z != 0).sum(1).float().mean()),
            "dead": float(((z != 0).sum(0) == 0).float().mean())}


def train_sae(X, n_latents: int = 2048, k: int = 32, epochs: int = 10, batch_size: int = 256,
              lr: float = 2e-3, aux_k: int = 256, aux_coef: float = 1 / 32,
              dead_after: int | None = None, seed: int = 0,
              threads: int | None = 1) -> tuple[TopKSAE, pd.DataFrame]:
    r"""Train a :class:`TopKSAE` on the rows of ``X`` with Adam.

    Loss per batch :math:`B` (Gao et al., 2024, Section 2.3 and Appendix A.2), in standardised
    units, where :math:`\tilde x` has total variance :math:`d` on the training data so that the
    first term is the batch's fraction of variance unexplained:

    .. math::
        \mathcal L = \frac{1}{|B|\,d}\sum_{x\in B}\|\tilde x - \hat{\tilde x}\|^2
        + \alpha\,\frac{\sum_B\|e - \hat e\|^2}{\sum_B\|e - \bar e\|^2},

    where :math:`e = \tilde x - \hat{\tilde x}` is the residual and :math:`\hat e` its
    reconstruction from the ``aux_k`` (:math:`k_\text{aux}`) largest pre-activations among the
    *dead* latents (those that have not fired on the last ``dead_after`` training inputs, one epoch
    by default), weighted by ``aux_coef`` (:math:`\alpha`). Decoder rows are renormalised to unit
    norm after every step; :math:`b_\text{dec}` starts at 0, the data's mean after
    standardisation.

    ``threads`` fixes torch's thread count while training (``None``: leave it): float sums
    depend on it, and a probe on a handful of examples can pick different latents from an SAE
    trained with two threads instead of one. One thread costs little here (about 10% slower).

    Returns
    -------
    (sae, history): the trained SAE (eval mode) and one row per epoch with the mean ``loss``, the
    fraction of variance explained ``fve`` (one minus the mean batch-normalised squared error,
    measured during the epoch: no extra pass) and ``dead``, the fraction of dead latents at its
    end. :func:`sae_metrics` measures the trained SAE on any data.
    """
    X = np.asarray(X, dtype=np.float32)
    if X.ndim != 2 or len(X) < 2:
        raise ValueError(f"X must be a 2-d array with at least two rows, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X must be finite")
    check_int(epochs, "epochs", minimum=1)
    check_int(batch_size, "batch_size", minimum=1)
    previous = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        return _train_sae(X, n_latents, k, epochs, batch_size, lr, aux_k, aux_coef, dead_after,
                          seed)
    finally:
        torch.set_num_threads(previous)


def _train_sae(X, n_latents, k, epochs, batch_size, lr, aux_k, aux_coef, dead_after, seed):
    torch.manual_seed(seed)
    # the decoder's initialisation and the batch order: two named streams of ``seed``
    sae = TopKSAE(X.shape[1], n_latents, k, seed=stream_int(seed, "decoder init"))
    data = torch.from_numpy(X)
    sae.mu.copy_(data.mean(0))
    sae.s.copy_(sqrt(((data - sae.mu) ** 2).sum(1).mean()) / np.sqrt(X.shape[1]))
    xs = (data - sae.mu) / sae.s
    dead_after = len(X) if dead_after is None else dead_after
    since_fired = torch.zeros(n_latents)
    opt = Adam(sae.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(stream_int(seed, "batch order"))
    history = []
    for epoch in range(epochs):
        order = torch.randperm(len(xs), generator=gen)
        total = fvu = 0.0
        for start in range(0, len(xs), batch_size):
            x = xs[order[start:start + batch_size]]
            # b_dec is detached here: in the encoder it only shifts b_enc, and no input gradient
            # means one matmul less per step
            pre = torch.relu((x - sae.b_dec.detach()) @ sae.W_enc + sae.b_enc)
            top = pre.topk(sae.k, dim=-1)
            # decode from the k active rows only (a weighted bag of decoder rows): several times
            # faster than the dense (B, m) @ (m, d) product, forward and backward
            recon = F.embedding_bag(top.indices, sae.W_dec, per_sample_weights=top.values,
                                    mode="sum") + sae.b_dec
            mse = ((recon - x) ** 2).sum() / (len(x) * x.shape[1])
            loss = mse
            fired = torch.zeros(n_latents, dtype=torch.bool)
            fired[top.indices[top.values > 0]] = True
            since_fired = torch.where(fired, 0.0, since_fired + len(x))
            dead = since_fired >= dead_after
            if aux_coef > 0 and dead.any():
                err = (x - recon).detach()
                k_aux = min(aux_k, int(dead.sum()))
                top_aux = pre.masked_fill(~dead, 0.0).topk(k_aux, dim=-1)
                err_hat = F.embedding_bag(top_aux.indices, sae.W_dec,
                                          per_sample_weights=top_aux.values, mode="sum")
                aux = ((err_hat - err) ** 2).sum() / ((err - err.mean(0)) ** 2).sum()
                loss = loss + aux_coef * torch.nan_to_num(aux)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                sae.W_dec /= sae.W_dec.norm(dim=1, keepdim=True)
            total += float(loss.detach()) * len(x)
            fvu += float(mse.detach()) * len(x)
        history.append({"epoch": epoch + 1, "loss": total / len(xs), "fve": 1 - fvu / len(xs),
                        "dead": float(dead.float().mean())})
    return sae.eval(), pd.DataFrame(history)
