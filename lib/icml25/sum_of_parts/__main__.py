"""``python -m icml25.sum_of_parts data/sum_of_parts/sst2_tokens.npz``: the token features
of the SST-2 sentences, once."""

from .text import main

main()
