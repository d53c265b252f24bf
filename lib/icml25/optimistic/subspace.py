r"""Learning the active subspace: compressed sensing (Algorithm 1) and a neural surrogate."""

from __future__ import annotations

import numpy as np
from scipy.linalg import subspace_angles

from icml25.common.streams import as_generator
from icml25.common.validation import check_int

from .counting import CountedFunction


def basis_pursuit(phi, y, *, iterations: int = 1000, rho: float | None = None) -> np.ndarray:
    r"""Basis pursuit for a batch: $\hat g_j=\arg\min\|g\|_1$ s.t. $\Phi g=y_j$, by ADMM.

    ADMM on $\min\|z\|_1+\iota\{\Phi x=y\}$ with $x=z$ (Boyd et al., 2011, §6.2):
    $x\leftarrow\Pi(z-u)$, $z\leftarrow S_{1/\rho}(x+u)$, $u\leftarrow u+x-z$, where
    $\Pi(v)=v-\Phi^\top(\Phi\Phi^\top)^{-1}(\Phi v-y)$ projects on the affine set and $S$ is
    soft thresholding. All columns of ``y`` are solved at once; the iteration stops early
    when both residuals $\|x-z\|_\infty$ and $\|z-z_{\text{prev}}\|_\infty$ fall below
    $10^{-10}\max|x_0|$.

    Parameters
    ----------
    phi : array (k, d)
        Sensing matrix $\Phi$ of full row rank $k<d$.
    y : array (k,) or (k, p)
        Measurements, one column per vector to recover.
    iterations : int
        Most ADMM steps.
    rho : float, optional
        Penalty; by default $10/\mathrm{median}|y|$-scaled so the threshold suits the data.

    Returns
    -------
    ndarray (d,) or (d, p)
    """
    phi = np.asarray(phi, dtype=float)
    y = np.asarray(y, dtype=float)
    if phi.ndim != 2 or phi.shape[0] > phi.shape[1]:
        raise ValueError(f"phi must be a (k, d) matrix with k <= d; got shape {phi.shape}")
    single = y.ndim == 1
    Y = y[:, None] if single else y
    if Y.ndim != 2 or Y.shape[0] != phi.shape[0]:
        raise ValueError(f"y must have {phi.shape[0]} rows; got shape {y.shape}")
    if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(Y))):
        raise ValueError("phi and y must be finite")
    iterations = check_int(iterations, "iterations", minimum=1)
    gram = phi @ phi.T
    if np.linalg.matrix_rank(gram) < phi.shape[0]:
        raise ValueError("phi must have full row rank")
    pinv = phi.T @ np.linalg.inv(gram)                      # (d, k)
    x0 = pinv @ Y                                            # least-norm solution
    scale = np.median(np.abs(x0)) if np.any(x0) else 1.0
    rho = 1.0 / max(scale, 1e-300) if rho is None else float(rho)
    if not rho > 0:
        raise ValueError(f"rho must be positive; got {rho}")
    proj = np.eye(phi.shape[1]) - pinv @ phi
    z, u = x0.copy(), np.zeros_like(x0)
    tol = 1e-10 * max(float(np.abs(x0).max()), 1e-300)
    for step in range(iterations):
        x = proj @ (z - u) + x0
        v = x + u
        z_old = z
        z = np.sign(v) * np.maximum(np.abs(v) - 1.0 / rho, 0.0)
        u += x - z
        # stop once primal and dual residuals are at round-off level
        if step % 25 == 24 and np.abs(x - z).max() < tol and np.abs(z - z_old).max() < tol:
            break
    x = proj @ z + x0                                        # feasible end point
    return x[:, 0] if single else x


def learn_subspace(fc: CountedFunction, centre, active_dim: int, points: int, *,
                   directions: int = 4, step: float = 1e-3, radius: float = 1.0,
                   rng=None) -> np.ndarray:
    r"""Algorithm 1: the top-$m$ right singular vectors of recovered gradients.

    $m_x$ points $X_j=c+r\,\xi_j/\|\xi_j\|$, $\xi_j\sim\mathcal N(0,I_d)$; a Rademacher matrix
    :math:`\Phi\in\{\pm1/\sqrt{m_\phi}\}^{m_\phi\times d}` (redrawn until full row rank); forward
    differences $Y_{ij}=(f(X_j+\epsilon\phi_i)-f(X_j))/\epsilon\approx\phi_i^\top\nabla f(X_j)$;
    $\hat g_j$ by :func:`basis_pursuit`; $V$ = top-$m$ right singular vectors of
    $[\hat g_1,\dots,\hat g_{m_x}]^\top$. Costs :math:`m_x(m_\phi+1)` evaluations of ``fc``. With
    :math:`m_\phi\ge d` (:math:`m_\phi` is capped at $d$) $\Phi$ is invertible and $\hat g_j$ is the
    forward-difference gradient itself.

    Returns
    -------
    ndarray (d, m) with orthonormal columns.
    """
    rng = as_generator(rng)
    centre = np.asarray(centre, dtype=float)
    d = centre.size
    directions = min(directions, d)          # d directions already determine the gradient
    xi = rng.standard_normal((points, d))
    X = centre + radius * xi / np.linalg.norm(xi, axis=1, keepdims=True)
    while True:
        phi = rng.choice([-1.0, 1.0], size=(directions, d)) / np.sqrt(directions)
        if np.linalg.matrix_rank(phi) == directions:
            break
    base = fc(X)                                                   # (m_x,)
    shifted = (X[:, None, :] + step * phi[None]).reshape(-1, d)
    Y = (fc(shifted).reshape(points, directions) - base[:, None]) / step
    G = basis_pursuit(phi, Y.T).T if directions < d else np.linalg.solve(phi, Y.T).T
    _, _, vt = np.linalg.svd(G, full_matrices=False)
    return vt[:active_dim].T


def principal_angle(V, W) -> float:
    """Largest principal angle (radians) between the column spans of ``V`` and ``W``."""
    V, W = np.asarray(V, dtype=float), np.asarray(W, dtype=float)
    if V.ndim != 2 or W.ndim != 2 or V.shape[0] != W.shape[0]:
        raise ValueError(f"V and W must be (d, m) matrices with equal d; got {V.shape}, "
                         f"{W.shape}")
    return float(np.max(subspace_angles(V, W)))




def neural_subspace(fc: CountedFunction, bounds, active_dim: int, samples: int, *,
                    hidden: int = 64, weight_decay: float = 1.0, epochs: int = 300,
                    learning_rate: float = 1e-2, rng=None) -> np.ndarray:
    r"""The paper's second learner: SVD of the first layer of a one-hidden-layer network.

    Draws ``samples`` points $x_j$ uniform in the box and evaluates them (``samples``
    evaluations of ``fc``), fits $\hat f(x)=w_2^\top\sigma(W_1u+b_1)+b_2$ with ReLU $\sigma$
    to the standardised values, $u=(x-c)/w$ the point in $[-1,1]^d$ coordinates ($c$ the
    centre, $w$ the half-widths), by Adam on the squared error plus the $L_2$ penalty
    ``weight_decay`` (scikit-learn's ``MLPRegressor``, seeded), takes the top-$m$ right
    singular vectors $U$ of the first layer $W_1$ and returns an orthonormal basis of
    $\mathrm{diag}(1/w)\,U$, the same directions in $x$ coordinates.

    Why it works: $\nabla_u\hat f=W_1^\top(\sigma'(\cdot)\odot w_2)$ lies in the row space
    of $W_1$; fitting $f=g(Ax)=g(A\,\mathrm{diag}(w)u+Ac)$ grows the rows of $W_1$ along the
    rows of $A\,\mathrm{diag}(w)$, and the penalty shrinks what the data do not ask for, so
    $U$ spans approximately $\mathrm{diag}(w)A^\top$, and $\mathrm{diag}(1/w)U$ the rows of
    $A$.

    Parameters
    ----------
    fc : CountedFunction
        The counted objective (batches must be accepted).
    bounds : array (d, 2)
        The domain; samples are drawn inside it, so no evaluation leaves it.
    active_dim : int
        $m$, the number of directions returned.
    samples : int
        Uniform samples, at least ``active_dim + 1``.
    hidden, weight_decay, epochs, learning_rate
        Width of the hidden layer, $L_2$ penalty (scikit-learn's ``alpha``), Adam epochs,
        step size.
    rng : int, SeedSequence or Generator, optional
        Randomness of the samples and of the network's initialisation.

    Returns
    -------
    ndarray (d, m) with orthonormal columns.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPRegressor

    box = np.asarray(bounds, dtype=float)
    d = box.shape[0]
    active_dim = check_int(active_dim, "active_dim", minimum=1, maximum=d)
    samples = check_int(samples, "samples", minimum=active_dim + 1)
    hidden = check_int(hidden, "hidden", minimum=active_dim)
    epochs = check_int(epochs, "epochs", minimum=1)
    if not weight_decay >= 0 or not learning_rate > 0:
        raise ValueError(f"weight_decay must be >= 0 and learning_rate > 0; got "
                         f"{weight_decay!r}, {learning_rate!r}")
    rng = as_generator(rng)
    centre, half = box.mean(axis=1), (box[:, 1] - box[:, 0]) / 2
    X = rng.uniform(box[:, 0], box[:, 1], size=(samples, d))
    y = np.asarray(fc(X), dtype=float).reshape(samples)
    spread = y.std()
    y = (y - y.mean()) / (spread if spread > 0 else 1.0)
    net = MLPRegressor(hidden_layer_sizes=(hidden,), activation="relu", solver="adam",
                       alpha=weight_decay, learning_rate_init=learning_rate,
                       max_iter=epochs, tol=0.0, n_iter_no_change=epochs + 1,
                       random_state=int(rng.integers(0, 2**31 - 1)))
    with warnings.catch_warnings():
        # a fixed number of epochs is the design, not a failure to converge
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit((X - centre) / half, y)
    # SVD in the scaled coordinates u, where the fit's leftover noise is isotropic; a
    # gradient direction v_u in u is diag(1/w) v_u in x (the chain rule through x=c+wu)
    _, _, vt = np.linalg.svd(net.coefs_[0].T, full_matrices=False)    # W1 is (hidden, d)
    V, _ = np.linalg.qr(vt[:active_dim].T / half[:, None])
    return V
