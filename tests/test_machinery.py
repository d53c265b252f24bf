"""icml25.book: parameters, claims, seeding, data registry, staleness, tables."""

import hashlib
import json

import nbformat
import numpy as np
import pytest

from icml25 import book
from icml25.book import claims, data, params, paths, staleness
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
    a, legacy_a = first.rng.random(3), np.random.random(3)
    second = book.setup(mode="quick", seed=7, sizes=SIZES)
    np.testing.assert_array_equal(a, second.rng.random(3))
    np.testing.assert_array_equal(legacy_a, np.random.random(3))
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


def test_claims_print_stable_lines_and_are_recorded(capsys):
    book.setup(mode="quick", seed=0, sizes=SIZES)
    assert book.claim("rho", "rho >= 0.9", 0.912345678, paper="0.90", holds=True) is None
    book.claim("slope", "slope <= 1.3", np.float64(1.51), paper="linear", holds=False,
               note="small n")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[rho] HOLDS: rho >= 0.9 | ours: 0.912 | paper: 0.90"
    assert out[1] == "[slope] DOES NOT HOLD: slope <= 1.3 | ours: 1.51 | paper: linear | small n"
    assert [r.id for r in claims.recorded()] == ["rho", "slope"]
    assert claims.recorded()[0].measured == "0.912"
    with pytest.raises(TypeError, match="holds must be a bool"):
        book.claim("x", "x", 1.0, paper="", holds="yes")


def test_finish_writes_the_record_where_the_runner_asks(tmp_path, monkeypatch):
    book.setup(mode="quick", seed=3, sizes=SIZES)
    book.claim("a", "a", 1, paper="p", holds=True)
    target = tmp_path / "record.json"
    monkeypatch.setenv(book.RECORD_ENV, str(target))
    book.finish()
    record = json.loads(target.read_text())
    assert record["mode"] == "quick" and record["seed"] == 3
    assert record["claims"][0]["id"] == "a"
    assert "lib/icml25/book/claims.py" in record["inputs"]
    assert record["versions"]["numpy"] == np.__version__


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
        "source_sha256": sha(py.read_bytes()), "inputs": {"mod.py": sha(module.read_bytes())},
    }
    nbformat.write(nb, tmp_path / "nb.ipynb")
    assert not staleness.state(py).stale
    module.write_text("A = 2\n")
    assert staleness.state(py).reasons == ["input changed: mod.py"]
    py.write_text("# %%\nx = 2\n")
    assert staleness.state(py).reasons == ["source changed: nb.py", "input changed: mod.py"]
    module.unlink()
    assert "input removed: mod.py" in staleness.state(py).reasons


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
