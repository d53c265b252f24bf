"""The committed models: training every seed's animators and the evaluation detector, saving
and loading them (``python -m icml25.motion_transfer train data/motion_transfer/models.pt``)."""

from __future__ import annotations

import torch

from icml25.common import checkpoints
from icml25.common.checkpoints import map_seeds, train_command

from .data import _rng, make_videos
from .model import Animator, PoseDetector, train_animator, train_pose_detector

#: How the committed models were trained (``python -m icml25.motion_transfer train``).
TRAINING = dict(n_videos=400, n_frames=12, n_kp=6, width=16, batch_size=16, steps=450,
                finetune=120, lr=2e-3, equivariance=10.0, separation=1.0, bidirectional=1.0,
                detector_steps=2500)
#: The committed models (:func:`load_models`): training seeds 0-4 and the evaluation
#: detector, made by :data:`TRAIN_COMMAND` (``--seeds N`` trains seeds 0..N-1).
CHECKPOINT = "motion_transfer/models.pt"
#: The command that trains the committed models.
TRAIN_COMMAND = "python -m icml25.motion_transfer train data/motion_transfer/models.pt"


def _train_seed(args):
    import time

    seed, config = args
    torch.set_num_threads(1)
    start = time.process_time()
    frames, _, _ = make_videos(config["n_videos"], config["n_frames"], seed=[seed, 1])
    torch.manual_seed(int(_rng([seed, 2]).integers(2**31)))
    base = Animator(config["n_kp"], config["width"])
    kw = dict(batch_size=config["batch_size"], lr=config["lr"],
              equivariance=config["equivariance"], separation=config["separation"])
    h0 = train_animator(base, frames, steps=config["steps"], seed=[seed, 3], **kw)
    out = {}
    # both variants continue from the same backbone for the same number of steps; only the
    # bidirectional term differs
    for name, weight in (("plain", 0.0), ("bidirectional", config["bidirectional"])):
        model = Animator(config["n_kp"], config["width"])
        model.load_state_dict(base.state_dict())
        h = train_animator(model, frames, steps=config["finetune"], seed=[seed, 4],
                           bidirectional=weight, **dict(kw, lr=config["lr"] / 4))
        out[name] = ({k: v.detach().clone() for k, v in model.state_dict().items()},
                     dict(base=h0, finetune=h))
    print(f"seed {seed}: trained in {time.process_time() - start:.0f} CPU-s", flush=True)
    return seed, out


def train_evaluator(config: dict = TRAINING):
    """The evaluation detector, trained once (seed 1000, its own videos). Returns (detector,
    record with its loss ``history``)."""
    torch.set_num_threads(1)
    torch.manual_seed(1000)
    frames, poses, ident = make_videos(config["n_videos"], config["n_frames"], seed=1000)
    det = PoseDetector(config["width"])
    h = train_pose_detector(det, frames, poses, ident, steps=config["detector_steps"],
                            seed=1001)
    return det, dict(history=h)


def save_checkpoint(path, seeds=range(5), config: dict = TRAINING, jobs: int = 1) -> str:
    """Train the evaluation detector and, per seed, the plain and bidirectional animators;
    save the state dicts (half precision) and training records
    (:func:`icml25.common.checkpoints.save`; the detector is a ``shared`` model, its record
    ``records["evaluator"]``). Returns the file's sha256."""
    results = map_seeds(_train_seed, [(int(s), config) for s in seeds], jobs)
    det, rec = train_evaluator(config)
    records = {s: {n: r for n, (_, r) in res.items()} for s, res in results}
    records["evaluator"] = rec
    return checkpoints.save(
        path, config=dict(config),
        seeds={s: {n: checkpoints.half(w) for n, (w, _) in res.items()} for s, res in results},
        shared={"evaluator": checkpoints.half(det.state_dict())}, records=records)


def _load_state(model, state):
    model.load_state_dict({k: v.float() if v.is_floating_point() else v
                           for k, v in state.items()})
    return model.eval()


def load_models(seed: int) -> tuple[dict, object, dict]:
    """The committed animators of training seed ``seed``
    (``{"plain"|"bidirectional": (model, record)}``), the evaluation detector
    ``(model, record)`` and the training config. The committed file holds seeds 0-4 (a
    chapter loads its run's seed); another seed is an error naming :data:`TRAIN_COMMAND`."""
    from icml25.common import data as book_data

    ckpt = checkpoints.load(book_data.path(CHECKPOINT))
    state = checkpoints.seed_state(ckpt, seed, TRAIN_COMMAND)
    config = ckpt.config
    models = {name: (_load_state(Animator(config["n_kp"], config["width"]), w),
                     ckpt.records[seed][name])
              for name, w in state.items()}
    det = _load_state(PoseDetector(config["width"]), ckpt.shared["evaluator"])
    return models, (det, ckpt.records["evaluator"]), config


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.motion_transfer train data/motion_transfer/models.pt [--jobs 2]``."""
    train_command("python -m icml25.motion_transfer", save_checkpoint, seeds=5, argv=argv)
