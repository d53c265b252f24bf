"""Tests of icml25.tta: data and corruptions, the source model, the online TTA methods (what each
may change, the filters, SSA's step rule on synthetic update streams) and the continual stream."""

import copy
import math

import numpy as np
import pytest
import torch

from icml25 import tta
from icml25.common.mnist import mnist_5k

torch.set_num_threads(1)

DATA = tta.load_digits16(seed=0)
X_TRAIN, Y_TRAIN, X_TEST, Y_TEST = DATA
SMALL = X_TEST[:48]
RANDOM_CORRUPTIONS = ("gaussian_noise", "shot_noise", "impulse_noise", "fog", "elastic")


@pytest.fixture(scope="module")
def source():
    return tta.train_source(X_TRAIN, Y_TRAIN, seed=0)


def state(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


# ---------------------------------------------------------------- data and corruptions


def test_digits_are_16px_in_unit_range_and_split_by_seed():
    assert X_TRAIN.shape == (1100, 16, 16) and X_TEST.shape == (697, 16, 16)
    assert X_TRAIN.dtype == np.float32 and 0 <= X_TRAIN.min() and X_TRAIN.max() <= 1
    assert set(np.unique(Y_TEST)) == set(range(10))
    again = tta.load_digits16(seed=0)
    assert all(np.array_equal(a, b) for a, b in zip(DATA, again))
    assert not np.array_equal(tta.load_digits16(seed=1)[3], Y_TEST)


@pytest.mark.parametrize("name", tta.CORRUPTIONS)
def test_corruption_keeps_shape_range_and_is_deterministic(name):
    out = tta.corrupt(SMALL, name, 3, seed=5)
    assert out.shape == SMALL.shape and out.dtype == SMALL.dtype
    assert out.min() >= 0.0 and out.max() <= 1.0 and np.isfinite(out).all()
    assert np.array_equal(out, tta.corrupt(SMALL, name, 3, seed=5))
    if name in RANDOM_CORRUPTIONS:
        assert not np.array_equal(out, tta.corrupt(SMALL, name, 3, seed=6))


@pytest.mark.parametrize("name", tta.CORRUPTIONS)
def test_corruption_changes_images_more_at_higher_severity(name):
    change = [np.abs(tta.corrupt(SMALL, name, s, seed=0) - SMALL).mean() for s in range(1, 6)]
    assert change[0] > 0.005
    assert all(b > a for a, b in zip(change, change[1:])), change


def test_corruption_does_not_modify_its_input():
    x = SMALL.copy()
    tta.corrupt(x, "gaussian_noise", 5)
    assert np.array_equal(x, SMALL)


@pytest.mark.parametrize("args, message", [
    ((SMALL, "snow", 1), "unknown corruption"),
    ((SMALL, "fog", 0), "severity"),
    ((SMALL, "fog", 6), "severity"),
    ((SMALL, "fog", 2.5), "severity"),
    ((SMALL, "fog", True), "severity"),
    ((SMALL[0], "fog", 1), "shape"),
    ((SMALL[:, None], "fog", 1), "shape"),
    ((SMALL * 2, "fog", 1), r"\[0, 1\]"),
    (((SMALL * 16).astype(int), "fog", 1), "floating"),
])
def test_corrupt_rejects_bad_input(args, message):
    with pytest.raises(ValueError, match=message):
        tta.corrupt(*args)


# ---------------------------------------------------------------- source model


def test_source_model_is_small_and_accurate(source):
    n_params = sum(p.numel() for p in source.parameters())
    assert 10_000 <= n_params <= 30_000
    assert not source.training
    assert tta.accuracy(source, X_TEST, Y_TEST) > 0.9


def test_source_training_is_deterministic_and_leaves_global_rng_alone():
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    a = tta.train_source(X_TRAIN[:200], Y_TRAIN[:200], epochs=2, seed=3)
    assert torch.rand(1) == before  # the global torch RNG was not advanced
    b = tta.train_source(X_TRAIN[:200], Y_TRAIN[:200], epochs=2, seed=3)
    c = tta.train_source(X_TRAIN[:200], Y_TRAIN[:200], epochs=2, seed=4)
    sa, sb, sc = state(a), state(b), state(c)
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not all(torch.equal(sa[k], sc[k]) for k in sa)


@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=0.0), "lr must be positive"),
    (dict(epochs=0), "epochs"),
])
def test_train_source_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.train_source(X_TRAIN[:10], Y_TRAIN[:10], **kwargs)


def test_mlp_source_is_deterministic_and_only_its_batchnorm_adapts():
    kw = dict(epochs=2, widths=(32, 16), seed=3, architecture="mlp")
    a = tta.train_source(X_TRAIN[:200], Y_TRAIN[:200], **kw)
    b = tta.train_source(X_TRAIN[:200], Y_TRAIN[:200], **kw)
    assert isinstance(a, tta.SmallMLP) and not a.training
    sa, sb = state(a), state(b)
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert sum(2 * m.num_features for m in tta._bn_layers(a)) == 2 * (32 + 16)
    method = tta.SSA(a)
    for x in BATCHES:
        assert method.adapt(x).shape == (len(x), tta.N_CLASSES)
    after = state(method.model)
    changed = {k for k in sa if k in after and not torch.equal(sa[k], after[k])}
    affine = {f"{n}.{p}" for n, m in a.named_modules()
              if isinstance(m, torch.nn.BatchNorm1d) for p in ("weight", "bias")}
    assert changed and changed <= affine
    assert all(torch.equal(sa[k], state(a)[k]) for k in sa)  # the source is untouched


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_pixels=0), "positive integers"),
    (dict(n_pixels=256, widths=()), "at least one width"),
    (dict(n_pixels=256, widths=(8.5,)), "positive integers"),
])
def test_small_mlp_rejects_bad_sizes(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.SmallMLP(**kwargs)


def test_train_source_rejects_an_unknown_architecture():
    with pytest.raises(ValueError, match="architecture must be one of"):
        tta.train_source(X_TRAIN[:10], Y_TRAIN[:10], architecture="resnet")


# ---------------------------------------------------------------- what each method may change

BATCHES = [torch.as_tensor(tta.corrupt(X_TEST[i:i + 32], "gaussian_noise", 5))[:, None]
           for i in (0, 32, 64)]
GRADIENT_METHODS = [tta.Tent, tta.ROID, tta.CMF, tta.SSA]


def affine_keys(model):
    return {f"{n}.{p}" for n, m in model.named_modules()
            if isinstance(m, torch.nn.BatchNorm2d) for p in ("weight", "bias")}


@pytest.mark.parametrize("cls", [tta.Source, tta.BNStats, *GRADIENT_METHODS])
def test_methods_leave_the_source_model_untouched(source, cls):
    before = state(source)
    method = cls(source)
    for x in BATCHES:
        logits = method.adapt(x)
        assert logits.shape == (32, 10) and not logits.requires_grad
    after = state(source)
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_source_method_changes_nothing(source):
    method = tta.Source(source)
    before = state(method.model)
    first = method.adapt(BATCHES[0])
    for x in BATCHES[1:]:
        method.adapt(x)
    after = state(method.model)
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert torch.equal(first, method.adapt(BATCHES[0]))


def test_bn_stats_changes_only_running_statistics(source):
    method = tta.BNStats(source)
    before = {k: v.clone() for k, v in method.model.named_parameters()}
    method.adapt(BATCHES[0])
    assert all(torch.equal(before[k], v) for k, v in method.model.named_parameters())
    with torch.no_grad():
        eval_logits = source(BATCHES[1])
    assert not torch.allclose(method.adapt(BATCHES[1]), eval_logits)  # batch statistics are used


@pytest.mark.parametrize("cls", GRADIENT_METHODS)
def test_gradient_methods_change_only_batchnorm_affine_parameters(source, cls):
    method = cls(source, lr=5e-2)
    before = {k: v.clone() for k, v in method.model.named_parameters()}
    for x in BATCHES:
        method.adapt(x)
    after = dict(method.model.named_parameters())
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed == affine_keys(method.model)
    assert not any(b.numel() for b in method.model.buffers())  # no running statistics kept
    assert len(method.history["drift"]) == len(BATCHES)


def test_adapted_affine_parameters_are_what_flat_reports(source):
    method = tta.Tent(source)
    method.adapt(BATCHES[0])
    params = torch.cat([v.reshape(-1) for k, v in method.model.named_parameters()
                        if k in affine_keys(method.model)])
    assert torch.equal(params, method.flat())
    assert method.flat().numel() == 160


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_flat_sgd_step_matches_torch_optim_sgd(source, momentum):
    # The peer: torch.optim.SGD (Nesterov when momentum > 0) on a copy of the same model, fed
    # the same batches; TENT keeps its proposal, so the weights must agree step by step.
    method = tta.Tent(source, lr=0.05, momentum=momentum)
    peer = copy.deepcopy(method.model)
    params = [p for m in tta._bn_layers(peer) for p in (m.weight, m.bias)]
    opt = torch.optim.SGD(params, lr=0.05, momentum=momentum, nesterov=momentum > 0)
    for x in BATCHES[:4]:
        method.adapt(x)
        opt.zero_grad()
        peer_logits = peer(tta.as_batch(x))
        (-(peer_logits.softmax(1) * peer_logits.log_softmax(1)).sum(1).mean()).backward()
        opt.step()
        peer_theta = torch.cat([p.detach().reshape(-1) for p in params])
        torch.testing.assert_close(method.flat(), peer_theta, rtol=1e-6, atol=1e-7)
    assert not torch.equal(method.flat(), method.theta_src)


def test_bind_makes_the_parameters_views_of_theta(source):
    method = tta.Tent(source)
    method.set_flat(method.theta_src + 1.0)
    layer = tta._bn_layers(method.model)[0]
    n = layer.weight.numel()
    assert torch.equal(layer.weight.detach(), method.theta_src[:n] + 1.0)
    with pytest.raises(TypeError, match="non-empty list"):
        method.bind([])


@pytest.mark.parametrize("cls", [tta.ROID, tta.CMF, tta.SSA])
def test_filters_keep_weights_between_source_and_sgd_proposal(source, cls):
    method = cls(source, lr=1e-2)
    src = method.theta_src.clone()
    proposal = src + torch.linspace(-1, 1, src.numel())
    theta = method.filter_update(src, proposal)
    lo, hi = torch.minimum(src, proposal), torch.maximum(src, proposal)
    assert (theta >= lo - 1e-6).all() and (theta <= hi + 1e-6).all()
    assert not torch.equal(theta, proposal)  # the filter did pull toward the source
    assert torch.equal(method.flat(), theta)


def test_filters_bound_the_drift_of_a_constant_push(source):
    # A constant update direction makes plain SGD drift linearly; the source pull of ROID and the
    # dual filter of CMF hold it at a bounded distance (CMF's bound is ~7x ROID's).
    push = 1e-2 * torch.ones(160)
    drift = {}
    for cls in (tta.Tent, tta.ROID, tta.CMF):
        method = cls(source)
        for _ in range(3000):
            theta = method.flat()
            method.filter_update(theta, theta + push)
        drift[cls.name] = np.asarray(method.history["drift"])
    unbounded = drift["TENT"]
    assert unbounded[-1] == pytest.approx(3000 * float(push.norm()), rel=1e-3)
    for name in ("ROID", "CMF"):
        d = drift[name]
        assert d[-1] < 0.5 * unbounded[-1]
        assert d[-1] - d[-500] < 0.05 * d[-1]  # settled
    assert drift["ROID"][-1] == pytest.approx(99 * float(push.norm()), rel=1e-3)
    # CMF's fixed point, (1-b)/(k b (1-a)) + (1-k)/k = 737.3 pushes, approached from below
    cmf_fixed_point = 0.06 / (0.01 * 0.94 * 0.01) + 99
    assert 0.95 * cmf_fixed_point < drift["CMF"][-1] / float(push.norm()) < cmf_fixed_point


def test_cmf_dual_filter_matches_its_formula(source):
    method = tta.CMF(source, alpha=0.9, beta=0.8, kappa=0.3)
    src = method.theta_src.clone()
    t1 = src + 1.0
    h1 = 0.8 * (0.9 * src + 0.1 * src) + 0.2 * t1
    theta1 = method.filter_update(src, t1)
    assert torch.allclose(theta1, 0.7 * t1 + 0.3 * h1)
    t2 = theta1 - 0.5
    h2 = 0.8 * (0.9 * h1 + 0.1 * src) + 0.2 * t2
    assert torch.allclose(method.filter_update(theta1, t2), 0.7 * t2 + 0.3 * h2)


# ---------------------------------------------------------------- SSA's step rule


def expected_steps(g, lr, n, S=None, S_rel=1.0, threshold=math.sqrt(2), scale_buffer=True):
    """An independent, literal re-statement of the rule for the tests."""
    buf, steady, out = [], False, []
    for gt in g:
        step = 1.0
        if len(buf) >= n:
            var = np.var(buf[-n:] + [gt])
            if S is None:
                S = S_rel * lr ** 2 * var
            proposal = math.sqrt(S / (lr ** 2 * var))
            steady = steady or proposal < threshold
            if steady:
                step = proposal
        out.append((step, steady))
        buf.append(step * gt if scale_buffer else gt)
    return out


def test_step_is_one_until_the_buffer_fills_then_relative_s_starts_at_one():
    rng = np.random.default_rng(0)
    g = 1.0 + 0.1 * rng.standard_normal(60)
    rule = tta.SteadyStateRule(lr=0.01, buffer_size=20)
    steps = [rule.observe(x) for x in g]
    assert steps[:20] == [1.0] * 20
    assert steps[20] == pytest.approx(1.0)  # S_rel = 1: S = lr^2 var at the first full buffer
    assert rule.steady
    assert rule.S == pytest.approx(0.01 ** 2 * np.var(np.append(g[:20], g[20])))
    for got, (want, _) in zip(steps, expected_steps(g, 0.01, 20)):
        assert got == pytest.approx(want, rel=1e-9)


def test_steady_step_follows_the_formula_with_absolute_s_and_the_switch_is_sticky():
    rng = np.random.default_rng(1)
    lr, n, S = 0.02, 16, 1e-6
    # quiet updates (proposal > sqrt 2: no switch), then loud ones (switch), then quiet again:
    # once steady, the step follows the proposal even above sqrt 2.
    noise = np.concatenate([np.full(40, 0.01), np.full(40, 0.2), np.full(60, 0.005)])
    g = 0.3 + noise * rng.standard_normal(len(noise))
    rule = tta.SteadyStateRule(lr=lr, buffer_size=n, S=S)
    got = []
    for x in g:
        step = rule.observe(x)
        got.append((step, rule.steady, rule.var))
    want = expected_steps(g, lr, n, S=S)
    for (step, steady, var), (w_step, w_steady) in zip(got, want):
        assert steady == w_steady
        assert step == pytest.approx(w_step, rel=1e-9)
        if steady:
            assert step == pytest.approx(math.sqrt(S / (lr ** 2 * var)), rel=1e-12)
    switch = next(t for t, (_, s, _) in enumerate(got) if s)
    assert 40 <= switch < 80
    assert all(s for _, s, _ in got[switch:])
    assert max(step for step, _, _ in got[switch:]) > math.sqrt(2)


def test_unscaled_buffer_variant_matches_ssa_theory():
    g = np.random.default_rng(2).standard_normal(50)
    rule = tta.SteadyStateRule(lr=0.1, buffer_size=10, S_rel=0.5, scale_buffer=False)
    steps = [rule.observe(x) for x in g]
    want = expected_steps(g, 0.1, 10, S_rel=0.5, scale_buffer=False)
    assert steps == pytest.approx([w for w, _ in want], rel=1e-9)
    np.testing.assert_allclose(rule.buffer, g[-10:])


def test_ssa_rescales_known_parameter_updates(source):
    lr, n = 0.01, 12
    method = tta.SSA(source, lr=lr, buffer_size=n, S_rel=0.25)
    rng = np.random.default_rng(3)
    g_true = 0.5 + 0.2 * rng.standard_normal(40)
    want = expected_steps(g_true, lr, n, S_rel=0.25)
    for t, g in enumerate(g_true):
        theta_prev = method.flat()
        # every coordinate moves by -lr * g (+ a zero-mean pattern, which leaves the mean alone)
        pattern = torch.linspace(-1, 1, theta_prev.numel()) * 1e-3
        theta_sgd = theta_prev - lr * float(g) + pattern
        h_before = method.hidden.clone()
        theta = method.filter_update(theta_prev, theta_sgd)
        step = method.history["step"][-1]
        assert method.history["g"][-1] == pytest.approx(g, rel=1e-4)
        assert step == pytest.approx(want[t][0], rel=1e-3)
        assert bool(method.history["steady"][-1]) == want[t][1]
        pred = theta_prev + step * (theta_sgd - theta_prev)
        h = 0.94 * (0.99 * h_before + 0.01 * method.theta_src) + 0.06 * pred
        assert torch.allclose(theta, 0.99 * pred + 0.01 * h, atol=1e-6)
    steps = np.asarray(method.history["step"])
    assert (steps[:n] == 1).all() and steps[n] == pytest.approx(0.5, rel=1e-3)  # sqrt(S_rel)
    assert np.isnan(method.history["var"][0]) and np.isfinite(method.history["var"][1:]).all()


@pytest.mark.parametrize("kwargs, message", [
    (dict(lr=0.0), "lr must be positive"),
    (dict(lr=-1e-3), "lr must be positive"),
    (dict(lr=1e-3, buffer_size=1), "buffer_size"),
    (dict(lr=1e-3, S=0.0), "S must be positive"),
    (dict(lr=1e-3, S_rel=-1.0), "S_rel must be positive"),
    (dict(lr=1e-3, S=1e-12, S_rel=2.0), "not both"),
])
def test_steady_state_rule_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.SteadyStateRule(**kwargs)


@pytest.mark.parametrize("cls", GRADIENT_METHODS)
def test_gradient_methods_reject_non_positive_lr(source, cls):
    for lr in (0.0, -0.1):
        with pytest.raises(ValueError, match="lr must be positive"):
            cls(source, lr=lr)


@pytest.mark.parametrize("kwargs", [dict(kappa=1.5), dict(alpha=-0.1), dict(beta=2.0)])
def test_cmf_rejects_weights_outside_unit_interval(source, kwargs):
    with pytest.raises(ValueError, match=r"must be in \[0, 1\]"):
        tta.CMF(source, **kwargs)


@pytest.mark.parametrize("cls", [tta.Source, tta.BNStats, *GRADIENT_METHODS])
@pytest.mark.parametrize("bad", [np.zeros((4, 16), np.float32),
                                 np.zeros((4, 3, 16, 16), np.float32),
                                 np.zeros((4, 16, 16), np.int64)])
def test_methods_reject_badly_shaped_batches(source, cls, bad):
    with pytest.raises(ValueError, match="images must"):
        cls(source).adapt(bad)


def test_batch_statistics_methods_reject_a_single_image(source):
    for cls in (tta.BNStats, tta.Tent):
        with pytest.raises(ValueError, match="at least 2 images"):
            cls(source).adapt(BATCHES[0][:1])


# ---------------------------------------------------------------- the continual stream


@pytest.fixture(scope="module")
def stream():
    return tta.make_stream(X_TEST[:100], Y_TEST[:100], domains=["gaussian_noise", ("fog", 3)])


def test_make_stream_builds_the_requested_domains(stream):
    assert [d.label for d in stream] == ["gaussian_noise-5", "fog-3"]
    assert stream[0].x.shape == (100, 1, 16, 16) and stream[0].y.dtype == torch.long
    np.testing.assert_array_equal(stream[1].x[:, 0].numpy(), tta.corrupt(X_TEST[:100], "fog", 3))


def test_run_stream_reports_errors_and_histories(source, stream):
    result = tta.run_stream(lambda: tta.SSA(source, buffer_size=4), stream, rounds=2, batch_size=32)
    assert result.errors.shape == (2, 2) and ((0 <= result.errors) & (result.errors <= 1)).all()
    n_steps = 2 * 2 * 4  # 100 images in batches of 32: 32, 32, 32, 4
    assert result.step_round.shape == result.step_domain.shape == (n_steps,)
    assert set(result.history) == {"drift", "g", "var", "step", "steady"}
    assert all(v.shape == (n_steps,) for v in result.history.values())
    assert result.domains == ["gaussian_noise-5", "fog-3"]
    assert result.adapter.rule.S is not None and len(result.adapter.rule.buffer) == 4
    again = tta.run_stream(lambda: tta.SSA(source, buffer_size=4), stream, rounds=2, batch_size=32)
    assert np.array_equal(result.errors, again.errors)
    assert np.array_equal(result.history["drift"], again.history["drift"])


def test_source_error_is_the_same_in_every_round_and_matches_accuracy(source, stream):
    result = tta.run_stream(lambda: tta.Source(source), stream, rounds=2, batch_size=25)
    assert np.array_equal(result.errors[0], result.errors[1])
    expected = 1 - tta.accuracy(source, stream[0].x, stream[0].y)
    assert result.errors[0, 0] == pytest.approx(expected)


def test_adaptation_helps_on_a_corrupted_stream(source, stream):
    errors = {cls.name: tta.run_stream(lambda: cls(source), stream[:1], batch_size=25).mean_error
              for cls in (tta.Source, tta.BNStats)}
    assert errors["BN stats"] < errors["Source"] - 0.2


@pytest.mark.parametrize("kwargs, message", [
    (dict(rounds=0), "rounds"),
    (dict(batch_size=1), "batch_size"),
    (dict(order="sorted"), "order"),
    (dict(per_visit=1), "per_visit"),
    (dict(per_visit=101), "per_visit"),
    (dict(per_visit=2.5), "per_visit"),
    (dict(order="dirichlet", concentration=0.0), "concentration"),
])
def test_run_stream_rejects_bad_arguments(source, stream, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.run_stream(lambda: tta.Source(source), stream, **kwargs)


def test_constant_updates_are_left_alone_and_relative_s_waits_for_noise():
    rule = tta.SteadyStateRule(lr=0.1, buffer_size=5)
    assert [rule.observe(0.3) for _ in range(12)] == [1.0] * 12
    assert rule.S is None and not rule.steady
    rule.observe(0.5)
    assert rule.S is not None and rule.steady


# ---------------------------------------------------------------- the harder stream


def test_mnist_subset_is_cropped_stratified_and_split_by_seed():
    x_tr, y_tr, x_te, y_te = tta.load_mnist(seed=0)
    assert x_tr.shape == (3000, 20, 20) and x_te.shape == (2000, 20, 20)
    assert x_tr.dtype == np.float32 and 0 <= x_tr.min() and x_tr.max() == 1
    assert np.array_equal(np.bincount(y_tr), [300] * 10)
    assert np.array_equal(np.bincount(y_te), [200] * 10)
    # the crop keeps the digits: MNIST's 4-pixel border holds about 3% of the ink
    full = mnist_5k()[0].reshape(-1, 28, 28)
    assert 0.95 < full[:, 4:24, 4:24].sum() / full.sum() < 1
    again = tta.load_mnist(seed=0)
    assert np.array_equal(again[0], x_tr) and np.array_equal(again[3], y_te)
    assert not np.array_equal(tta.load_mnist(seed=1)[1], y_tr)
    assert tta.load_mnist(seed=0, n_train=100, crop=28)[0].shape == (100, 28, 28)
    # a named stream of a run seed is a 63-bit integer: the split takes it
    big = tta.load_mnist(seed=2**63 - 1)
    assert np.array_equal(np.bincount(big[1]), [300] * 10)
    assert not np.array_equal(big[1], y_tr)


@pytest.mark.parametrize("kwargs, message", [
    (dict(n_train=5), "n_train"), (dict(n_train=4995), "n_train"),
    (dict(crop=6), "crop"), (dict(crop=30), "crop"),
])
def test_load_mnist_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.load_mnist(**kwargs)


def test_ema_batchnorm_follows_its_formula(source):
    model = tta.ema_statistics(source, momentum=0.2)
    layer = tta._bn_layers(model)[0]
    assert isinstance(layer, tta.EMABatchNorm2d) and layer.ema_momentum == 0.2
    mean0, var0 = layer.running_mean.clone(), layer.running_var.clone()
    z = torch.randn(8, layer.num_features, 5, 5) * 2 + 1
    out = layer(z)
    mean = 0.8 * mean0 + 0.2 * z.mean(dim=(0, 2, 3))
    var = 0.8 * var0 + 0.2 * z.var(dim=(0, 2, 3), unbiased=False)
    torch.testing.assert_close(layer.running_mean, mean)
    torch.testing.assert_close(layer.running_var, var)
    expected = ((z - mean[None, :, None, None]) / torch.sqrt(var + layer.eps)[None, :, None, None]
                * layer.weight[None, :, None, None] + layer.bias[None, :, None, None])
    torch.testing.assert_close(out, expected)
    # the same in train mode; the source model is untouched
    layer.train()
    layer(z)
    assert not torch.equal(layer.running_mean, mean)
    assert all(type(m) is torch.nn.BatchNorm2d for m in tta._bn_layers(source))


def test_ema_statistics_moves_a_share_of_the_way_on_one_class_batches(source):
    # a batch of one class pulls robust BN's statistics by the momentum only, while plain
    # test-batch normalisation takes them whole
    ones = torch.as_tensor(X_TEST[Y_TEST == 1][:32])
    plain, robust = tta.BNStats(source), tta.BNStats(tta.ema_statistics(source, 0.05))
    before = tta._bn_layers(robust.model)[0].running_mean.clone()
    robust.adapt(ones)
    after = tta._bn_layers(robust.model)[0].running_mean
    with torch.no_grad():
        first = source.features[0](tta.as_batch(ones).contiguous(
            memory_format=torch.channels_last))
    torch.testing.assert_close(after, 0.95 * before + 0.05 * first.mean(dim=(0, 2, 3)))
    assert plain.adapt(ones).shape == (32, 10)


def test_tent_adapts_affine_parameters_and_keeps_ema_statistics(source, stream):
    method = tta.Tent(tta.ema_statistics(source), lr=0.05)
    layer = tta._bn_layers(method.model)[0]
    before = layer.running_mean.clone()
    method.adapt(stream[0].x[:32])
    assert layer.running_mean is not None and not torch.equal(layer.running_mean, before)
    assert not torch.equal(method.flat(), method.theta_src)


@pytest.mark.parametrize("kwargs, message", [
    (dict(momentum=0.0), "momentum"), (dict(momentum=1.5), "momentum"),
])
def test_ema_statistics_rejects_bad_arguments(source, kwargs, message):
    with pytest.raises(ValueError, match=message):
        tta.ema_statistics(source, **kwargs)
    with pytest.raises(ValueError, match="no BatchNorm2d"):
        tta.ema_statistics(torch.nn.Linear(3, 2))


def classes_per_batch(labels, order, batch=32):
    return np.mean([len(np.unique(labels[order[i:i + batch]]))
                    for i in range(0, len(order), batch)])


def test_dirichlet_order_is_a_permutation_that_groups_classes():
    labels = np.repeat(np.arange(10), 40)
    rng = np.random.default_rng(0)
    order = tta.dirichlet_order(labels, 0.1, rng)
    assert np.array_equal(np.sort(order), np.arange(400))
    iid = classes_per_batch(labels, np.random.default_rng(1).permutation(400))
    assert classes_per_batch(labels, order) < 0.7 * iid
    # a large concentration tends to the i.i.d. order
    spread = tta.dirichlet_order(labels, 1e4, np.random.default_rng(2))
    assert classes_per_batch(labels, spread) > 0.9 * iid
    again = tta.dirichlet_order(labels, 0.1, np.random.default_rng(0))
    assert np.array_equal(order, again)
    with pytest.raises(ValueError, match="concentration"):
        tta.dirichlet_order(labels, -1.0, rng)
    with pytest.raises(ValueError, match="slots"):
        tta.dirichlet_order(labels, 0.1, rng, slots=0)


def test_visits_subsample_each_domain_afresh_and_methods_share_batches(source, stream):
    seen = []

    class Recorder(tta.Source):
        def adapt(self, x):
            seen.append(x.clone())
            return super().adapt(x)

    result = tta.run_stream(lambda: Recorder(source), stream, rounds=2, batch_size=16,
                            per_visit=48, order="dirichlet", seed=3)
    assert result.step_round.shape == (2 * 2 * 3,) and result.errors.shape == (2, 2)
    first, second = torch.cat(seen[:3]), torch.cat(seen[6:9])  # domain 0, rounds 1 and 2
    assert len(first) == 48 and not torch.equal(first, second)
    seen_again = list(seen)
    seen.clear()
    tta.run_stream(lambda: Recorder(source), stream, rounds=2, batch_size=16, per_visit=48,
                   order="dirichlet", seed=3)
    assert all(torch.equal(a, b) for a, b in zip(seen, seen_again))
