"""icml25.book: parameters, claims, seeding, data registry, staleness, tables."""

import hashlib
import json

import nbformat
import numpy as np
import pytest

from icml25 import book
from icml25.book import claims
from icml25.common import data, paths
from icml25.common.hashing import code_digest
from icml25.book import params, thresholds
from icml25.book.run import staleness
from icml25.book.tables import markdown_table

CELL = '''mode = "book"  # choices: quick, book, paper
seed = 0
scale = 1.5
solver = "exact"  # choices: exact, approx
verbose = False
'''


def test_parameters_cell_is_read_with_choices():
    found = params.parse_parameters_cell(CELL)
    assert list(found) == ["mode", "seed", "scale", "solver", "verbose"]
    assert found["mode"].choices == params.MODES
    assert found["solver"].choices == ("exact", "approx")
    assert found["seed"].default == 0 and found["seed"].choices is None


def test_overrides_are_parsed_and_validated():
    found = params.parse_parameters_cell(CELL)
    got = params.validate_overrides(params.parse_overrides("seed=3, scale=2 solver=approx"), found)
    assert got == {"seed": 3, "scale": 2.0, "solver": "approx"}


@pytest.mark.parametrize(
    "text, message",
    [
        ("sed=3", "unknown parameter 'sed'.*choices: mode, seed, scale, solver, verbose"),
        ("mode=fast", "parameter 'mode' must be one of quick, book, paper; got 'fast'"),
        ("seed=abc", "parameter 'seed' must be of type int"),
        ("seed=1.5", "parameter 'seed' must be of type int"),
        ("verbose=1", "parameter 'verbose' must be of type bool"),
        ("solver=other", "parameter 'solver' must be one of exact, approx"),
        ("seed", "write NAME=VALUE"),
    ],
)
def test_bad_overrides_are_refused_in_one_line(text, message):
    found = params.parse_parameters_cell(CELL)
    with pytest.raises(params.ParameterError, match=message) as info:
        params.validate_overrides(params.parse_overrides(text), found)
    assert "\n" not in str(info.value)


SIZES = {m: dict(n=i + 1) for i, m in enumerate(params.MODES)}


def test_setup_seeds_and_selects_sizes():
    first = book.setup(mode="quick", seed=7, sizes=SIZES)
    a, legacy_a = first.rng("draws").random(3), np.random.random(3)
    second = book.setup(mode="quick", seed=7, sizes=SIZES)
    np.testing.assert_array_equal(a, second.rng("draws").random(3))
    np.testing.assert_array_equal(legacy_a, np.random.random(3))
    assert not np.array_equal(a, second.rng("other draws").random(3))
    assert first.seed_of("draws") == second.seed_of("draws")
    assert first.size.n == 1 and book.setup(mode="paper", seed=0, sizes=SIZES).size.n == 3


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(mode="fast", seed=0, sizes=SIZES), "'mode' must be one of quick, book, paper"),
        (dict(mode="book", seed=-1, sizes=SIZES), "'seed' must be a non-negative integer"),
        (dict(mode="book", seed=0, sizes={"book": {}}), "missing: quick, paper"),
        (dict(mode="book", seed=0, sizes={**SIZES, "paper": dict(m=1)}), "same names"),
    ],
)
def test_setup_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        book.setup(**kwargs)


DECLARED = """
[[claims]]
id = "rho"
notebook = "method"
kind = "claim"
fidelity = "paper"
statement = "rho >= 0.9"
paper = "0.90"
op = ">="
threshold = 0.9

[[claims]]
id = "slope"
notebook = "method"
kind = "claim"
fidelity = "weaker"
why = "a slope, not a constant"
statement = "slope <= 1.3"
paper = "linear"
op = "<="
threshold = 1.3
timed = true

[[claims]]
id = "gap"
notebook = "method"
kind = "claim"
fidelity = "paper"
statement = "gap > 0"
paper = "positive"
op = ">"
threshold = 0

[[claims]]
id = "both"
notebook = "method"
kind = "check"
fidelity = "paper"
statement = "a and b"
paper = "both"
op = "=="
threshold = true

[[claims]]
id = "band"
notebook = "method"
kind = "claim"
fidelity = "paper"
statement = "coverage in [0.91, 0.99]"
paper = "95%"
op = "in"
threshold = [0.91, 0.99]

[[claims]]
id = "bound"
notebook = "method"
kind = "check"
fidelity = "paper"
statement = "error below the theorem's bound"
paper = "Theorem 1"
op = "<="
threshold = "computed"
threshold_from = "the bound at the run's n"
"""


@pytest.fixture
def declared(tmp_path, monkeypatch):
    (tmp_path / "claims.toml").write_text(DECLARED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(params.SOURCE_ENV, raising=False)
    return tmp_path


def test_a_chapter_reads_a_declared_threshold_instead_of_typing_it(declared):
    book.setup(mode="quick", seed=0, sizes=SIZES)
    assert thresholds.threshold("rho") == 0.9 and thresholds.threshold("band") == (0.91, 0.99)
    with pytest.raises(ValueError, match="computed threshold"):
        thresholds.threshold("bound")
    with pytest.raises(Exception, match="not declared"):
        thresholds.threshold("nothing")


def test_claims_report_a_declared_measurement_and_compute_its_verdict(declared, capsys):
    book.setup(mode="quick", seed=0, sizes=SIZES)
    assert book.claim("rho", 0.912345678) is None
    book.claim("slope", np.float64(1.51), note="small n")
    book.claim("gap", 0.02, interval=(-0.01, 0.05))
    book.claim("both", True)
    book.claim("band", 0.95)
    book.claim("bound", 0.1, threshold=0.2)
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "[rho] HOLDS in this run (seed 0): 0.912 (threshold ≥ 0.9)"
    assert "[slope] DOES NOT HOLD in this run (seed 0): 1.51 (threshold ≤ 1.3)" in out
    verdicts = {r.id: r.verdict for r in book.current().claims.values()}
    assert verdicts == {"rho": "holds", "slope": "does not hold", "gap": "inconclusive",
                        "both": "holds", "band": "holds", "bound": "holds"}
    recorded = {r.id: r for r in book.current().claims.values()}
    assert recorded["rho"].measured == "0.912"
    assert recorded["gap"].ours() == "0.02 [-0.01, 0.05]"
    assert recorded["both"].kind == "check" and recorded["both"].measured == "yes"
    # the run records the measurement; the declaration's labels join it when pages are built
    assert not recorded["slope"].timed
    from icml25.book import declarations
    built = book.Claim.of(recorded["slope"].as_dict(), declarations.load(declared)["slope"])
    assert built.timed and built.fidelity == "weaker" and built.verdict == "does not hold"
    assert recorded["bound"].threshold == 0.2


@pytest.mark.parametrize(
    "args, kwargs, error, message",
    [
        (("x", 1.0), {}, ValueError, "not declared"),
        (("rho", "high"), {}, TypeError, "claim value must be a number"),
        (("rho", float("nan")), {}, ValueError, "measured value is nan"),
        (("rho", 1.0), {"interval": (2, 1)}, ValueError, "interval must be"),
        (("rho", 1.0), {"threshold": 0.5}, ValueError, "declared in claims.toml"),
        (("bound", 1.0), {}, ValueError, "computed threshold"),
    ],
)
def test_bad_claims_are_refused(declared, args, kwargs, error, message):
    book.setup(mode="quick", seed=0, sizes=SIZES)
    with pytest.raises(error, match=message):
        book.claim(*args, **kwargs)


def test_verdict_edges():
    assert claims.verdict(0.9, ">=", 0.9) == "holds"
    assert claims.verdict(0.9, ">", 0.9) == "does not hold"
    # The threshold strictly inside the interval: the run cannot tell.
    assert claims.verdict(0.95, ">=", 0.9, (0.85, 1.0)) == "inconclusive"
    assert claims.verdict(0.95, ">=", 0.9, (0.9, 1.0)) == "holds"
    assert claims.verdict(0.95, "in", (0.91, 0.99), (0.90, 0.97)) == "inconclusive"


def test_same_result_compares_the_verdict_exactly_and_the_value_within_tolerance():
    ref = {"id": "a", "verdict": "holds", "value": 1.0, "rtol": 0.01, "atol": 0.0}
    assert claims.same_result(ref, {**ref, "value": 1.009}) is None
    assert "tolerance" in claims.same_result(ref, {**ref, "value": 1.02})
    assert "verdict" in claims.same_result(ref, {**ref, "verdict": "does not hold"})
    assert claims.same_result({**ref, "value": True}, {**ref, "value": False})
    # A timed claim measures the machine: a busy one may move it anywhere.
    timed = {**ref, "timed": True}
    assert claims.same_result(timed, {**timed, "value": 9.0, "verdict": "does not hold"}) is None


def test_a_borderline_run_may_turn_inconclusive_but_never_flip():
    # chapter 05's published sae-not-consistent: the interval ends 0.011 above the threshold,
    # within the claim's tolerance (0.125); on another CPU the end fell below: holds.
    ref = {"id": "a", "verdict": "inconclusive", "value": 0.3375, "interval": [0.236, 0.511],
           "op": "<", "threshold": 0.5, "atol": 0.125, "rtol": 1e-4}
    moved = {**ref, "value": 0.325, "interval": [0.224, 0.49], "verdict": "holds"}
    assert claims.borderline(ref) and claims.same_result(ref, moved) is None
    assert "tolerance" in claims.same_result(ref, {**moved, "value": 0.2})
    # far from the edge: a changed verdict is a failure
    far = {**ref, "interval": [0.236, 0.8]}
    assert not claims.borderline(far)
    assert "verdict" in claims.same_result(far, {**far, "verdict": "holds"})
    # holds against does not hold: never borderline, however close
    decided = {**ref, "verdict": "holds", "interval": [0.3, 0.49]}
    assert "verdict" in claims.same_result(decided, {**decided, "verdict": "does not hold"})
    # a yes/no claim or one without an interval is never borderline
    assert not claims.borderline({**ref, "interval": None})
    assert not claims.borderline({**ref, "threshold": True})


def test_claim_outputs_are_compared_as_records():
    def out(value, verdict="holds"):
        return {"output_type": "display_data", "data": {
            claims.MIME: {"id": "a", "verdict": verdict, "value": value, "rtol": 0.01,
                          "atol": 0}, "text/plain": f"line {value}"}}
    assert claims.compare_outputs([out(1.005)], [out(1.0)]) == []
    assert claims.compare_outputs([out(1.1)], [out(1.0)])
    assert claims.compare_outputs([out(1.0, "does not hold")], [out(1.0)])
    assert claims.compare_outputs([], [out(1.0)])
    # a record of today keeps only its measurement: the tolerance is the declared one
    def bare(value):
        return {"output_type": "display_data", "data": {
            claims.MIME: {"id": "a", "verdict": "holds", "value": value}}}
    assert claims.compare_outputs([bare(1.005)], [bare(1.0)])
    assert claims.compare_outputs([bare(1.005)], [bare(1.0)], {"a": {"rtol": 0.01}}) == []
    assert claims.compare_outputs([bare(9.0)], [bare(1.0)], {"a": {"timed": True}}) == []


def test_pinned_numerics_keep_a_machine_setting(monkeypatch):
    from icml25.common import numerics

    env = numerics.pinned({"OPENBLAS_CORETYPE": "Zen", "OMP_NUM_THREADS": "8"})
    assert env["OMP_NUM_THREADS"] == "1"
    if numerics.is_x86():
        assert env["OPENBLAS_CORETYPE"] == "Zen"  # the machine's choice is never overridden
        assert env["ATEN_CPU_CAPABILITY"] == "avx2" and env["MKL_CBWR"] == "COMPATIBLE"
        assert numerics.pinned({})["OPENBLAS_CORETYPE"] == "Haswell"
    assert numerics.describe()["cpu"]
    loose = numerics.pinned({"ICML25_PIN": "threads", "ATEN_CPU_CAPABILITY": "avx512"})
    assert loose["ATEN_CPU_CAPABILITY"] == "avx512" and loose["OMP_NUM_THREADS"] == "1"
    with pytest.raises(ValueError, match="ICML25_PIN must be"):
        numerics.pinned({"ICML25_PIN": "none"})


def test_perturbed_numerics_apply_over_the_pins():
    from icml25.common import numerics

    env = numerics.pinned({"ICML25_PERTURB": "all", "OPENBLAS_CORETYPE": "Zen"})
    assert env["OMP_NUM_THREADS"] == "1" and env["OPENBLAS_CORETYPE"] == "Zen"
    if numerics.is_x86():
        assert env["MKL_CBWR"] == "AUTO" and env["ATEN_CPU_CAPABILITY"] == "default"
        assert "X86_V4" in env["NPY_DISABLE_CPU_FEATURES"]
        assert numerics.pinned({"ICML25_PERTURB": "mkl"})["ATEN_CPU_CAPABILITY"] == "avx2"
    assert "MKL_CBWR" not in numerics.pinned({"ICML25_PIN": "threads"}) or not numerics.is_x86()
    with pytest.raises(ValueError, match="ICML25_PERTURB must be one of mkl, aten, numpy, all"):
        numerics.pinned({"ICML25_PERTURB": "avx512"})


def test_finish_writes_the_record_where_the_runner_asks(declared, tmp_path, monkeypatch):
    book.setup(mode="quick", seed=3, sizes=SIZES)
    book.claim("rho", 1)
    target = tmp_path / "record.json"
    monkeypatch.setenv(book.RECORD_ENV, str(target))
    assert book.finish() is None
    record = json.loads(target.read_text())
    assert record["mode"] == "quick" and record["seed"] == 3
    assert record["claims"][0]["id"] == "rho" and record["claims"][0]["seed"] == 3
    assert "lib/icml25/book/claims.py" in record["inputs"]
    assert record["versions"]["numpy"] == np.__version__
    assert record["platform"]["cpu"] and "settings" in record["platform"]


def sha(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def test_data_registry_checks_hashes_and_records_loads(tmp_path):
    (tmp_path / "a.bin").write_bytes(b"hello")
    (tmp_path / "b.bin").write_bytes(b"changed")
    (tmp_path / "MANIFEST").write_text(
        "# comment\n"
        f"a.bin\t{sha(b'hello')}\tpython make_a.py\n"
        f"b.bin\t{sha(b'original')}\tpython make_b.py\n"
        f"c.bin\t{sha(b'x')}\tpython make_c.py\n"
    )
    assert data.path("a.bin", root=tmp_path) == tmp_path / "a.bin"
    assert any(k.endswith("a.bin") for k in data.loaded())
    with pytest.raises(ValueError, match="regenerate it with: python make_b.py"):
        data.path("b.bin", root=tmp_path)
    with pytest.raises(FileNotFoundError, match="python make_c.py"):
        data.path("c.bin", root=tmp_path)
    with pytest.raises(ValueError, match="not listed"):
        data.path("d.bin", root=tmp_path)
    assert len(data.check(tmp_path)) == 2


def test_malformed_manifest_is_refused(tmp_path):
    (tmp_path / "MANIFEST").write_text("a.bin deadbeef\n")
    with pytest.raises(ValueError, match="expected PATH<TAB>SHA256<TAB>COMMAND"):
        data.read_manifest(tmp_path / "MANIFEST")


def test_committed_data_matches_its_manifest():
    assert data.check() == []


def test_staleness_names_the_input_that_changed(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "ROOT", tmp_path)
    py, module = tmp_path / "nb.py", tmp_path / "mod.py"
    py.write_text("# %%\nx = 1\n")
    module.write_text("A = 1\n")
    assert staleness.state(py).reasons == ["never executed"]
    nb = nbformat.v4.new_notebook()
    nb.metadata["icml25"] = {
        "mode": "book", "overrides": {}, "duration_s": 1.0, "claims": [],
        "source_sha256": sha(py.read_bytes()), "inputs": {"mod.py": code_digest(module)},
    }
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert not staleness.state(py).stale
    # a docstring, a comment or a blank line cannot move a figure: nothing goes stale
    module.write_text('"""What A is."""\n\nA = 1  # the first\n')
    assert not staleness.state(py).stale
    module.write_text("A = 2\n")
    assert staleness.state(py).reasons == ["input changed: mod.py"]
    py.write_text("# %%\nx = 2\n")
    assert staleness.state(py).reasons == ["source changed: nb.py", "input changed: mod.py"]
    module.unlink()
    assert "input removed: mod.py" in staleness.state(py).reasons


def test_a_prose_edit_is_copied_into_the_published_notebook_without_executing(
        tmp_path, monkeypatch):
    from icml25.book.run import notebooks, runner

    monkeypatch.setattr(paths, "ROOT", tmp_path)
    py = tmp_path / "nb.py"
    py.write_text("# %% [markdown]\n# Old words.\n\n# %%\nx = 1\nx\n")
    nb = notebooks.read_source(py)
    nb.cells[1].outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"},
                                                  execution_count=1)]
    nb.metadata["icml25"] = {"mode": "book", "overrides": {}, "duration_s": 1.0, "claims": [],
                             "source_sha256": sha(py.read_bytes()), "inputs": {}}
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert not staleness.state(py).stale
    py.write_text("# %% [markdown]\n# New words.\n\n# %% [markdown]\n# More.\n\n"
                  "# %%\nx = 1\nx\n")
    assert staleness.state(py).reasons == ["source changed: nb.py"]
    assert runner.refresh_prose(py)
    assert not staleness.state(py).stale
    done = nbformat.read(tmp_path / "nb.ipynb", as_version=4)
    assert [c.cell_type for c in done.cells] == ["markdown", "markdown", "code"]
    assert "New words" in done.cells[0].source and done.cells[2].outputs[0].data["text/plain"] == "1"
    # a change of code is never copied: it must be executed
    py.write_text("# %% [markdown]\n# New words.\n\n# %%\nx = 2\nx\n")
    assert not runner.refresh_prose(py)
    assert staleness.state(py).stale


def test_markdown_table_escapes_and_aligns():
    table = markdown_table(["a", "b"], [["x|y", 1], ["long text", 22]])
    lines = table.splitlines()
    assert lines[0] == "| a         | b  |" and "x\\|y" in lines[2]
    assert len({len(line) for line in lines}) == 1


def test_setup_seeds_torch_when_the_chapter_imported_it():
    torch = pytest.importorskip("torch")
    book.setup(mode="quick", seed=11, sizes=SIZES)
    first = torch.rand(3)
    book.setup(mode="quick", seed=11, sizes=SIZES)
    assert torch.equal(first, torch.rand(3)) and torch.get_num_threads() == 1


def test_measure_helpers():
    from icml25.book import measure

    calls = []
    seconds, result = measure.timed(lambda: calls.append(1) or len(calls), repeats=3)
    assert result == 3 and seconds >= 0
    peak, arr = measure.peak_memory_mib(lambda: np.ones(1_000_000))
    assert 7 < peak < 20 and arr.size == 1_000_000
    assert measure.loglog_slope([1, 2, 4], [3, 12, 48]) == pytest.approx(2.0)
    fast, slow = {1: 2.0, 2: 1.0, 4: 1.0}, {1: 1.0, 2: 2.0, 4: 4.0}
    assert measure.crossover(fast, slow) == 2 and measure.crossover(slow, fast) is None
    assert "from n = 2 on" in measure.describe_crossover(fast, slow, "A", "B")
    with pytest.raises(ValueError, match="positive values"):
        measure.loglog_slope([1, 2], [0, 1])
    with pytest.raises(ValueError, match="repeats must be at least 1"):
        measure.timed(lambda: None, repeats=0)


def test_loglog_crossing_reads_the_level_off_a_power_law():
    from icml25.book import measure

    # y = x^2 between the bracketing points: y = 8 at x = sqrt(8), wherever the grid lies
    assert measure.loglog_crossing([1, 2, 4], [1, 4, 16], 8.0) == pytest.approx(8**0.5)
    # the last crossing counts (a ratio falling below 1 for good)
    assert measure.loglog_crossing([2, 4, 8, 16], [0.5, 2.0, 0.5, 0.25], 1.0) == pytest.approx(
        8 / 2**0.5)
    # past the last measurement only when asked: the power law of the last two carried on
    assert measure.loglog_crossing([1, 2], [1, 4], 16.0) is None
    assert measure.loglog_crossing([1, 2], [1, 4], 16.0, extrapolate=True) == pytest.approx(4.0)
    with pytest.raises(ValueError, match="x increasing"):
        measure.loglog_crossing([2, 1], [1, 2], 1.5)
    with pytest.raises(ValueError, match="positive"):
        measure.loglog_crossing([1, 2], [0, 2], 1.0)


def test_a_timed_claim_is_compared_only_for_its_presence():
    ref = {"id": "t", "verdict": "holds", "value": 2.05, "rtol": 0.0, "atol": 0.2, "timed": True}
    assert claims.same_result(ref, {**ref, "value": 1.6, "verdict": "does not hold"}) is None
    untimed = {**ref, "timed": False}
    assert claims.same_result(untimed, {**untimed, "value": 1.95, "verdict": "does not hold"})


def test_nbval_compares_claim_cells_by_their_records():
    from types import SimpleNamespace

    from nbval.plugin import IPyNbCell  # patched by the root conftest.py, loaded by pytest

    def out(value, verdict="holds"):
        return {"output_type": "display_data", "data": {
            claims.MIME: {"id": "a", "verdict": verdict, "value": value, "rtol": 0.01,
                          "atol": 0}, "text/plain": f"line {value}"}}
    cell = SimpleNamespace(parent=SimpleNamespace(skip_compare=()), colors=SimpleNamespace(
        OKBLUE="", FAIL="", ENDC=""), comparison_traceback=[])
    assert IPyNbCell.compare_outputs(cell, [out(1.005)], [out(1.0)]) is True
    assert IPyNbCell.compare_outputs(cell, [out(1.0, "does not hold")], [out(1.0)]) is False
    assert "verdict" in " ".join(cell.comparison_traceback)


def test_a_glued_figure_is_closed_and_a_shown_one_too():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, _ = plt.subplots()
    book.glue("fig_test", fig)
    assert not plt.fignum_exists(fig.number)  # placed only where {glue:figure} puts it
    fig, _ = plt.subplots()
    book.show_figure(fig, "fig_test_shown")
    assert not plt.fignum_exists(fig.number)
    with pytest.raises(ValueError, match="identifier"):
        book.show_figure(plt.figure(), "not a name")
    plt.close("all")


def test_glue_takes_many_values_in_one_call(monkeypatch):
    import myst_nb

    glued = {}
    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display: glued.update({name: value}))
    book.glue(n=3, rho=np.float64(0.5))
    book.glue("a-b", 1, c=2)
    assert glued == {"n": 3, "rho": 0.5, "a-b": 1, "c": 2}
    assert type(glued["rho"]) is float  # a numpy scalar becomes a number the prose can format
    with pytest.raises(TypeError, match="at least one value"):
        book.glue()
    with pytest.raises(TypeError, match="name, value"):
        book.glue("only a name")


def test_a_run_holds_its_own_claims_and_the_next_run_starts_empty(declared):
    book.setup(mode="quick", seed=1, sizes=SIZES)
    book.claim("rho", 0.95)
    assert list(book.current().claims) == ["rho"] and book.current().claims["rho"].seed == 1
    book.setup(mode="quick", seed=2, sizes=SIZES)
    assert book.current().claims == {} and book.current().seed == 2


# --- the training commands' shared parts (icml25.common.checkpoints) and the bootstrap ---------


def _square(x):  # module level: spawned workers unpickle it by name
    return x * x


def test_map_seeds_same_in_workers_as_inline():
    from icml25.common.checkpoints import map_seeds

    assert map_seeds(_square, range(4)) == [0, 1, 4, 9]
    assert map_seeds(_square, range(4), jobs=2) == [0, 1, 4, 9]
    with pytest.raises(ValueError, match="jobs must be a positive integer"):
        map_seeds(_square, range(2), jobs=0)


def test_train_command_calls_save_with_the_seeds(tmp_path, capsys):
    from icml25.common.checkpoints import train_command

    calls = []
    out = tmp_path / "sub" / "models.pt"
    train_command("prog", lambda p, s, jobs: calls.append((p, list(s), jobs)), seeds=3,
                  argv=["train", str(out), "--jobs", "2"])
    assert calls == [(out, [0, 1, 2], 2)] and out.parent.is_dir()
    assert "wrote" in capsys.readouterr().out
    made = []
    train_command("prog", None, seeds=1, argv=["embed", str(out)],
                  extra={"embed": made.append})
    assert made == [out]
    with pytest.raises(SystemExit):
        train_command("prog", None, seeds=1, argv=["train", str(out), "--seeds", "0"])


def _checkpoint_content():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    big = torch.randn(6, 4, generator=g)
    return dict(
        config={"steps": 3, "lr": 0.5, "widths": (8, 16), "name": "tiny"},
        # seed 1 given before seed 0, a half-precision tensor, an int buffer, a view of a
        # larger tensor and a parameter named like a timing (``time.0.weight``) all survive
        seeds={1: {"net": {"time.0.weight": big[:2].half(), "n": torch.tensor(7)}},
               0: {"net": {"time.0.weight": big[2:4].clone().half(), "n": torch.tensor(3)}}},
        records={0: {"net": {"loss": [1.0, float("nan")], "steps": 3}},
                 1: {"net": {"loss": [2.0, 0.5], "steps": 3}},
                 "evaluator": {"history": torch.arange(4.0)}},
        shared={"evaluator": {"w": torch.ones(2, dtype=torch.float64)}})


def test_checkpoint_round_trip_keeps_every_tensor_and_record(tmp_path):
    import torch
    from icml25.common import checkpoints as ck
    from icml25.common.hashing import sha256_file

    content = _checkpoint_content()
    digest = ck.save(tmp_path / "m.pt", **content)
    assert digest == sha256_file(tmp_path / "m.pt")
    got = ck.load(tmp_path / "m.pt")
    assert got.config == content["config"] and isinstance(got.config["widths"], tuple)
    assert list(got.seeds) == [0, 1]  # seeds are stored in order
    for s, models in content["seeds"].items():
        for k, t in models["net"].items():
            assert got.seeds[s]["net"][k].dtype == t.dtype
            assert torch.equal(got.seeds[s]["net"][k], t)
    assert torch.equal(got.shared["evaluator"]["w"], content["shared"]["evaluator"]["w"])
    assert got.records[1] == content["records"][1] and got.records[0]["net"]["steps"] == 3
    assert got.records[0]["net"]["loss"][0] == 1.0 and np.isnan(got.records[0]["net"]["loss"][1])
    assert torch.equal(got.records["evaluator"]["history"], torch.arange(4.0))
    assert ck.seed_state(got, 1, "prog train OUT") is got.seeds[1]


def test_checkpoint_bytes_depend_only_on_the_content(tmp_path):
    import torch
    from icml25.common import checkpoints as ck

    content = _checkpoint_content()
    a = ck.save(tmp_path / "a.pt", **content)
    b = ck.save(tmp_path / "other-name.pt", **_checkpoint_content())  # new objects, new name
    assert a == b
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "other-name.pt").read_bytes()
    got = ck.load(tmp_path / "a.pt")  # load -> save is the identity on the bytes
    assert ck.save(tmp_path / "again.pt", config=got.config, seeds=got.seeds,
                   records=got.records, shared=got.shared) == a
    content["seeds"][0]["net"]["n"] = torch.tensor(4)  # and the content does matter
    assert ck.save(tmp_path / "changed.pt", **content) != a


def test_checkpoint_bytes_do_not_depend_on_which_equal_objects_are_shared(tmp_path):
    """Records made in this process share their key strings across seeds; records sent back
    by a worker process (``--jobs 2``) arrive as copies. The file must not tell them apart
    (with pickle's memo on, it did: rationales/models.pt of --jobs 1 and --jobs 2 differed)."""
    import pickle

    import torch
    from icml25.common import checkpoints as ck

    def record(s):
        return {"history": [float(s), 0.5], "n_train": 3}

    weights = {"net": {"w": torch.ones(2)}}
    here = {s: record(s) for s in range(3)}
    sent = {s: pickle.loads(pickle.dumps(record(s))) for s in range(3)}
    assert ck.save(tmp_path / "a.pt", config={"k": 1}, seeds={0: weights}, records=here) == \
        ck.save(tmp_path / "b.pt", config={"k": 1}, seeds={0: weights}, records=sent)


@pytest.mark.parametrize("where, bad, error", [
    ("records", {0: {"net": {"loss": [1.0], "cpu_s": 12.5}}}, "timing"),
    ("records", {0: {"net": {"wall_time": 1.0}}}, "timing"),
    ("records", {"host": "laptop"}, "timing"),
    ("config", {"steps": 3, "threads": 1}, "timing"),
    ("config", {"steps": 3, "date": "2025-01-01"}, "timing"),
    ("records", {0: {"net": {"loss": np.zeros(2)}}}, "NumPy"),
    ("records", {0: {"net": {"loss": [np.float64(1.0)]}}}, "NumPy"),
])
def test_checkpoint_refuses_timing_fields_and_unloadable_values(tmp_path, where, bad, error):
    from icml25.common import checkpoints as ck

    content = _checkpoint_content()
    content[where] = bad
    with pytest.raises((ValueError, TypeError), match=error):
        ck.save(tmp_path / "m.pt", **content)
    assert not list(tmp_path.iterdir())  # nothing written


def test_checkpoint_missing_seed_names_the_training_command(tmp_path):
    import torch
    from icml25.common import checkpoints as ck

    ck.save(tmp_path / "m.pt", **_checkpoint_content())
    got = ck.load(tmp_path / "m.pt")
    with pytest.raises(ValueError, match=r"seeds \[0, 1\], not 5; `prog train OUT --seeds N` trains seeds 0..N-1 \(N > 5"):
        ck.seed_state(got, 5, "prog train OUT")
    with pytest.raises(ValueError, match="not '0'"):
        ck.seed_state(got, "0", "prog train OUT")
    torch.save({"config": {}, "seeds": {0: {}}}, tmp_path / "old.pt")  # an older layout
    with pytest.raises(ValueError, match="not an icml25.checkpoint/1 checkpoint"):
        ck.load(tmp_path / "old.pt")


def test_checkpoint_write_is_atomic(tmp_path, monkeypatch):
    import os

    from icml25.common import checkpoints as ck

    path = tmp_path / "m.pt"
    first = ck.save(path, **_checkpoint_content())
    before = path.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["m.pt"]  # no temporary file left
    assert path.stat().st_mode & 0o777 == 0o666 & ~_umask()  # not mkstemp's 0600

    def fail(*args):
        raise OSError("disk full")

    content = _checkpoint_content()
    content["config"]["steps"] = 4
    for name in ("fsync", "replace"):  # interrupted while writing, or before the rename
        with monkeypatch.context() as m:
            m.setattr(os, name, fail)
            with pytest.raises(OSError, match="disk full"):
                ck.save(path, **content)
        assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["m.pt"]
    assert ck.save(path, **content) != first


def _umask():
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_bootstrap_ci_brackets_the_mean_and_rejects_bad_input():
    from icml25.common.stats import bootstrap_ci

    v = np.random.default_rng(0).normal(1.0, 1.0, 400)
    mean, (lo, hi) = bootstrap_ci(v, n_boot=2000, seed=1)
    assert lo < mean < hi and mean == pytest.approx(v.mean())
    # the width follows the standard error 1/sqrt(n): about 2 * 1.96 / 20 here
    assert 0.15 < hi - lo < 0.25
    assert bootstrap_ci(v, seed=[3, 1]) == bootstrap_ci(v, seed=[3, 1])
    for bad in ([], [1.0, np.nan]):
        with pytest.raises(ValueError, match="non-empty array of finite values"):
            bootstrap_ci(bad)
    with pytest.raises(ValueError, match="n_boot must be positive"):
        bootstrap_ci(v, n_boot=0)


def test_bibliography_parses_and_holds_every_cited_key():
    """A merge that drops one closing brace breaks the whole book build; say so in seconds."""
    import re

    from pybtex.database import parse_file

    keys = set(parse_file(str(paths.BOOK / "references.bib")).entries)
    sources = [*paths.CHAPTERS.glob("*/*.py"), *paths.CHAPTERS.glob("*/*.md"),
               *paths.BOOK.glob("*.md")]
    cited = {k.strip() for f in sources
             for group in re.findall(r"\{cite[a-z:]*\}`([^`]+)`", f.read_text())
             for k in group.split(",")}
    assert cited and not cited - keys, f"cited but not in references.bib: {cited - keys}"


def test_code_digest_ignores_comments_docstrings_and_blank_lines(tmp_path):
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text('"""Doc."""\nimport os  # why\n\n\ndef f(x):\n    """$x^2$, é."""\n'
                 "    # a comment\n    return x * 2  # double\n")
    b.write_text('"""Another doc,\non two lines."""\nimport os\n\ndef f(x):\n'
                 '    """Changed: ü."""\n    return x * 2\n')
    c.write_text('"""Doc."""\nimport os\n\ndef f(x):\n    """Doc."""\n    return x * 3\n')
    assert code_digest(a) == code_digest(b)
    assert code_digest(a) != code_digest(c)
    s = 'x = "# not a comment"\n'
    a.write_text(s)
    b.write_text('x = ""\n')
    assert code_digest(a) != code_digest(b)


def test_build_time_fields_leave_a_notebook_fresh_and_a_threshold_does_not(tmp_path):
    """What the pages read (a fidelity label, its why, a source, the headline claims, the
    seed plan) is not an input of a run; a threshold the run compares with is."""
    from icml25.book import declarations

    entry = ('[[claims]]\nid = "a"\nnotebook = "nb"\nkind = "claim"\nfidelity = "paper"\n'
             'statement = "s"\npaper = "p"\nop = ">"\nthreshold = 0\n')
    (tmp_path / "claims.toml").write_text(entry)
    before = declarations.run_digest(tmp_path, "nb")
    relabelled = entry.replace('fidelity = "paper"', 'fidelity = "proxy"\nwhy = "w"')
    (tmp_path / "claims.toml").write_text(
        "[chapter]\nlooks = [5, 10]\n\n" + relabelled + 'source = "not checked"\n\n'
        '[[headline]]\nid = "h"\nwords = "w"\nsource = "abstract"\nwhere = "abstract"\n'
        'tests = ["a"]\n')
    assert declarations.run_digest(tmp_path, "nb") == before
    # the words and the tolerances are read when the pages are built and the runs compared
    reworded = entry.replace('statement = "s"', 'statement = "new words"').replace(
        'paper = "p"', 'paper = "another quote"') + "rtol = 0.05\ntimed = true\n"
    (tmp_path / "claims.toml").write_text(reworded)
    assert declarations.run_digest(tmp_path, "nb") == before
    (tmp_path / "claims.toml").write_text(entry.replace("threshold = 0", "threshold = 1"))
    assert declarations.run_digest(tmp_path, "nb") != before
    (tmp_path / "claims.toml").write_text(entry.replace('op = ">"', 'op = ">="'))
    assert declarations.run_digest(tmp_path, "nb") != before
