"""What both notebooks of the DCT-GMM chapter share: one colour per test."""

from icml25 import book

# one colour per test in every figure of the chapter
COLOURS = {"DCT-GMM": book.PALETTE[0], "DCT (binarised)": book.PALETTE[1],
           "Fisher-z, codes": book.PALETTE[3], "Fisher-z, latent (oracle)": "black"}
