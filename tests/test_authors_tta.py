"""Chapter 03 beside the authors' SSA (j-pong/test-time-adaptation, run outside the project).

``data/reference/tta/authors_ssa.npz`` holds what their ``classification/methods/ssa.py``
(unmodified; CPU, one thread, the book's numeric pins) computed on the chapter's source model
(``SmallCNN`` after 4 epochs on the 16x16 digits, weights ``state/*``) over a stream of 60 batches
of 32 corrupted digits (``images_u8``: Gaussian noise, shot noise, contrast, 20 batches each),
with lr 5e-3, Nesterov momentum 0.9, buffer ``N = 8`` (their ``SSA.CHUNK_SIZE``), their dual
filter (alpha 0.99, beta 0.94, kappa 0.01) and ROID's weighted SLR loss without the
augmentation-consistency term (``ROID.USE_CONSISTENCY = False``; the book leaves it out). Runs:

* ``A``: an absolute ``S`` at which the steady switch comes at step 11, after the step where the
  two codes time it differently; ``Aprior``: the same with ROID's prior correction on.
* ``B``: ``S`` = half of lr^2 times the variance at step N+1, so that our rule switches at once.
* ``C``: their default ``SSA.EPS = 1e-12``.
* ``probe``: ``S = 1e9``, never steady (their SSA is then CMF with a fixed beta).

Per step the file has their returned outputs (``logits``), the BN affine parameters after the
step (``theta``, in their ``named_parameters`` order, which is ours), the dual filter's hidden
state (``hidden``), the step ``s_t`` (from their ``accum_step``), the buffered ``b_t = s_t g_t``,
the variance ``sigma_t^2`` (the return of their ``estimate_variance``), the steady flag and the
loss. Their driver scripts are stored in the file as ``scripts``.

Where the numbers differ by design, the tests pin the difference: their buffer counts as full one
step later (``full_flag`` is set in the buffering call of step N+1, read from step N+2), so their
earliest switch is at step N+2 and ours at N+1.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from icml25 import tta
from icml25.common import data


@functools.lru_cache(maxsize=1)
def _reference() -> dict:
    with np.load(data.path("reference/tta/authors_ssa.npz")) as file:
        return {key: file[key] for key in file.files}


def _model(ref) -> tta.SmallCNN:
    model = tta.SmallCNN()
    model.load_state_dict({k: torch.from_numpy(np.asarray(ref["state/" + k]))
                           for k in ref["state_keys"]})
    return model.eval()


class _Recording:
    """Mixin: record the loss of every step (read only; the update is untouched)."""

    def loss(self, logits):
        value = super().loss(logits)
        self.history.setdefault("loss", []).append(float(value.detach()))
        return value


class _SSA(_Recording, tta.SSA):
    pass


class _CMF(_Recording, tta.CMF):
    pass


def _switch_one_step_later(method) -> None:
    """Forbid the switch at the first full buffer (step N+1), as their code does; from step N+2
    on our rule runs unchanged. S is absolute in these runs, so nothing else happens at N+1."""
    rule, observe = method.rule, method.rule.observe
    calls = [0]

    def late(g):
        calls[0] += 1
        if calls[0] != rule.buffer_size + 1:
            return observe(g)
        threshold, rule.threshold = rule.threshold, 0.0
        try:
            return observe(g)
        finally:
            rule.threshold = threshold

    rule.observe = late


@functools.lru_cache(maxsize=None)
def _ours(tag: str, late: bool = False) -> dict:
    ref = _reference()
    lr, n = float(ref["lr"]), int(ref["buffer_size"])
    torch.set_num_threads(1)
    if tag == "probe":
        method = _CMF(_model(ref), lr=lr, momentum=0.9)
    else:
        method = _SSA(_model(ref), lr=lr, momentum=0.9, S=float(ref[f"{tag}/S"]), buffer_size=n)
        if late:
            _switch_one_step_later(method)
    logits, theta, hidden = [], [], []
    images = ref["images_u8"].astype(np.float32) / np.float32(255)
    for x in images:
        logits.append(method.adapt(x[:, None]).numpy())
        theta.append(method.flat().numpy())
        hidden.append(method.hidden.numpy().copy())
    h = method.history
    steps = len(images)
    step = np.asarray(h.get("step", [1.0] * steps))
    return dict(logits=np.array(logits), theta=np.array(theta), hidden=np.array(hidden),
                step=step, b=step * np.asarray(h.get("g", [np.nan] * steps)),
                var=np.asarray(h.get("var", [np.nan] * steps)),
                steady=np.asarray(h.get("steady", [False] * steps)), loss=np.asarray(h["loss"]))


def _first_steady(steady) -> int | None:
    steady = np.asarray(steady, bool)
    return int(np.argmax(steady)) + 1 if steady.any() else None


def _rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) / np.asarray(b) - 1)))


#: Steps 1-40 (Gaussian and shot noise) and 41-60 (contrast): the tolerances of the second window
#: are wider, see the test below.
EARLY, LATE = slice(0, 40), slice(40, 60)


def test_ssa_follows_theirs_step_for_step_when_the_switch_comes_late():
    """Run A (switch at step 11 in both): our SSA gives their steps s_t, buffered b_t, variances
    sigma_t^2, BN affine parameters, hidden state, outputs and losses.

    Up to the switch (steps 1-10) the parameters agree to 1e-9. From the switch on, float32
    roundings (they sum g_t and the buffer's variance in float32 tensors, we in float64; before
    the switch they write theta_sgd, we theta_prev + 1 * (theta_sgd - theta_prev)) are amplified
    by the rule's feedback: g_t is a parameter difference divided by lr (x 200) and the step
    depends on the variance of the last 8 values of g. Our own code parts from itself by as much
    when run once under the book's pinned AVX2 kernels and once under this CPU's default ones
    (theta 3.6e-4 apart at step 60), so the tolerances follow that growth:

    ==========  =====================  =====================  (measured, book pins, Intel Xeon)
    quantity    steps 1-40             steps 41-60
    s_t, b_t    2e-4 rel (8.6e-5)      5e-3 rel (6.1e-4)
    sigma_t^2   4e-4 rel (1.7e-4)      1e-2 rel (1.2e-3)
    theta       1e-5 abs (3.1e-6)      3e-3 abs (3.6e-4)
    hidden      1e-5 abs (1.2e-6)      1e-3 abs (1.1e-4)
    logits      1e-4 abs (1.3e-5)      1e-2 abs (1.5e-3)
    loss        2e-4 abs (5.1e-5)      1e-2 abs (1.5e-3)
    ==========  =====================  =====================

    A real difference in the rule moves s_t by tenths: switching one step earlier (test below)
    by 0.29, buffering g_t instead of s_t g_t (``scale_buffer=False``) by more.
    """
    ref, ours = _reference(), _ours("A")
    n = int(ref["buffer_size"])
    assert _first_steady(ref["A/steady"]) == _first_steady(ours["steady"]) == 11
    np.testing.assert_array_equal(ours["steady"], ref["A/steady"])
    assert 0.29 < ours["step"].min() < 0.9 and ours["step"].max() > 1.2  # the rule is active
    np.testing.assert_allclose(ours["theta"][:10], ref["A/theta"][:10], rtol=0, atol=1e-8)
    # their variance is computed (and unused) from step 1 over a zero-filled buffer; from step
    # N+1 on both are the population variance of the last N buffered values and g_t
    var, ref_var = ours["var"].copy(), ref["A/var"].copy()
    var[:n] = ref_var[:n] = 1.0
    for window, rel, scale in ((EARLY, 2e-4, 1.0), (LATE, 5e-3, 1.0)):
        assert _rel(ours["step"][window], ref["A/step"][window]) < rel
        assert _rel(ours["b"][window], ref["A/b"][window]) < rel
        assert _rel(var[window], ref_var[window]) < 2 * rel
    for key, early, late in (("theta", 1e-5, 3e-3), ("hidden", 1e-5, 1e-3),
                             ("logits", 1e-4, 1e-2), ("loss", 2e-4, 1e-2)):
        # the loss is a weighted sum of SLR terms of both signs: compared absolutely
        for window, atol in ((EARLY, early), (LATE, late)):
            np.testing.assert_allclose(ours[key][window], ref[f"A/{key}"][window], rtol=0,
                                       atol=atol, err_msg=f"{key}, steps {window}")
    # and the weights did move (the comparison is not of an idle model)
    assert np.abs(ref["A/theta"][-1] - ref["A/theta"][0]).max() > 1e-2


def test_our_cmf_is_their_ssa_that_never_switches():
    """With S = 1e9 their SSA never turns steady: step 1 throughout, i.e. CMF with the dual
    filter and fixed beta 0.94, which is our CMF class. Under the book's pins the parameters and
    outputs agree bit for bit over the 60 steps and the losses within 1e-6 (their ROID min-max
    lacks our 1e-12 guard); the tolerances, theta 1e-5, logits 1e-4, loss 1e-5 absolute, admit
    other CPU kernels (measured under this CPU's default kernels: 8.3e-7, 7.6e-6, 1.2e-5)."""
    ref, ours = _reference(), _ours("probe")
    assert not ref["probe/steady"].any()
    np.testing.assert_array_equal(ref["probe/step"], 1.0)
    np.testing.assert_allclose(ours["theta"], ref["probe/theta"], rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours["logits"], ref["probe/logits"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(ours["loss"], ref["probe/loss"], rtol=0, atol=2e-5)


@pytest.mark.parametrize("tag", ["B", "C"])
def test_our_switch_comes_one_step_earlier_and_that_is_the_only_difference(tag):
    """Pinned difference. Where the proposal is below sqrt 2 as soon as the buffer is full
    (runs B and C), our rule switches at step N+1 = 9 and theirs at N+2 = 10, so the runs part
    from step 9 on (by tenths in s_t). Forbidding our switch at step N+1 alone makes ours follow
    theirs over all 60 steps: s_t and b_t within 1e-4 relative, theta within 1e-5 (measured 3e-6,
    1.4e-6 and 1.4e-6 under the book's pins; these runs take small steps, so the feedback of run
    A does not amplify the roundings)."""
    ref = _reference()
    n = int(ref["buffer_size"])
    ours, late = _ours(tag), _ours(tag, late=True)
    assert _first_steady(ours["steady"]) == n + 1
    assert _first_steady(ref[f"{tag}/steady"]) == n + 2
    # identical up to the switch, apart by far more than rounding after it
    assert _rel(ours["step"][:n], ref[f"{tag}/step"][:n]) == 0.0
    assert abs(ours["step"][n] - 1.0) > 0.25 and ref[f"{tag}/step"][n] == 1.0
    assert _rel(ours["step"], ref[f"{tag}/step"]) > 0.2
    # with the switch delayed by one step, ours is theirs
    assert _first_steady(late["steady"]) == n + 2
    assert _rel(late["step"], ref[f"{tag}/step"]) < 1e-4
    assert _rel(late["b"], ref[f"{tag}/b"]) < 1e-4
    if f"{tag}/theta" in ref:
        np.testing.assert_allclose(late["theta"], ref[f"{tag}/theta"], rtol=0, atol=1e-5)


def test_their_default_eps_freezes_the_toy_model():
    """Their absolute S = EPS = 1e-12 (tuned to a ResNet-50 at lr 2.5e-4) gives, on the toy CNN
    at lr 5e-3, steps between 7.6e-4 and 3e-3 once steady (from step 10), as SteadyStateRule's
    docstring states ("steps near 1e-3"): the weights barely move after the switch. Pinned from
    their run; ours (switch delayed one step, as above) gives the same steps within 1e-4
    relative (measured 1e-6)."""
    ref = _reference()
    step = ref["C/step"]
    n = int(ref["buffer_size"])
    assert (step[: n + 1] == 1.0).all()
    assert 5e-4 < step[n + 1:].min() and step[n + 1:].max() < 5e-3
    move = np.abs(np.diff(_ours("C", late=True)["theta"], axis=0)).max(1)
    # largest change of a parameter per step: 1e-2 to 3e-2 before the switch, about 1e-3 after
    # (what is left is the dual filter's pull toward the source)
    assert move[: n].min() > 5e-3 and move[n + 1:].max() < 2e-3
    assert _rel(_ours("C", late=True)["step"], step) < 1e-4


def test_their_prior_correction_only_rescales_the_returned_logits():
    """Pinned difference: ROID's prior correction, which the book leaves out, multiplies the
    returned *logits* (not probabilities) per class by the smoothed batch prior
    (p + c) / (1 + C c), c = max(1/B, 1/C) / max_k p_k; it takes no part in the update. Their
    run with it on (Aprior) has exactly the parameters of run A; that formula applied to their
    run-A logits gives their Aprior outputs within 1e-6 (float32 rounding), and applied to our
    logits within 1e-4 over steps 1-40 (where the logits agree to 1e-4, see above; the prior is
    below 1)."""
    ref, ours = _reference(), _ours("A")
    np.testing.assert_array_equal(ref["Aprior/theta"], ref["A/theta"])

    def corrected(logits):
        logits = torch.from_numpy(np.asarray(logits))
        prior = logits.softmax(-1).mean(1, keepdim=True)
        b, c = logits.shape[1], logits.shape[2]
        smooth = max(1 / b, 1 / c) / prior.amax(-1, keepdim=True)
        return (logits * (prior + smooth) / (1 + smooth * c)).numpy()

    np.testing.assert_allclose(corrected(ref["A/logits"]), ref["Aprior/logits"], rtol=0, atol=1e-6)
    np.testing.assert_allclose(corrected(ours["logits"][EARLY]), ref["Aprior/logits"][EARLY],
                               rtol=0, atol=1e-4)
    assert np.abs(ref["Aprior/logits"] - ref["A/logits"]).max() > 0.1  # the correction acts
