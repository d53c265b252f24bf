r"""Multi-index test functions $f(x)=g(A(x-x^\star))$ with $\min f=0$."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

FUNCTIONS = ("sphere", "ellipsoid", "sharp_ridge", "rastrigin", "branin", "styblinski_tang")

def _t_osz(z):
    """COCO's oscillation transform $T_{osz}$ (Hansen et al., 2009)."""
    nz = z != 0
    zh = np.where(nz, np.log(np.abs(np.where(nz, z, 1.0))), 0.0)
    c1 = np.where(z > 0, 10.0, 5.5)
    c2 = np.where(z > 0, 7.9, 3.1)
    return np.where(nz, np.sign(z) * np.exp(zh + 0.049 * (np.sin(c1 * zh) + np.sin(c2 * zh))),
                    0.0)


def _t_asy(z, beta=0.2):
    """COCO's asymmetry transform $T^{\\beta}_{asy}$ along the last axis."""
    m = z.shape[-1]
    w = np.arange(m) / (m - 1) if m > 1 else np.zeros(1)
    pos = np.maximum(z, 0.0)
    return np.where(z > 0, pos ** (1 + beta * w * np.sqrt(pos)), z)


_BRANIN_MIN = (np.pi, 2.275)
_ST_ARGMIN = -2.903534027771177


def _g(name: str, z: np.ndarray) -> np.ndarray:
    """The low-dimensional part $g$, minimum 0 at $z=0$; ``z`` is (k, m)."""
    if name == "sphere":
        return (z**2).sum(-1)
    if name == "ellipsoid":
        m = z.shape[-1]
        c = 10.0 ** (6 * np.arange(m) / (m - 1)) if m > 1 else np.ones(1)
        return (c * _t_osz(z) ** 2).sum(-1)
    if name == "sharp_ridge":
        return z[:, 0] ** 2 + 10.0 * np.linalg.norm(z[:, 1:], axis=-1)
    if name == "rastrigin":
        t = _t_asy(_t_osz(z))
        return 10 * (z.shape[-1] - np.cos(2 * np.pi * t).sum(-1)) + (t**2).sum(-1)
    if name == "branin":
        x1, x2 = z[:, 0] + _BRANIN_MIN[0], z[:, 1] + _BRANIN_MIN[1]
        b = 5.1 / (4 * np.pi**2)
        val = (x2 - b * x1**2 + 5 / np.pi * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(
            x1) + 10
        return val - 5 / (4 * np.pi)          # the minimum 0.397887... = 5/(4 pi)
    if name == "styblinski_tang":
        t = z + _ST_ARGMIN
        per = 0.5 * (t**4 - 16 * t**2 + 5 * t) - 0.5 * (
            _ST_ARGMIN**4 - 16 * _ST_ARGMIN**2 + 5 * _ST_ARGMIN)
        return per.sum(-1)
    raise ValueError(f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)}")


@dataclass(frozen=True)
class Problem:
    r"""A multi-index function $f(x)=g(A(x-x^\star))$ on ``bounds``, $\min f=0$.

    ``f`` takes a point ``(d,)`` (returns a float) or a batch ``(k, d)`` (returns ``(k,)``).
    """

    name: str
    A: np.ndarray
    x_star: np.ndarray
    bounds: np.ndarray

    @property
    def d(self) -> int:
        return self.A.shape[1]

    @property
    def active_dim(self) -> int:
        return self.A.shape[0]

    def f(self, x):
        x = np.asarray(x, dtype=float)
        z = (np.atleast_2d(x) - self.x_star) @ self.A.T
        val = _g(self.name, z)
        return float(val[0]) if x.ndim == 1 else val


def make_problem(name: str, d: int, *, active_dim: int = 2, seed=0,
                 half_width: float = 5.0) -> Problem:
    r"""A random multi-index test problem on $[-w,w]^d$.

    $A$ is the first $m$ rows of a random orthogonal matrix (QR of a Gaussian, signs fixed);
    $x^\star$ is uniform in the box, redrawn until its projection $A^\top Ax^\star$ on the
    active subspace lies in the box too. ``g``: ``sphere`` $\|z\|^2$; ``ellipsoid``
    $\sum_i10^{6(i-1)/(m-1)}T_{osz}(z)_i^2$; ``sharp_ridge`` $z_1^2+10\|z_{2:}\|$;
    ``rastrigin`` $10(m-\sum\cos2\pi\tilde z_i)+\|\tilde z\|^2$,
    $\tilde z=T_{asy}^{0.2}(T_{osz}(z))$; ``branin`` (needs $m=2$) and ``styblinski_tang``
    shifted so that one global minimiser is $z=0$ and the minimum is 0.
    """
    if name not in FUNCTIONS:
        raise ValueError(f"unknown function {name!r}; choose from {', '.join(FUNCTIONS)}")
    d = check_int(d, "d", minimum=1)
    active_dim = check_int(active_dim, "active_dim", minimum=1)
    if active_dim > d:
        raise ValueError(f"active_dim must be <= d = {d}; got {active_dim}")
    if name == "branin" and active_dim != 2:
        raise ValueError("branin is two-dimensional: active_dim must be 2")
    if name == "sharp_ridge" and active_dim < 2:
        raise ValueError("sharp_ridge needs active_dim >= 2")
    if not half_width > 0:
        raise ValueError(f"half_width must be positive; got {half_width!r}")
    rng = as_generator(seed)
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(r))
    A = q[:, :active_dim].T.copy()
    bounds = np.tile([-half_width, half_width], (d, 1))
    for _ in range(10_000):
        x_star = rng.uniform(-half_width, half_width, d)
        if np.all(np.abs(A.T @ (A @ x_star)) <= half_width):
            break
    else:  # pragma: no cover - the projection is shorter, so this is all but impossible
        raise RuntimeError("could not place the optimum")
    return Problem(name, A, x_star, bounds)


