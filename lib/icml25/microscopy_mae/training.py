r"""The committed models: what one training seed trains, the checkpoint and its
command (``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt``)."""

from __future__ import annotations

import time

import numpy as np

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command
from icml25.common.streams import stream

from .curation import consistency_pvalues, curate, well_means
from .evaluation import centre_scale
from .model import _torch, block_embeddings, build_mae, train_mae
from .screen import make_screen

# --------------------------------------------------------------------------------------
# The committed models
# --------------------------------------------------------------------------------------

#: The pre-training screen (a different draw of genes and plates than any evaluation
#: screen).
TRAIN_SCREEN = dict(n_pathways=16, pathway_size=4, n_null=64, n_plates=6,
                    controls_per_plate=12, crops_per_well=12)
#: Training of each model: equal steps for curated and uncurated data.
TRAINING = dict(steps=500, batch=128, lr=3e-4, depth=6, heads=4, patch=4)
#: Widths: the main model and the scaling series.
MAIN_WIDTH = 64
WIDTHS = (32, 64)


def train_seed(seed: int, training: dict = TRAINING, screen_config: dict = TRAIN_SCREEN,
               widths=WIDTHS, log=print) -> dict:
    """Everything one training seed makes: the uncurated model (which also curates, like
    the paper's earlier MAE), the curation p-values and the curated models at every
    width.
    Returns ``{"uncurated": (state, record), "curated_<w>": ..., "pvalues": ...}``."""
    screen = make_screen(**screen_config, seed=stream(seed, "pre-training screen"))
    cfg = {k: v for k, v in training.items() if k not in ("steps", "batch", "lr")}
    kw = dict(steps=training["steps"], batch=training["batch"], lr=training["lr"])
    out = {}
    t0 = time.perf_counter()
    model, rec = train_mae(screen.images, seed=seed, width=MAIN_WIDTH, **kw, **cfg)
    out["uncurated"] = (model.state_dict(), rec)
    log(f"seed {seed}: uncurated trained ({time.perf_counter() - t0:.0f} s)")
    emb = block_embeddings(model, screen.images)[-1]
    wells = well_means(emb, screen.crop_well, len(screen.well_gene))
    # centre-scaled on the controls: per-plate whitening with a dozen controls per plate
    # in 64 dimensions is degenerate (the controls, fitted in sample, would look less
    # alike than any other wells, and null genes would pass the test)
    wells = centre_scale(wells, screen.is_control)
    p = consistency_pvalues(wells, screen.well_gene, screen.well_plate,
                            seed=stream(seed, "curation null"))
    keep = curate(screen, p, seed=stream(seed, "curation controls"))
    out["pvalues"] = p
    out["gene_pathway"] = screen.gene_pathway
    out["kept_crops"] = int(len(keep))
    out["n_crops"] = int(len(screen.images))
    for w in widths:
        model, rec = train_mae(screen.images[keep], seed=seed, width=w, **kw, **cfg)
        out[f"curated_{w}"] = (model.state_dict(), rec)
        log(f"seed {seed}: curated width {w} trained "
            f"({time.perf_counter() - t0:.0f} s)")
    return out


#: The committed models (:func:`load_models`): training seeds ``0 .. TRAINING_SEEDS - 1``
#: (three models each), made by :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1;
#: each seed's streams are its own, so a larger ``N`` leaves the first seeds' weights
#: unchanged).
CHECKPOINT = "microscopy_mae/models.pt"
TRAINING_SEEDS = 10
#: The command that trains the committed models.
TRAIN_COMMAND = "python -m icml25.microscopy_mae train data/microscopy_mae/models.pt"


def save_checkpoint(path, seeds=range(5), jobs: int = 1) -> str:
    """Train every seed (in ``jobs`` processes) and save the models in float16 with
    their training records and curation outcome (:func:`icml25.common.checkpoints.save`;
    per seed, ``records[seed]`` holds each model's record and ``"curation"``: the
    p-values, ``gene_pathway``, ``kept_crops``, ``n_crops``). Returns the file's sha256."""
    torch = _torch()
    seeds = [int(s) for s in seeds]
    results = map_seeds(_train_one_thread, seeds, jobs)
    weights, records = {}, {}
    for s, res in zip(seeds, results):
        weights[s] = {n: checkpoints.half(v[0]) for n, v in res.items()
                      if isinstance(v, tuple)}
        records[s] = {n: v[1] for n, v in res.items() if isinstance(v, tuple)}
        records[s]["curation"] = {
            n: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v
            for n, v in res.items() if not isinstance(v, tuple)}
    config = {"training": dict(TRAINING), "screen": dict(TRAIN_SCREEN),
              "widths": tuple(WIDTHS), "main_width": MAIN_WIDTH}
    return checkpoints.save(path, config=config, seeds=weights, records=records)


def _train_one_thread(seed):
    torch = _torch()
    torch.set_num_threads(1)
    return train_seed(seed)


def load_models(seed: int, name: str = "models.pt"):
    """The committed models of training seed ``seed``: ``(models, info)`` with
    ``models[name] = (MAE, record)`` for ``uncurated`` and ``curated_<width>``, and
    ``info`` holding the curation p-values and the training config. The committed file
    holds seeds ``0 .. TRAINING_SEEDS - 1``; another seed is an error naming
    :data:`TRAIN_COMMAND`."""
    from icml25.common import data

    ckpt = checkpoints.load(data.path(f"microscopy_mae/{name}"))
    state = checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND)
    blob, records = ckpt.config, ckpt.records[seed]
    info = {k: v.numpy() if hasattr(v, "numpy") else v
            for k, v in records["curation"].items()}
    cfg = {k: v for k, v in blob["training"].items()
           if k not in ("steps", "batch", "lr")}
    models = {}
    for key, weights in state.items():
        width = blob["main_width"] if key == "uncurated" else int(key.split("_")[1])
        model = build_mae(0, width=width, **cfg)
        model.load_state_dict({k: v.float() for k, v in weights.items()})
        model.eval()
        models[key] = (model, records[key])
    info.update(training=blob["training"], screen=blob["screen"], widths=blob["widths"],
                main_width=blob["main_width"], model_seed=seed)
    return models, info


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.microscopy_mae train data/microscopy_mae/models.pt``."""
    train_command("python -m icml25.microscopy_mae", save_checkpoint, seeds=TRAINING_SEEDS,
                  argv=argv)


def curation_outcomes(name: str = "models.pt") -> dict:
    """The curation test's outcome on the pre-training screen of every committed training
    seed (each seed draws its own screen): ``{seed: {"pvalues", "gene_pathway",
    "kept_crops", "n_crops"}}``, without building the models."""
    from icml25.common import data

    ckpt = checkpoints.load(data.path(f"microscopy_mae/{name}"))
    return {seed: {k: v.numpy() if hasattr(v, "numpy") else v
                   for k, v in records["curation"].items()}
            for seed, records in ckpt.records.items() if isinstance(seed, int)}
