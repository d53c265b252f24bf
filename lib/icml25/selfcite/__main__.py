"""``python -m icml25.selfcite data/selfcite/scores.npz``: the judge's score table."""

from .citations import main

main()
