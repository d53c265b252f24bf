"""What both notebooks of the SelfCite chapter share: the length guard and the
kinds' names."""

LIMIT = 32  # the length guard's token limit at this scale (the paper: 384)
# the kinds of context sentences, as the figures and tables name them
KIND_NAMES = {"gold": "gold", "lexical": "lexical overlap",
              "other_entity": "other entity", "near_duplicate": "near-duplicate",
              "filler": "unrelated"}
