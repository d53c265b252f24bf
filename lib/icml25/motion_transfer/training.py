"""The committed models: training every seed's animators and the evaluation detector, saving
and loading them (``python -m icml25.motion_transfer train data/motion_transfer/models.pt``)."""

from __future__ import annotations

import torch

from icml25.common.checkpoints import map_seeds, train_command
from .data import _rng, make_videos
from .model import Animator, PoseDetector, train_animator, train_pose_detector


#: How the committed models were trained (``python -m icml25.motion_transfer train``).
TRAINING = dict(n_videos=400, n_frames=12, n_kp=6, width=16, batch_size=16, steps=450,
                finetune=120, lr=2e-3, equivariance=10.0, separation=1.0, bidirectional=1.0,
                detector_steps=2500)
CHECKPOINT = "motion_transfer/models.pt"


def _train_seed(args):
    import time

    seed, config = args
    torch.set_num_threads(1)
    frames, _, _ = make_videos(config["n_videos"], config["n_frames"], seed=[seed, 1])
    torch.manual_seed(int(_rng([seed, 2]).integers(2**31)))
    base = Animator(config["n_kp"], config["width"])
    start = time.process_time()
    kw = dict(batch_size=config["batch_size"], lr=config["lr"],
              equivariance=config["equivariance"], separation=config["separation"])
    h0 = train_animator(base, frames, steps=config["steps"], seed=[seed, 3], **kw)
    cpu0 = time.process_time() - start
    out = {}
    # both variants continue from the same backbone for the same number of steps; only the
    # bidirectional term differs
    for name, weight in (("plain", 0.0), ("bidirectional", config["bidirectional"])):
        model = Animator(config["n_kp"], config["width"])
        model.load_state_dict(base.state_dict())
        start = time.process_time()
        h = train_animator(model, frames, steps=config["finetune"], seed=[seed, 4],
                           bidirectional=weight, **dict(kw, lr=config["lr"] / 4))
        rec = dict(base=h0, finetune=h, cpu_s=cpu0 + time.process_time() - start)
        out[name] = ({k: v.detach().clone() for k, v in model.state_dict().items()}, rec)
    return seed, out


def train_evaluator(config: dict = TRAINING):
    """The evaluation detector, trained once (seed 1000, its own videos)."""
    import time

    torch.set_num_threads(1)
    torch.manual_seed(1000)
    frames, poses, ident = make_videos(config["n_videos"], config["n_frames"], seed=1000)
    det = PoseDetector(config["width"])
    start = time.process_time()
    h = train_pose_detector(det, frames, poses, ident, steps=config["detector_steps"],
                            seed=1001)
    return det, dict(history=h, cpu_s=time.process_time() - start)


def save_checkpoint(path, seeds=range(5), config: dict = TRAINING, jobs: int = 1) -> None:
    """Train the evaluation detector and, per seed, the plain and bidirectional animators;
    save the state dicts (half precision) and training records."""
    results = map_seeds(_train_seed, [(int(s), config) for s in seeds], jobs)
    det, rec = train_evaluator(config)

    def half(sd):
        return {k: v.half() if v.is_floating_point() else v for k, v in sd.items()}

    seeds_out = {s: {n: (half(w), r) for n, (w, r) in res.items()} for s, res in results}
    torch.save({"config": dict(config), "seeds": seeds_out,
                "evaluator": (half(det.state_dict()), rec)}, path)


def _load_state(model, state):
    model.load_state_dict({k: v.float() if v.is_floating_point() else v
                           for k, v in state.items()})
    return model.eval()


def load_models(seed: int) -> tuple[dict, object, dict]:
    """The committed animators of ``seed`` (``{"plain"|"bidirectional": (model, record)}``),
    the evaluation detector ``(model, record)`` and the training config."""
    from icml25.common import data as book_data

    state = torch.load(book_data.path(CHECKPOINT), weights_only=True)
    if seed not in state["seeds"]:
        raise ValueError(f"the committed models cover seeds {sorted(state['seeds'])}, not "
                         f"{seed}; train more with python -m icml25.motion_transfer train")
    config = state["config"]
    models = {name: (_load_state(Animator(config["n_kp"], config["width"]), w), rec)
              for name, (w, rec) in state["seeds"][seed].items()}
    w, rec = state["evaluator"]
    det = _load_state(PoseDetector(config["width"]), w)
    return models, (det, rec), config


def main(argv=None) -> None:  # pragma: no cover
    """``python -m icml25.motion_transfer train data/motion_transfer/models.pt [--jobs 2]``."""
    train_command("python -m icml25.motion_transfer", save_checkpoint, seeds=5, argv=argv)
