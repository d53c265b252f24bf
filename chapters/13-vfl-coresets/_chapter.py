"""What both notebooks of the VFL-coresets chapter share: one colour per
construction."""

from icml25 import book

# one colour per construction, in both notebooks of the chapter
COLOURS = {"uniform": "0.45", "leverage": book.PALETTE[0], "ridge": book.PALETTE[1],
           "lewis": book.PALETTE[2], "lewis-aug": book.PALETTE[3]}
