"""What both notebooks of the clinical-rationales chapter share: the models of a seed (the
committed ones, or trained here in paper mode) and one colour per model."""

from icml25 import book
from icml25 import rationales as R


def models_of(seed: int, text, *, train: bool):
    """``(models, training config)`` of training seed ``seed``: the committed checkpoint, or,
    with ``train`` (paper mode), the models trained here (minutes)."""
    if train:
        return R.train_models(seed, R.PAPER_TRAINING, text), dict(R.PAPER_TRAINING)
    return R.load_models(seed, text)


# one colour per model (and the planted evidence), in both notebooks of the chapter
COLOURS = {"rationale": book.PALETTE[0], "unet": "0.45", "gradcam": book.PALETTE[1],
           "gradcam_b": book.PALETTE[4], "random": book.PALETTE[7],
           "evidence": book.PALETTE[3]}
