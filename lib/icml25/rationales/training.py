r"""Training the models, and the committed models of seeds 0-4."""

from __future__ import annotations

from functools import partial

import numpy as np

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_in_worker
from icml25.common.streams import as_generator

from .concepts import load_concept_embeddings
from .models import (
    ConceptClassifier,
    RationaleModel,
    SmallUNet,
    _torch,
    align_loss,
    disentangle_loss,
    segmentation_loss,
)
from .phantoms import Phantoms, make_phantoms, standardise


def _tensors(data: Phantoms):
    torch = _torch()
    return dict(x=torch.as_tensor(standardise(data.images)),
                zones=torch.as_tensor(data.zones.astype(np.int64)),
                lesion=torch.as_tensor(data.lesion.astype(np.float32)),
                lesion_masks=torch.as_tensor(data.lesion_masks),
                attributes=torch.as_tensor(data.attributes.astype(np.int64)),
                labels=torch.as_tensor(data.labels.astype(np.float32)))


def train(model, data: Phantoms, *, epochs: int = 10, batch_size: int = 32, lr: float = 3e-3,
          align: float = 1.0, disentangle: float = 1.0, concept: float = 1.0, seed=0,
          tau: float = 0.1) -> list:
    r"""Train ``model`` on ``data`` with Adam under the one-cycle policy
    (:mod:`icml25.common.optim`); returns the mean loss of every epoch.

    * :class:`SmallUNet`: :func:`segmentation_loss`.
    * :class:`RationaleModel`: :math:`\mathcal L_\mathrm{seg} + \lambda_a\mathcal L_\mathrm{align}
      + \lambda_d\mathcal L_\mathrm{disen}` (``align``, ``disentangle``).
    * :class:`ConceptClassifier`: :math:`\mathcal L_\mathrm{seg} + \lambda_c\,\mathrm{BCE}`
      of the concept logits against the image's concepts (``concept``).
    """
    torch = _torch()
    from icml25.common.optim import Adam, one_cycle

    if epochs < 1 or batch_size < 1 or lr <= 0:
        raise ValueError("epochs, batch_size and lr must be positive, got "
                         f"{epochs}, {batch_size}, {lr}")
    if not isinstance(model, (SmallUNet, RationaleModel, ConceptClassifier)):
        raise ValueError(f"cannot train a {type(model).__name__}")
    torch.manual_seed(int(as_generator(seed).integers(2**31)))
    tensors = _tensors(data)
    order_rng = as_generator(seed)
    opt = Adam(model.parameters(), lr=lr)
    total_steps, step = epochs * int(np.ceil(len(data) / batch_size)), 0
    history = []
    model.train()
    for _ in range(epochs):
        total, count = 0.0, 0
        for idx in np.array_split(order_rng.permutation(len(data)),
                                  int(np.ceil(len(data) / batch_size))):
            b = {k: v[idx] for k, v in tensors.items()}
            if isinstance(model, SmallUNet):
                zone, les, _ = model(b["x"])
                loss = segmentation_loss(zone, les, b["zones"], b["lesion"])
            elif isinstance(model, RationaleModel):
                zone, les, e = model(b["x"])
                loss = segmentation_loss(zone, les, b["zones"], b["lesion"])
                t = model.concept_vectors()
                if align:
                    loss = loss + align * align_loss(e, t, b["lesion_masks"], b["attributes"],
                                                     tau)
                if disentangle:
                    loss = loss + disentangle * disentangle_loss(t)
            else:
                zone, les, logits = model(b["x"])
                loss = (segmentation_loss(zone, les, b["zones"], b["lesion"])
                        + concept * torch.nn.functional.binary_cross_entropy_with_logits(
                            logits, b["labels"]))
            opt.zero_grad()
            loss.backward()
            opt.lr, opt.beta1 = one_cycle(step, total_steps, lr)  # torch's OneCycleLR
            opt.step()
            step += 1
            total += loss.item() * len(idx)
            count += len(idx)
        history.append(total / count)
    model.eval()
    return history


#: How the committed models were trained (``python -m icml25.rationales train``).
TRAINING = dict(size=32, n_train=600, n_low=150, epochs=30, batch_size=32, lr=3e-3, width=8,
                dim=16, tau=0.1, align=1.0, disentangle=1.0, concept=1.0)
#: The models of one seed: name, class, training set, loss weights.
MODELS = {
    "rationale": ("RationaleModel", "full", {}),
    "unet": ("SmallUNet", "full", {}),
    "classifier": ("ConceptClassifier", "full", {}),
    "rationale_low": ("RationaleModel", "low", {}),
    "unet_low": ("SmallUNet", "low", {}),
    "align_only": ("RationaleModel", "full", {"disentangle": 0.0}),
}
#: The committed models (:func:`load_models`): training seeds 0-4, made by
#: :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1).
CHECKPOINT = "rationales/models.pt"
#: The command that trains the committed models.
TRAIN_COMMAND = "python -m icml25.rationales train data/rationales/models.pt"
#: What training the committed file cost on one core, measured when it was trained (about
#: 275 CPU-seconds per seed, five seeds).
#: The file itself holds no timing, so that retraining gives its sha256 again.
TRAINING_CPU_MINUTES = 23


def build(kind: str, text, config: dict):
    """A fresh model of ``kind`` (a name in :data:`MODELS`'s first column)."""
    if kind == "RationaleModel":
        return RationaleModel(text, config["width"], config["dim"])
    if kind == "SmallUNet":
        return SmallUNet(config["width"])
    if kind == "ConceptClassifier":
        return ConceptClassifier(config["width"])
    raise ValueError(f"unknown model kind {kind!r}")


def train_models(seed: int, config: dict = TRAINING, text=None, names=None) -> dict:
    """Train the models of :data:`MODELS` for one seed on ``make_phantoms(n_train, size,
    seed=[seed, 1])`` (the low-data models on its first ``n_low`` images, for the same number
    of optimisation steps). Returns ``{name: (model, record)}``, the record holding the loss of
    every epoch (``history``), ``n_train`` and ``epochs``."""
    torch = _torch()
    text = load_concept_embeddings() if text is None else text
    full = make_phantoms(config["n_train"], config["size"], seed=[seed, 1])
    sets = {"full": full, "low": full.subset(slice(0, config["n_low"]))}
    out = {}
    for j, name in enumerate(names or MODELS):
        kind, which, weights = MODELS[name]
        data = sets[which]
        epochs = config["epochs"] * (config["n_train"] // len(data))
        torch.manual_seed(int(as_generator([seed, 10, j]).integers(2**31)))
        model = build(kind, text, config)
        kw = {k: config[k] for k in ("align", "disentangle", "concept", "tau")} | weights
        history = train(model, data, epochs=epochs, batch_size=config["batch_size"],
                        lr=config["lr"], seed=[seed, 11, j], **kw)
        out[name] = (model, dict(history=history, n_train=len(data), epochs=epochs))
    return out


def save_checkpoint(path, seeds=range(5), config: dict = TRAINING, jobs: int = 1) -> str:
    """Train every model for every seed and save the state dicts (float32) and training
    records (:func:`icml25.common.checkpoints.save`). Returns the file's sha256."""
    results = map_seeds(partial(train_in_worker, train_models),
                        [(int(s), config) for s in seeds], jobs)
    return checkpoints.save(
        path, config=dict(config),
        seeds={s: {n: w for n, (w, _) in r.items()} for s, r in results},
        records={s: {n: rec for n, (_, rec) in r.items()} for s, r in results})


def load_models(seed: int, text=None) -> tuple[dict, dict]:
    """The committed models of training seed ``seed`` (``{name: (model, record)}``) and the
    training config. The committed file holds seeds 0-4 (a chapter loads its run's seed);
    another seed is an error naming :data:`TRAIN_COMMAND`."""
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(CHECKPOINT))
    state = checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND)
    text = load_concept_embeddings() if text is None else text
    config = ckpt.config
    out = {}
    for name, weights in state.items():
        model = build(MODELS[name][0], text, config)
        model.load_state_dict(weights)
        out[name] = (model.eval(), ckpt.records[seed][name])
    return out, config


#: The training of the chapters' paper mode (they call :func:`train_models` with it):
#: larger phantoms, five times the images, trained live.
PAPER_TRAINING = dict(TRAINING, size=48, n_train=3000, n_low=750, epochs=40)
