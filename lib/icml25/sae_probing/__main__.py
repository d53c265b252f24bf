"""``python -m icml25.sae_probing data/sae_probing/activations.npz``: embed the sample once."""

from .data import main

main()
