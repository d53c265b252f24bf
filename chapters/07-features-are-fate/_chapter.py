"""What both notebooks of the features-are-fate chapter share: one colour per
learner."""

from icml25 import book

# one colour per learner, in both notebooks of the chapter
COLOURS = {"scratch": book.PALETTE[0], "linear": book.PALETTE[1],
           "finetune": book.PALETTE[2], "source": book.PALETTE[4], "theory": "0.25"}
