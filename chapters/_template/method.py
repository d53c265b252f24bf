# %% [markdown]
# # The method: <the paper's idea in a few words>
#
# What problem the paper solves, in two sentences, and the quote of its abstract that states
# its method (Author et al., 2025, abstract). Then the method, step by step: each equation
# beside the lines of `icml25.<method>` that compute it.

# %% tags=["parameters", "hide-input"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %% tags=["hide-input"]
import numpy as np

from icml25 import book

SIZES = {  # one place for every size; quick: seconds, book: the published run
    "quick": dict(n=200),
    "book": dict(n=2000),
    "paper": dict(n=20000),
}
run = book.setup(mode=mode, seed=seed, sizes=SIZES)
size = run.size

# %% [markdown]
# ## The kernel, against its definition
#
# A check holds by construction or verifies a bound: it can only fail through a bug.

# %%
x = run.rng("data").normal(size=size.n)
vectorised = np.cumsum(x)
loop = np.array([x[: i + 1].sum() for i in range(size.n)])
book.claim("matches-definition", float(np.abs(vectorised - loop).max()))

# %% [markdown]
# ## Exercises
#
# ```{exercise} A first prediction
# :label: ex-NN-first
#
# **Level:** easy · **Time:** about 10 minutes.
#
# Predict first, then run: ...
# ```
#
# ```{solution-start} ex-NN-first
# :class: dropdown
# ```
#
# The solution, with the run that checks it.

# %%
book.glue(ex_answer=float(vectorised[-1]))

# %% [markdown]
# ```{solution-end}
# ```

# %%
book.finish()
