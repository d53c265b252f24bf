"""Shared test setup.

* BLAS single-threaded: two xdist workers share two cores.
* Hypothesis derandomised: the property tests explore the same examples on every run, so a green
  run is reproducible (a new counterexample shows up on the next change of the tested code, not at
  random in CI).
"""

import os

from hypothesis import settings

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

settings.register_profile("book", derandomize=True, deadline=None, database=None)
settings.load_profile("book")

