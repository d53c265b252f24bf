"""What both notebooks of the cross-learning chapter share: one colour per learner."""

from icml25 import book

# one colour per learner, in both notebooks of the chapter
COLOURS = {"reconstruction": book.PALETTE[0], "oracle": book.PALETTE[2],
           "per-context": book.PALETTE[3], "blind": book.PALETTE[4],
           "no coin": book.PALETTE[1], "unpaired": book.PALETTE[5],
           "running plug-in": book.PALETTE[6], "frozen": book.PALETTE[7]}
