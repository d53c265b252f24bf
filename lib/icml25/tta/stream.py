"""The continual stream of :mod:`icml25.tta`: domains (:func:`make_stream`), class-correlated
orders (:func:`dirichlet_order`) and the runs (:func:`run_stream`, :func:`run_streams`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from icml25.common.parallel import starmap
from icml25.common.streams import as_generator
from icml25.common.streams import stream as seed_stream

from .data import DEFAULT_DOMAINS, N_CLASSES, _check_images, corrupt
from .methods import _TTAMethod
from .model import as_batch


@dataclass(frozen=True)
class Domain:
    """One test domain: ``x`` (n, 1, H, W) float32 tensor, ``y`` (n,) int64 tensor."""

    name: str
    severity: int
    x: torch.Tensor = field(repr=False)
    y: torch.Tensor = field(repr=False)

    @property
    def label(self) -> str:
        return f"{self.name}-{self.severity}"


def make_stream(images, labels, domains: Sequence = DEFAULT_DOMAINS, severity: int = 5,
                seed: int = 0) -> list[Domain]:
    """Corrupt the test set once per domain; reuse the stream across methods so that all of them
    see the same images (8 domains x 697 images take about 0.02 s).

    ``domains`` holds corruption names (at ``severity``) or ``(name, severity)`` pairs.
    """
    x = _check_images(images)
    y = np.asarray(labels)
    if y.shape != (len(x),):
        raise ValueError(f"labels must have shape ({len(x)},), got {y.shape}")
    if not len(domains):
        raise ValueError("domains is empty")
    out = []
    for d in domains:
        name, sev = (d, severity) if isinstance(d, str) else d
        xc = corrupt(x, name, sev, seed=seed)
        out.append(Domain(name, int(sev), as_batch(xc), torch.as_tensor(y, dtype=torch.long)))
    return out


@dataclass
class StreamResult:
    """What :func:`run_stream` measured.

    ``errors[r, d]`` is the error on domain ``d`` in round ``r``; ``history[k][t]`` is the value
    of history key ``k`` at adaptation step ``t`` (drift, and SSA's g/var/step/steady);
    ``step_round[t]`` and ``step_domain[t]`` locate step ``t`` in the stream; ``adapter`` is the
    method object at the end of the stream (e.g. ``adapter.rule.S`` for SSA).
    """

    method: str
    domains: list[str]
    errors: np.ndarray
    history: dict[str, np.ndarray]
    step_round: np.ndarray
    step_domain: np.ndarray
    seconds: float
    adapter: _TTAMethod = field(repr=False, default=None)

    @property
    def mean_error(self) -> float:
        return float(self.errors.mean())


def dirichlet_order(labels, concentration: float, rng: np.random.Generator,
                    slots: int = N_CLASSES) -> np.ndarray:
    r"""A class-correlated order of ``labels``' indices (the non-i.i.d. streams of RoTTA and
    ROID): the stream is cut into ``slots`` consecutive time slots, and the images of each class
    are shared among the slots in proportions :math:`\pi_c \sim \mathrm{Dir}(\delta\,\mathbf 1)`,
    :math:`\delta` = ``concentration``; each slot is shuffled. A small :math:`\delta` (0.1)
    puts most of a class in one or two slots, so that consecutive batches hold few classes, in
    unequal numbers; :math:`\delta\to\infty` tends to the i.i.d. order."""
    y = np.asarray(labels)
    if not concentration > 0:
        raise ValueError(f"concentration must be positive, got {concentration!r}")
    if int(slots) != slots or slots < 1:
        raise ValueError(f"slots must be a positive integer, got {slots!r}")
    parts = [[] for _ in range(int(slots))]
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        cuts = (np.cumsum(rng.dirichlet(np.full(int(slots), float(concentration))))[:-1]
                * len(idx)).astype(int)
        for part, chunk in zip(parts, np.split(idx, cuts)):
            part.extend(chunk.tolist())
    return np.concatenate([rng.permutation(np.asarray(p, dtype=np.int64)) for p in parts])


def run_stream(method_factory: Callable[[], _TTAMethod], stream: Sequence[Domain], *,
               rounds: int = 1, batch_size: int = 32, seed: int = 0,
               order: str = "random", per_visit: int | None = None,
               concentration: float = 0.1) -> StreamResult:
    """Run one method continually over ``rounds`` repetitions of the domain sequence.

    ``method_factory()`` is called once; the method then sees every batch of every domain in
    turn, never reset. Each visit of a domain shows ``per_visit`` of its images (all of them
    when ``None``), a subsample drawn afresh from ``(seed, round, domain)`` at each visit, so
    that a recurring domain is met again but not image for image. Within a visit the order is
    a random permutation (``order="random"``), the images sorted by class (``"class"``), or a
    class-correlated order from :func:`dirichlet_order` with ``concentration``
    (``"dirichlet"``); it depends on ``(seed, round, domain)`` only, so every method sees the
    same batches. The error of a batch is that of the predictions made *before* the update on
    it.
    """
    if int(rounds) != rounds or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    if int(batch_size) != batch_size or batch_size < 2:
        raise ValueError(f"batch_size must be an integer >= 2, got {batch_size!r}")
    if order not in ("random", "class", "dirichlet"):
        raise ValueError(f"order must be 'random', 'class' or 'dirichlet', got {order!r}")
    if not len(stream):
        raise ValueError("stream is empty")
    smallest = min(len(dom.y) for dom in stream)
    if per_visit is not None and (int(per_visit) != per_visit
                                  or not 2 <= per_visit <= smallest):
        raise ValueError(f"per_visit must be an integer in 2..{smallest} (the smallest "
                         f"domain), got {per_visit!r}")
    if not concentration > 0:
        raise ValueError(f"concentration must be positive, got {concentration!r}")
    method = method_factory()
    errors = np.zeros((int(rounds), len(stream)))
    step_round, step_domain = [], []
    start = time.perf_counter()
    for r in range(int(rounds)):
        for d, dom in enumerate(stream):
            rng = as_generator(seed_stream(int(seed), f"visit: round {r}, domain {d}"))
            n = len(dom.y)
            visit = (np.arange(n) if per_visit is None
                     else np.sort(rng.choice(n, int(per_visit), replace=False)))
            y = dom.y.numpy()[visit]
            if order == "random":
                perm = rng.permutation(len(visit))
            elif order == "class":
                perm = np.argsort(y, kind="stable")
            else:
                perm = dirichlet_order(y, concentration, rng)
            wrong = counted = 0
            for idx in torch.as_tensor(visit[perm]).split(int(batch_size)):
                if len(idx) < 2:  # a lone leftover image has no batch statistics
                    continue
                logits = method.adapt(dom.x[idx])
                wrong += int((logits.argmax(1) != dom.y[idx]).sum())
                counted += len(idx)
                step_round.append(r)
                step_domain.append(d)
            errors[r, d] = wrong / counted
    seconds = time.perf_counter() - start
    history = {k: np.asarray(v, dtype=float) for k, v in method.history.items()}
    return StreamResult(method.name, [dom.label for dom in stream], errors, history,
                        np.asarray(step_round), np.asarray(step_domain), seconds, method)


def _run_with(method_factory, stream, kwargs) -> StreamResult:
    return run_stream(method_factory, stream, **kwargs)


def run_streams(runs: Mapping, *, n_jobs: int = 1) -> dict:
    """Run independent streams, spread over ``n_jobs`` processes; ``{key: StreamResult}``.

    ``runs`` maps a key to ``(method_factory, stream, kwargs)``, the arguments of one
    :func:`run_stream` call. Every run is deterministic given its own arguments (the factory
    deep-copies its model; the batch order comes from ``seed``), and the workers compute as this
    process does (:func:`icml25.common.parallel.starmap`: its environment, one thread), so the
    results equal those of running them one after the other.
    """
    if int(n_jobs) != n_jobs or n_jobs < 1:
        raise ValueError(f"n_jobs must be a positive integer, got {n_jobs!r}")
    keys = list(runs)
    for key in keys:
        if len(runs[key]) != 3:
            raise ValueError(f"runs[{key!r}] must be (method_factory, stream, kwargs)")
    done = starmap(_run_with, [tuple(runs[k]) for k in keys], n_jobs=int(n_jobs))
    return dict(zip(keys, done))
