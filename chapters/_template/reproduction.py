# %% [markdown]
# # Reproduction: <the paper's headline experiment>
#
# The paper's claim, quoted, and what we run to test it at laptop scale: the data, the
# baselines (the paper's, and a peer library's where one exists), in the same run.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book
from icml25.common.stats import bootstrap_ci

from _chapter import COLOURS

SIZES = {
    "quick": dict(n=200, n_boot=200),
    "book": dict(n=2000, n_boot=2000),
    "paper": dict(n=20000, n_boot=10000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## The method against the baseline
#
# Every figure is glued into the prose ({glue:text}`gap:.3f`), never typed.

# %%
rng = run.rng("data")
method_error = rng.normal(0.9, 0.1, size.n)
baseline_error = rng.normal(1.0, 0.1, size.n)
diff = method_error - baseline_error
est = bootstrap_ci(diff, n_boot=size.n_boot, seed=run.seed_of("bootstrap"))
book.glue(gap=est.value)
book.claim("beats-baseline", est.value, interval=(est.low, est.high),
           shown={"method": method_error.mean(), "baseline": baseline_error.mean()})

# %%
fig, ax = book.figure()
ax.hist([method_error, baseline_error], color=[COLOURS["method"], COLOURS["baseline"]],
        label=["method", "baseline"], bins=30)
ax.set(xlabel="error", ylabel="count")
ax.legend()
book.glue("fig_errors", fig)

# %%
book.finish()
