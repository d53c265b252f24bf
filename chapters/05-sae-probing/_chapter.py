"""What both notebooks of the SAE-probing chapter share: the probed layer and the
SAE's colour."""

from icml25 import book

LAYER = 3  # the middle block, as the paper probes a middle layer
SAE_COLOUR = book.PALETTE[4]  # the SAE and its probe, in every figure of the chapter
