"""The book's plotting style: readable defaults, a colour-blind-safe palette, book-sized figures."""

from __future__ import annotations

import matplotlib as mpl
from cycler import cycler

#: Okabe & Ito's palette, distinguishable under the common colour-vision deficiencies.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

#: Width of a full-width figure in the book's text column, in inches.
WIDTH = 7.0

#: The book's matplotlib settings (rcParams), applied by :func:`use_style`.
STYLE = {
    "figure.figsize": (WIDTH, 3.4),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.constrained_layout.use": True,
    "axes.prop_cycle": cycler(color=PALETTE),
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "image.cmap": "viridis",
    "svg.hashsalt": "icml25",
}


def use_style() -> None:
    """Apply :data:`STYLE` to matplotlib (idempotent); in a notebook, figures at 2x resolution.

    "retina" PNGs are drawn at twice the pixels and displayed at the same size, so figures stay
    sharp on phones and high-density screens (SVG would be sharper still, but a scatter of
    thousands of points weighs megabytes as SVG).
    """
    mpl.rcParams.update(STYLE)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the notebook stack
        return
    if get_ipython() is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("retina")


def figure(ncols: int = 1, nrows: int = 1, *, height: float = 3.4, **kwargs):
    """``plt.subplots`` at the book's width: ``fig, axes = figure(2)``."""
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(WIDTH, height * nrows), **kwargs)
