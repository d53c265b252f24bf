"""Training the three models of a seed, and the committed checkpoint that holds them.

``python -m icml25.cell_diff train data/cell_diff/models.pt [--seeds 5] [--jobs 2]`` trains
:data:`MODELS` for training seeds 0 to 4 (each seed its own named streams: the training
cells, and one stream per model for its initialisation and batches) and saves them in one
file; :func:`load_models` reads the models of one seed back.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command, train_in_worker
from icml25.common.streams import as_generator, stream

from .cells import Cells, make_cells
from .model import UnifiedNet, _to_model, _torch, scheduler, unified_loss

__all__ = [
    "CHECKPOINT",
    "MODELS",
    "TRAINING",
    "TRAINING_CPU_MINUTES",
    "TRAINING_SEEDS",
    "TRAIN_COMMAND",
    "build",
    "load_models",
    "save_checkpoint",
    "train_model",
    "train_models",
]

#: The committed models (:func:`load_models`): training seeds ``0 .. TRAINING_SEEDS - 1``,
#: made by :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1; each seed's streams
#: are its own, so a larger ``N`` leaves the first seeds' weights unchanged).
CHECKPOINT = "cell_diff/models.pt"
#: The command that trains the committed models.
TRAIN_COMMAND = "python -m icml25.cell_diff train data/cell_diff/models.pt"
TRAINING_SEEDS = 5
#: What training one seed's three models cost on one core, measured when the committed
#: file was trained (CPU-seconds per seed printed by the command; see data/MANIFEST).
#: The file itself holds no timing, so that retraining gives its sha256 again.
TRAINING_CPU_MINUTES = 5

#: What ``python -m icml25.cell_diff train`` trains, per seed.
TRAINING = {"size": 16, "seq_len": 24, "n_train": 3000, "d": 64, "depth": 3, "heads": 4,
            "patch": 4, "steps": 3000, "batch": 48, "lr": 2e-3, "no_sequence_steps": 600,
            "regression_steps": 600}
#: The three models trained for each seed, by name.
MODELS = ("cell_diff", "no_sequence", "regression")


def build(name: str, config: dict):
    if name not in MODELS:
        raise ValueError(f"model must be one of {MODELS}; got {name!r}")
    return UnifiedNet(config["size"], config["seq_len"], config["d"], config["depth"],
                      config["heads"], config["patch"], use_sequence=name != "no_sequence")


def train_model(name: str, cells: Cells, config: dict, *, seed=0):
    """Train one model with Adam under the one-cycle policy (:mod:`icml25.common.optim`;
    rising for the first 5% of the steps, then cosine-decayed): ``cell_diff`` on the
    alternating objective, ``no_sequence`` on the image objective without residue tokens,
    ``regression`` by MSE of its direct prediction of the image from (zeros, morphology,
    sequence) at $t=0$. Returns (model, record with the loss curves ``image`` and
    ``sequence``, one value per step)."""
    torch = _torch()
    from icml25.common.optim import Adam, one_cycle

    seeds = as_generator(seed).integers(2**31, size=2)
    torch.manual_seed(int(seeds[0]))
    g = torch.Generator().manual_seed(int(seeds[1]))
    model = build(name, config)
    steps = config["steps" if name == "cell_diff" else f"{name}_steps"]
    opt = Adam(model.parameters(), lr=config["lr"])
    x0, morph, seq = _to_model(cells)
    sched = scheduler("ddpm")
    hist = {"image": [], "sequence": []}
    for step in range(steps):
        opt.lr, opt.beta1 = one_cycle(step, steps, config["lr"], pct_start=0.05)
        idx = torch.randint(0, len(cells), (config["batch"],), generator=g)
        if name == "regression":
            pred, _ = model(torch.zeros_like(x0[idx]), morph[idx], seq[idx],
                            torch.zeros(len(idx), dtype=torch.long))
            loss = img = ((pred - x0[idx]) ** 2).mean()
            sl = None
        else:
            p = 0.5 if name == "cell_diff" else 1.0
            loss, img, sl = unified_loss(model, x0[idx], morph[idx], seq[idx], g, sched, p)
        opt.zero_grad()
        loss.backward()
        opt.step()
        hist["image"].append(float(img.detach()))
        hist["sequence"].append(float(sl.detach()) if sl is not None else float("nan"))
    record = {k: np.asarray(v, np.float32) for k, v in hist.items()}
    return model.eval(), record


def train_models(seed: int, config: dict = TRAINING) -> dict:
    """Train :data:`MODELS` for training seed ``seed``: ``n_train`` cells from its stream
    ``"training cells"``, each model from its own stream ``"training <name>"`` (its
    initialisation and batches). Returns ``{name: (model, record)}``."""
    cells = make_cells(config["n_train"], config["size"], config["seq_len"],
                       seed=stream(seed, "training cells"))
    return {name: train_model(name, cells, config, seed=stream(seed, f"training {name}"))
            for name in MODELS}


def save_checkpoint(path, seeds=range(TRAINING_SEEDS), config: dict = TRAINING,
                    jobs: int = 1) -> str:
    """Train every model for every seed and save them in float16 with their loss curves
    (:func:`icml25.common.checkpoints.save`: the bytes depend only on the weights, the
    config and the curves). Returns the file's sha256."""
    results = map_seeds(partial(train_in_worker, train_models),
                        [(int(s), config) for s in seeds], jobs)
    return checkpoints.save(
        path, config=dict(config),
        seeds={s: {n: checkpoints.half(w) for n, (w, _) in r.items()} for s, r in results},
        records={s: {n: rec for n, (_, rec) in r.items()} for s, r in results})


def load_models(seed: int) -> tuple[dict, dict]:
    """The committed models of training seed ``seed``: ``{name: (model, record)}`` and the
    config. The committed file holds seeds ``0 .. TRAINING_SEEDS - 1`` (a chapter's run
    seed picks its models); another seed is a ValueError naming :data:`TRAIN_COMMAND`."""
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(CHECKPOINT))
    config = ckpt.config
    out = {}
    for name, weights in checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND).items():
        model = build(name, config)
        model.load_state_dict({k: v.float() for k, v in weights.items()})
        record = ckpt.records[seed][name]
        out[name] = (model.eval(), {k: np.asarray(v) for k, v in record.items()})
    return out, config


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.cell_diff train data/cell_diff/models.pt [--seeds 5] [--jobs 2]``."""
    train_command("python -m icml25.cell_diff", save_checkpoint, seeds=TRAINING_SEEDS,
                  argv=argv)
