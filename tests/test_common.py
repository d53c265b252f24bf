"""The floor beneath methods and book: the bootstrap API, ``as_generator`` and the validators."""

from __future__ import annotations

import numpy as np
import pytest
from icml25.common.stats import (Estimate, bootstrap_ci, bootstrap_replicates,
                                 paired_bootstrap_ci, resample_indices)
from icml25.common.streams import as_generator, stream
from icml25.common.validation import check_array, check_choice, check_int, check_scalar

# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_ci_is_the_direct_computation():
    v = np.random.default_rng(0).normal(2.0, 1.0, 57)
    est = bootstrap_ci(v, n_boot=3000, level=0.9, seed=7)
    idx = np.random.default_rng(7).integers(0, v.size, size=(3000, v.size))
    means = v[idx].mean(1)
    assert isinstance(est, Estimate)
    assert est.value == float(v.mean())
    a = (1 - 0.9) / 2
    assert est.interval == (float(np.quantile(means, a)), float(np.quantile(means, 1 - a)))
    assert (est.low, est.high) == est.interval
    m, (lo, hi) = est
    assert (m, lo, hi) == (est.value, est.low, est.high)


def test_bootstrap_ci_brackets_the_mean_and_takes_any_seed():
    v = np.random.default_rng(1).exponential(1.0, 200)
    for seed in (0, [3, 1], np.random.SeedSequence(5), stream(0, "bootstrap")):
        m, (lo, hi) = bootstrap_ci(v, n_boot=2000, seed=seed)
        assert lo < m < hi
        assert bootstrap_ci(v, n_boot=2000, seed=seed) == (m, (lo, hi))
    # a Generator is advanced in place: two calls on one stream differ, as two streams would
    g = np.random.default_rng(3)
    assert bootstrap_ci(v, n_boot=500, seed=g) != bootstrap_ci(v, n_boot=500, seed=g)


def test_bootstrap_statistic_and_replicates():
    v = np.random.default_rng(2).normal(0, 1, 41)
    est = bootstrap_ci(v, statistic=np.median, n_boot=1000, seed=4)
    assert est.value == float(np.median(v))
    boot = bootstrap_replicates(v, statistic=np.median, n_boot=1000, seed=4)
    assert boot.shape == (1000,)
    a = (1 - 0.95) / 2
    assert est.interval == (float(np.quantile(boot, a)), float(np.quantile(boot, 1 - a)))
    idx = resample_indices(41, n_boot=1000, seed=4)
    assert np.array_equal(boot, np.median(v[idx], axis=1))
    assert idx.shape == (1000, 41) and idx.min() >= 0 and idx.max() < 41


def test_bootstrap_ci_agrees_with_scipys_percentile_bootstrap():
    """The same interval as ``scipy.stats.bootstrap(method="percentile")``, up to the
    Monte-Carlo error of two independent sets of 20,000 resamples."""
    from scipy import stats as scipy_stats

    v = np.random.default_rng(5).gamma(2.0, 1.0, 60)
    ours = bootstrap_ci(v, n_boot=20_000, seed=1)  # the mean: a smooth statistic
    theirs = scipy_stats.bootstrap((v,), np.mean, n_resamples=20_000, method="percentile",
                                   random_state=np.random.default_rng(2)).confidence_interval
    se = v.std(ddof=1) / np.sqrt(v.size)  # an endpoint's Monte-Carlo error is about 0.02 se
    assert abs(ours.low - theirs.low) < 0.1 * se and abs(ours.high - theirs.high) < 0.1 * se


def test_paired_bootstrap_ci_pairs_samples_of_one_length():
    rng = np.random.default_rng(6)
    a = rng.normal(0, 1, 50)
    b = a + rng.normal(0.3, 0.1, 50)  # the same runs, measured twice
    c = rng.normal(0, 1, 30)
    paired = paired_bootstrap_ci(lambda x, y: (y - x).mean(), a, b, n_boot=2000, seed=1)
    unpaired = paired_bootstrap_ci(lambda x, y: y.mean() - x.mean(), a, b[::-1].copy(),
                                   n_boot=2000, seed=1)
    assert paired[0] < 0.3 < paired[1] and paired[1] - paired[0] < 0.1
    assert unpaired[1] - unpaired[0] > 3 * (paired[1] - paired[0])
    # one length: the draws of bootstrap_ci, one replicate at a time
    rng1, rng2 = np.random.default_rng(9), np.random.default_rng(9)
    lo, hi = paired_bootstrap_ci(np.mean, c, n_boot=50, seed=rng1)
    draws = [c[rng2.integers(0, 30, 30)].mean() for _ in range(50)]
    assert (lo, hi) == tuple(float(q) for q in np.quantile(draws, [0.025, 0.975]))
    assert paired_bootstrap_ci(lambda x, y: x.mean() + y.mean(), a, c, n_boot=10, seed=0)
    with pytest.raises(ValueError, match="at least one sample"):
        paired_bootstrap_ci(np.mean)
    with pytest.raises(ValueError, match="non-empty"):
        paired_bootstrap_ci(np.mean, [])


@pytest.mark.parametrize("bad, match", [
    ([], "non-empty array of finite values"),
    ([1.0, np.nan], "non-empty array of finite values"),
    ([1.0, np.inf], "non-empty array of finite values"),
])
def test_bootstrap_ci_refuses_bad_values(bad, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_ci(bad)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_boot=0), "n_boot must be positive"),
    (dict(n_boot=2.5), "n_boot must be an integer"),
    (dict(n_boot=True), "n_boot must be an integer"),
    (dict(level=0.0), r"level must be in \(0, 1\)"),
    (dict(level=1.0), r"level must be in \(0, 1\)"),
    (dict(level=np.nan), "level must be finite"),
    (dict(seed=None), "seed must be"),
    (dict(seed=-1), "seed must be"),
])
def test_bootstrap_ci_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        bootstrap_ci([1.0, 2.0, 3.0], **kwargs)


# --------------------------------------------------------------------------- as_generator


def test_as_generator_accepts_seeds_and_passes_a_generator_through():
    g = np.random.default_rng(0)
    assert as_generator(g) is g
    for seed in (0, 12, np.int64(3), [1, 2], (4, 5), np.array([6, 7]), np.random.SeedSequence(1),
                 stream(1, "x")):
        a, b = as_generator(seed), np.random.default_rng(seed)
        assert isinstance(a, np.random.Generator)
        assert np.array_equal(a.integers(0, 1000, 8), b.integers(0, 1000, 8))


@pytest.mark.parametrize("bad", [True, np.bool_(False), -1, [1, -2], 1.5, np.float64(2.0), "0",
                                 None, [], [1.5], object()])
def test_as_generator_refuses_what_is_not_a_seed(bad):
    with pytest.raises(ValueError, match=r"seed must be .*; got "):
        as_generator(bad)


# --------------------------------------------------------------------------- validators


def test_check_int():
    assert check_int(3, "n") == 3 and type(check_int(np.int32(3), "n")) is int
    assert check_int(0, "n", minimum=0) == 0
    assert check_int(5, "n", minimum=1, maximum=5) == 5
    for bad, match in [(True, "n must be an integer; got True"), (2.0, "must be an integer"),
                       (2.5, "must be an integer"), ("2", "must be an integer"),
                       (None, "must be an integer"), (np.array(2), "must be an integer")]:
        with pytest.raises(ValueError, match=match):
            check_int(bad, "n")
    with pytest.raises(ValueError, match="n must be positive; got 0"):
        check_int(0, "n", minimum=1)
    with pytest.raises(ValueError, match="n must be non-negative; got -1"):
        check_int(-1, "n", minimum=0)
    with pytest.raises(ValueError, match="n must be >= 2; got 1"):
        check_int(1, "n", minimum=2)
    with pytest.raises(ValueError, match=r"n must be in \[1, 5\]; got 6"):
        check_int(6, "n", minimum=1, maximum=5)
    with pytest.raises(ValueError, match="n must be <= 5; got 6"):
        check_int(6, "n", maximum=5)


def test_check_scalar():
    assert check_scalar(1, "x") == 1.0 and type(check_scalar(np.float32(0.5), "x")) is float
    assert check_scalar(0.0, "x", minimum=0) == 0.0
    assert check_scalar(1.0, "x", minimum=0, maximum=1) == 1.0
    for bad, match in [(True, "x must be a real number; got True"), ("1", "real number"),
                       (None, "real number"), (1j, "real number"), ([1.0], "real number"),
                       (np.nan, "x must be finite"), (np.inf, "x must be finite")]:
        with pytest.raises(ValueError, match=match):
            check_scalar(bad, "x")
    with pytest.raises(ValueError, match="x must be positive; got 0"):
        check_scalar(0, "x", minimum=0, open_minimum=True)
    with pytest.raises(ValueError, match="x must be non-negative; got -0.1"):
        check_scalar(-0.1, "x", minimum=0)
    with pytest.raises(ValueError, match=r"x must be in \(0, 1\); got 1.0"):
        check_scalar(1.0, "x", minimum=0, maximum=1, open_minimum=True, open_maximum=True)
    with pytest.raises(ValueError, match=r"x must be in \[0, 1\]; got 1.5"):
        check_scalar(1.5, "x", minimum=0, maximum=1)
    with pytest.raises(ValueError, match="x must be >= 1; got 0.5"):
        check_scalar(0.5, "x", minimum=1)
    with pytest.raises(ValueError, match="x must be < 2; got 2"):
        check_scalar(2, "x", maximum=2, open_maximum=True)


def test_check_array():
    a = check_array([[1, 2], [3, 4]], "A", ndim=2)
    assert a.dtype == float and a.shape == (2, 2)
    assert check_array([np.nan], "v", finite=False).shape == (1,)
    assert check_array([1, 2], "v", dtype=int).dtype.kind == "i"
    with pytest.raises(ValueError, match=r"A must be a 2-d array; got shape \(2,\)"):
        check_array([1, 2], "A", ndim=2)
    with pytest.raises(ValueError, match="v must be finite; got 1 non-finite value"):
        check_array([1.0, np.inf], "v")
    with pytest.raises(ValueError, match="v must be an array of float64"):
        check_array(["a"], "v")


def test_check_choice():
    assert check_choice("ridge", "task", ("ridge", "logistic")) == "ridge"
    assert check_choice(2, "k", range(3)) == 2
    with pytest.raises(ValueError, match=r"task must be one of \('ridge', 'logistic'\); got 'x'"):
        check_choice("x", "task", ("ridge", "logistic"))
    with pytest.raises(ValueError, match="must be one of"):
        check_choice(np.array(["ridge"]), "task", ("ridge",))
    with pytest.raises(ValueError, match="must be one of"):
        check_choice([1], "task", ("ridge",))


# --------------------------------------------------------------------------- Adam


def _train_with(optimiser_class, **settings):
    """Thirty steps of a small conv net and a parameter that has no gradient every third step."""
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
                              torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 3))
    table = torch.nn.Parameter(torch.randn(10, 5))
    params = [*net.parameters(), table]
    opt = optimiser_class(params, lr=3e-3, **settings)
    gen = torch.Generator().manual_seed(1)
    for i in range(30):
        x, y = torch.randn(16, 1, 8, 8, generator=gen), torch.randint(0, 3, (16,), generator=gen)
        loss = torch.nn.functional.cross_entropy(net(x), y)
        if i % 3:
            bags = torch.randint(0, 10, (4, 2), generator=gen)
            loss = loss + torch.nn.functional.embedding_bag(bags, table, mode="sum").sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return [p.detach().clone() for p in params]


@pytest.mark.parametrize("name, settings", [("Adam", {}), ("AdamW", {"weight_decay": 0.05})])
def test_adam_is_torch_adam_with_a_correctly_rounded_root(monkeypatch, name, settings):
    """Ours is torch's optimiser operation for operation, once torch's square root (MKL's, which
    rounds by vendor) is replaced by ours: then the weights agree bit for bit."""
    import torch
    from icml25.common import optim

    ours = _train_with(getattr(optim, name), **settings)
    with monkeypatch.context() as m:
        m.setattr(torch.Tensor, "sqrt", optim.sqrt)
        theirs = _train_with(getattr(torch.optim, name), **settings)
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs))
    assert not torch.equal(ours[-1], theirs[-1] + 1e-3)  # the comparison can fail


def test_the_root_is_correctly_rounded_as_numpys():
    """numpy's float32 root is the hardware's, correctly rounded on every CPU: ours equals it bit
    for bit, across the exponent range (zero, subnormals, the largest float, infinity)."""
    import torch
    from icml25.common.optim import sqrt

    rng = np.random.default_rng(0)
    x = np.concatenate([np.abs(rng.standard_normal(100_000)) * 10.0 ** rng.integers(-40, 38, 100_000),
                        [0.0, 1e-45, 1.2e-38, 3.4e38, np.inf]]).astype(np.float32)
    assert np.array_equal(sqrt(torch.from_numpy(x)).numpy(), np.sqrt(x))
    assert sqrt(torch.from_numpy(x)).dtype == torch.float32
    # the differentiable route (through float64) gives the same bits as the no-grad one
    widened = sqrt(torch.from_numpy(x).requires_grad_(True))
    assert widened.requires_grad and np.array_equal(widened.detach().numpy(), np.sqrt(x))
    assert sqrt(torch.tensor(2.0)).shape == ()  # a 0-d tensor stays 0-d
    strided = torch.from_numpy(x[:1000].reshape(100, 10)).T
    assert np.array_equal(sqrt(strided).numpy(), np.sqrt(x[:1000].reshape(100, 10).T))
    x64 = torch.from_numpy(x.astype(np.float64))
    assert sqrt(x64).dtype == torch.float64
    with pytest.raises(TypeError, match="floating-point tensor"):
        sqrt(torch.arange(3))
    with pytest.raises(TypeError, match="floating-point tensor"):
        sqrt(np.ones(3))


def test_the_schedules_are_torchs():
    """one_cycle and cosine give the learning rates (and beta1) of torch's schedulers, step by
    step."""
    import torch
    from icml25.common.optim import cosine, one_cycle

    steps = 40
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.Adam([p], lr=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 0.01, total_steps=steps, pct_start=0.05)
    for step in range(steps):
        lr, beta1 = one_cycle(step, steps, 0.01, pct_start=0.05)
        group = opt.param_groups[0]
        assert lr == pytest.approx(group["lr"], rel=1e-12, abs=1e-15)
        assert beta1 == pytest.approx(group["betas"][0], rel=1e-12)
        opt.step()
        sched.step()
    opt = torch.optim.Adam([p], lr=0.02)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=0.002)
    for step in range(steps):
        assert cosine(step, steps, 0.02, eta_min=0.002) == pytest.approx(
            opt.param_groups[0]["lr"], rel=1e-9)
        opt.step()
        sched.step()
    with pytest.raises(ValueError, match="step must be below"):
        one_cycle(steps, steps, 0.01)
    with pytest.raises(ValueError, match="pct_start"):
        one_cycle(0, steps, 0.01, pct_start=1.0)
    with pytest.raises(ValueError, match="total_steps"):
        cosine(0, 0, 0.01)


def test_adam_rejects_bad_settings():
    import torch
    from icml25.common.optim import Adam

    p = torch.nn.Parameter(torch.zeros(2))
    with pytest.raises(ValueError, match="at least one parameter"):
        Adam([])
    with pytest.raises(ValueError, match="lr must be"):
        Adam([p], lr=0.0)
    with pytest.raises(ValueError, match=r"betas\[1\] must be"):
        Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="real CPU tensors"):
        Adam([torch.zeros(2, dtype=torch.complex64)])


def test_starmap_keeps_the_order_and_refuses_bad_jobs():
    from icml25.common.parallel import starmap

    assert starmap(pow, [(2, 3), (3, 2), (5, 0)], n_jobs=2) == [8, 9, 1]
    assert starmap(pow, [(2, 3)], n_jobs=1) == [8]
    with pytest.raises(ValueError, match="n_jobs"):
        starmap(pow, [(2, 3)], n_jobs=0)
    with pytest.raises(ValueError, match="argument tuples"):
        starmap(pow, [[2, 3]], n_jobs=2)


def test_workers_start_in_the_background_and_are_the_ones_starmap_reuses():
    import os

    from icml25.common.parallel import start_workers, starmap

    assert start_workers(1, "json") is None
    thread = start_workers(2, "json")
    thread.join(timeout=120)
    assert not thread.is_alive()
    before = set(starmap(os.getpid, [()] * 8, n_jobs=2))
    assert os.getpid() not in before and len(before) <= 2
    with pytest.raises(ValueError, match="not one"):
        start_workers(2, "no_such_module_here")


def test_every_public_seed_goes_through_as_generator():
    """One convention for randomness in the library: a seed reaches numpy through
    ``common.streams.as_generator`` (which refuses ``None``, a float or a negative number with
    a message), never through ``np.random.default_rng`` directly, and no public function takes
    ``seed=None`` (fresh entropy, a run that no seed reproduces) as its default."""
    import ast

    from icml25.common import paths

    found = []
    for path in sorted((paths.ROOT / "lib" / "icml25").rglob("*.py")):
        rel = path.relative_to(paths.ROOT).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "default_rng" and rel != "lib/icml25/common/streams.py"):
                found.append(f"{rel}:{node.lineno}: default_rng")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
                    and not node.name.startswith("_"):
                args = node.args
                positional = args.posonlyargs + args.args
                pairs = list(zip(positional[len(positional) - len(args.defaults):],
                                 args.defaults))
                pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d]
                for arg, default in pairs:
                    if arg.arg == "seed" and isinstance(default, ast.Constant) \
                            and default.value is None:
                        found.append(f"{rel}:{node.lineno}: {node.name}(seed=None)")
    assert not found, "\n".join(found)


def test_the_bootstrap_has_one_front_door():
    """Every module reaches the bootstrap through ``icml25.common.stats``: none re-exports its
    functions, and none but it defines a function that calls itself a bootstrap and resamples
    with ``integers(0, n, ...)`` outside ``resample_indices`` (the method modules' bootstraps
    of clusters, genes or initialisations are their own statistics, built on its draw)."""
    import ast

    from icml25.common import paths

    names = {"bootstrap_ci", "bootstrap_replicates", "paired_bootstrap_ci", "resample_indices"}
    found = []
    for path in sorted((paths.ROOT / "lib" / "icml25").rglob("*.py")):
        rel = path.relative_to(paths.ROOT).as_posix()
        if rel == "lib/icml25/common/stats.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
                exported = {e.value for e in getattr(node.value, "elts", [])
                            if isinstance(e, ast.Constant)}
                found += [f"{rel}: re-exports {n}" for n in sorted(exported & names)]
    assert not found, "\n".join(found)

