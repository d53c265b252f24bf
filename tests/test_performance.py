"""The Performance page: generated from the benchmark record, never typed (no timing here)."""

import json

import pytest

from icml25.book.site import performance

RECORD = {
    "date": "2026-12-04T14:00:00+00:00",
    "command": "make bench",
    "machine": {"cpu": "Test CPU 9000", "isa": ["avx2"], "cores": 2, "system": "Linux 6 (x86_64)",
                "python": "3.11.7", "numpy": "2.4.6", "scipy": "1.17.1",
                "blas": ["openblas 0.3"], "threads": 1},
    "kernels": [
        {"chapter": "11", "kernel": "s-OTDD", "case": "n = 4,000",
         "ours": {"label": "icml25.sotdd.sotdd", "seconds": 0.1},
         "peers": [{"label": "floor: product + sort", "seconds": 0.08, "kind": "floor"},
                   {"label": "POT sliced", "seconds": 0.5, "kind": "library"},
                   {"label": "authors' code", "seconds": 2.5, "kind": "authors",
                    "recorded_elsewhere": True, "source": "data/reference/x.npz",
                    "provenance": "repo@abc, python make.py", "machine": "not recorded",
                    "clock": "wall"}],
         "note": ""},
        {"chapter": "10", "kernel": "SKS", "case": "49² grid",
         "ours": {"label": "solve_sks", "seconds": 1.5}, "peers": [], "note": "no peer here"},
        {"kernel": "metric_mst", "error": "ImportError: boom"},
    ],
}


@pytest.fixture
def data_dir(tmp_path):
    ref = tmp_path / "reference" / "metric_mst"
    ref.mkdir(parents=True)
    (ref / "authors_cpp.json").write_text(json.dumps({
        "repository": "someone/mfc", "commit": "abc123", "command": "./mfc 8000",
        "machine": "Other CPU", "date": "2026-12-01",
        "timings": [{"n": 8000, "seconds": 0.25}, {"n": 16000, "seconds": 1.25}]}))
    return tmp_path


def test_the_page_shows_every_kernel_ratio_machine_and_date(data_dir):
    page = performance.render(RECORD, data_dir)
    assert page.startswith(performance.HEADER)
    assert "**2026-12-04**" in page and "**Test CPU 9000**" in page and "2 cores" in page
    assert "load not recorded" in page
    assert "| 11 | s-OTDD | n = 4,000 | 100 ms | floor: product + sort | 80 ms | 0.80 |" in page
    assert "| POT sliced | 500 ms | 5.00 |" in page
    assert "authors' code *(recorded elsewhere)* | 2.50 s | 25.00 |" in page
    assert "ours takes 1.25× its floor" in page
    assert "| 10 | SKS | 49² grid | 1.50 s | — | — | — |" in page and "no peer here" in page
    assert "benchmark failed: ImportError: boom" in page


def test_timings_recorded_elsewhere_are_read_from_the_reference_data(data_dir):
    page = performance.render(RECORD, data_dir)
    line = next(x for x in page.splitlines() if "authors_cpp.json" in x)
    for part in ("someone/mfc", "abc123", "./mfc 8000", "Other CPU", "8000: 250 ms",
                 "16000: 1.25 s"):
        assert part in line
    # a peer recorded elsewhere is listed once, with its provenance, machine and clock
    assert page.count("`data/reference/x.npz`: repo@abc, python make.py; machine: not "
                      "recorded; clock: wall.") == 1
    assert "`data/reference/kernel_pde/authors_jax.json`: not recorded yet." in page


@pytest.mark.parametrize("timings", [{"8000": 0.25}, {"8000": {"seconds": 0.25}},
                                     [{"size": 8000, "median": 0.25}]])
def test_reference_layouts(timings):
    assert performance._timings_of({"timings": timings}) == [("8000", 0.25)]


def test_the_committed_page_is_generated_from_the_committed_record():
    if not performance.RECORD.exists():
        pytest.skip("no benchmark record yet (make bench)")
    record = json.loads(performance.RECORD.read_text())
    assert performance.PAGE.read_text() == performance.render(record), (
        "book/_performance.md is out of date: python -m icml25.book.site.performance --render")
    assert all(k in record["machine"] for k in ("cpu", "cores", "numpy"))
