"""What both notebooks of the equal-share chapter share: colours and the
adaptive learners."""

from icml25 import book

# one colour per strategy or learner, in both notebooks of the chapter
COLOURS = {"equilibrium": book.PALETTE[3], "FSP": book.PALETTE[4],
           "Hedge SP": book.PALETTE[7], "Hedge": book.PALETTE[0],
           "SAOL": book.PALETTE[2], "cloning": book.PALETTE[1], "share": "0.3"}
# the learners that face moving opponents: display name -> `es.simulate` learner
LEARNERS = {"Hedge": "hedge", "SAOL": "saol", "cloning": "clone"}
