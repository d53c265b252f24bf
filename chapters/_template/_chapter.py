"""What the two notebooks of the chapter share: colours, labels, a helper used by both."""

from icml25 import book

#: One colour per method in every figure of the chapter.
COLOURS = {"method": book.PALETTE[0], "baseline": book.PALETTE[1]}
