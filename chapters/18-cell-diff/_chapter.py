"""What both notebooks of the CELL-Diff chapter share: one colour per model."""

from icml25 import book

# one colour per model (and the real images), in both notebooks of the chapter
COLOURS = {"cell_diff": book.PALETTE[0], "no_sequence": book.PALETTE[1],
           "regression": book.PALETTE[3], "retrieval": book.PALETTE[4], "real": "0.3"}
