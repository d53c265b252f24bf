"""The runner end to end on a throw-away chapter, and the command line's refusals."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from icml25.book.run import notebooks, runner
from icml25.common import paths

GOOD = '''# %% [markdown]
# # A tiny chapter

# %% tags=["parameters"]
mode = "book"  # choices: quick, book, paper
seed = 0

# %%
from icml25 import book
run = book.setup(mode=mode, seed=seed, sizes={"quick": dict(n=2), "book": dict(n=3), "paper": dict(n=4)})

# %% tags=["nbval-check-output"]
book.claim("n", run.size.n)

# %%
book.finish()
'''

BAD = GOOD.replace('book.claim("n"', 'raise RuntimeError("boom"); book.claim("n"')


DECLARED = """
[[claims]]
id = "n"
notebook = "method"
kind = "claim"
fidelity = "paper"
statement = "n is at least 3"
paper = "3"
op = ">="
threshold = 3
varies = []

[[claims]]
id = "noise"
notebook = "method"
kind = "claim"
fidelity = "paper"
statement = "a noisy mean is positive"
paper = "-"
op = ">"
threshold = 0
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RUNS", tmp_path / "_build" / "runs")
    chapter = tmp_path / "chapters" / "99-tiny"
    chapter.mkdir(parents=True)
    (chapter / "method.py").write_text(GOOD)
    (chapter / "claims.toml").write_text(DECLARED.split("[[claims]]\nid = \"noise\"")[0])
    return tmp_path


def test_book_run_publishes_with_provenance_and_quick_run_does_not(tree):
    [chapter] = notebooks.chapters(tree / "chapters")
    [result] = runner.run([chapter], {}, progress=False, log=lambda *_: None)
    assert result.ok and (result.claims_held, result.claims_total) == (1, 1)
    published = chapter.path / "method.ipynb"
    nb = nbformat.read(published, as_version=4)
    record = nb.metadata["icml25"]
    assert record["mode"] == "book" and record["overrides"] == {}
    assert record["claims"][0]["measured"] == "3"
    assert "papermill" not in nb.metadata
    assert not any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)
    before = published.read_bytes()

    [quick] = runner.run([chapter], {"mode": "quick"}, progress=False, log=lambda *_: None)
    assert quick.ok and quick.output.endswith("99-tiny/method.quick.ipynb")
    assert published.read_bytes() == before  # other modes never touch the committed notebook
    [seeded] = runner.run([chapter], {"seed": 3}, progress=False, log=lambda *_: None)
    assert seeded.output.endswith("99-tiny/method.book.seed=3.ipynb")
    assert published.read_bytes() == before


def test_a_failing_notebook_leaves_the_published_one_and_the_others_run(tree):
    [chapter] = notebooks.chapters(tree / "chapters")
    runner.run([chapter], {}, progress=False, log=lambda *_: None)
    published = chapter.path / "method.ipynb"
    before = published.read_bytes()
    (chapter.path / "method.py").write_text(BAD)
    (chapter.path / "other.py").write_text(GOOD.replace('claim("n"', 'claim("m"'))
    with open(chapter.path / "claims.toml", "a") as declared:
        declared.write(DECLARED.split("[[claims]]")[1].replace('"n"', '"m"')
                       .replace('"method"', '"other"').join(["[[claims]]", ""]))
    results = runner.run([chapter], {}, progress=False, log=lambda *_: None)
    assert [r.ok for r in results] == [False, True]
    assert "method.py cell 4 of 5 (In [3])" in results[0].error and "RuntimeError: boom" in results[0].error
    assert published.read_bytes() == before
    assert (paths.RUNS / "failed" / "99-tiny" / "method.book.ipynb").exists()
    assert "FAILED" in runner.summary(results)


def test_overrides_are_validated_before_anything_runs(tree):
    [chapter] = notebooks.chapters(tree / "chapters")
    with pytest.raises(ValueError, match="unknown parameter 'sed'"):
        runner.run([chapter], {"sed": 3}, progress=False)
    assert not (chapter.path / "method.ipynb").exists()


def test_a_perturbed_run_never_publishes(tree, monkeypatch):
    [chapter] = notebooks.chapters(tree / "chapters")
    monkeypatch.setenv("ICML25_PERTURB", "mkl")
    with pytest.raises(ValueError, match="never replaces a published notebook"):
        runner.run([chapter], {}, progress=False)
    assert not (chapter.path / "method.ipynb").exists()


def cli(*args):
    return subprocess.run([sys.executable, "-m", "icml25.book", *args],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "11", "-p", "sed=3"], "unknown parameter 'sed'"),
        (["run", "11", "-p", "mode=fast"], "must be one of quick, book, paper"),
        (["run", "11", "-p", "seed=x"], "must be of type int"),
        (["run", "nosuch"], "no chapter 'nosuch'; choices: "
         + ", ".join(c.name for c in notebooks.chapters())),
    ],
)
def test_cli_refuses_in_one_line(args, message):
    done = cli(*args)
    assert done.returncode == 2
    assert message in done.stderr and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


def test_cli_status_lists_every_notebook():
    done = cli("status")
    assert done.returncode == 0
    for chapter in notebooks.chapters():
        for py in chapter.notebooks:
            assert f"| {chapter.name} | {py.stem}".replace(" ", "") in done.stdout.replace(" ", "")


def test_an_explicit_book_mode_still_publishes_without_an_injected_cell(tree):
    [chapter] = notebooks.chapters(tree / "chapters")
    [result] = runner.run([chapter], {"mode": "book"}, progress=False, log=lambda *_: None)
    nb = nbformat.read(chapter.path / "method.ipynb", as_version=4)
    assert result.ok and notebooks.code_cells(nb) == notebooks.code_cells(
        notebooks.read_source(chapter.path / "method.py"))


def test_seed_record_holds_independent_seeds_pooled_by_the_ledger(tree):
    from icml25.book.site import ledger
    from icml25.book.run import robustness
    from icml25.book.run.staleness import state

    [chapter] = notebooks.chapters(tree / "chapters")
    source = chapter.path / "method.py"
    (chapter.path / "claims.toml").write_text(DECLARED)
    source.write_text(GOOD.replace(
        "# %%\nbook.finish()",
        '# %% tags=["nbval-check-output"]\n'
        'book.claim("noise", 0.3 + run.rng("noise").normal(0, 0.1))\n\n'
        "# %%\nbook.finish()"))
    with pytest.raises(ValueError, match="re-execute first"):
        robustness.measure([chapter], 3, jobs=1, log=lambda *_: None)
    runner.run([chapter], {}, progress=False, log=lambda *_: None)
    assert robustness.problems(chapter)[0].endswith("(run `make robustness CHAPTER=99`)")
    records = robustness.measure([chapter], 5, jobs=2, log=lambda *_: None)
    robustness.write(chapter, records[chapter.name])
    assert robustness.problems(chapter) == []
    rows = {row.id: row for row in ledger.rows(chapter)}
    values = [s["value"] for s in rows["noise"].seeds.values()]
    assert len(set(values)) == 5  # five independent draws, not one seed's
    assert rows["noise"].pooled.n == 5 and rows["noise"].verdict == "holds"
    assert rows["n"].pooled.method == "one run"  # declared deterministic
    # The seed record is not an input of the notebook it came from.
    assert not state(source).stale
    # More seeds keep the five that ran and add the missing ones.
    more = robustness.measure([chapter], 6, jobs=1, log=lambda *_: None)[chapter.name]
    assert [c["seeds"]["4"] for c in more["claims"]] == [
        c["seeds"]["4"] for c in records[chapter.name]["claims"]]
    assert len(more["claims"][1]["seeds"]) == 6
    robustness.write(chapter, more)  # asking for fewer seeds keeps those that ran
    assert robustness.measure([chapter], 3, jobs=1, log=lambda *_: None)[chapter.name] == more
    prose = source.read_text().replace("# # A tiny chapter", "# # A tiny chapter, retitled")
    source.write_text(prose)  # prose does not move a figure: the seeds still stand
    assert robustness.problems(chapter) == []
    # Code after the last claim (a worked solution) cannot move a claim: the seeds still stand.
    solved = prose.replace("# %%\nbook.finish()", "# %%\nanswer = 6 * 7\n\n# %%\nbook.finish()")
    source.write_text(solved)
    assert robustness.problems(chapter) == []
    source.write_text(solved.replace("0.3 +", "0.2 +"))
    assert any("input changed" in p for p in robustness.problems(chapter))
    # A threshold changed in the declarations makes the notebook and the seeds stale.
    source.write_text(solved)
    (chapter.path / "claims.toml").write_text(DECLARED.replace("threshold = 0\n",
                                                               "threshold = 0.1\n"))
    assert any("claims.toml" in reason for reason in state(source).reasons)
    assert any("claims.toml" in p for p in robustness.problems(chapter))


def test_kernels_listen_on_unix_sockets_in_a_folder_of_their_own(tmp_path):
    # TCP ports picked free race with other processes; socket files in a fresh folder cannot.
    from jupyter_client.manager import KernelManager

    manager_class = runner.unix_socket_manager(KernelManager)
    if os.name != "posix":
        assert manager_class is KernelManager
        return
    one, two = manager_class(), manager_class()
    assert one.transport == two.transport == "ipc"
    assert Path(one.ip).parent != Path(two.ip).parent
    assert Path(one.ip).parent.is_dir()
    one.cleanup_resources()
    assert not Path(one.ip).parent.exists()
    given = manager_class(folder=tmp_path)
    assert Path(given.ip).parent == tmp_path
    given.cleanup_resources()
    assert tmp_path.is_dir()  # a folder the caller gave is the caller's to remove
    two.cleanup_resources()


def test_a_change_that_moves_no_value_carries_the_seed_record_over(tree):
    from icml25.book.run import robustness

    [chapter] = notebooks.chapters(tree / "chapters")
    source = chapter.path / "method.py"
    (chapter.path / "claims.toml").write_text(DECLARED)
    noisy = GOOD.replace(
        "# %%\nbook.finish()",
        '# %% tags=["nbval-check-output"]\n'
        'book.claim("noise", 0.3 + run.rng("noise").normal(0, 0.1))\n\n'
        "# %%\nbook.finish()")
    source.write_text(noisy)
    quiet = dict(progress=False, log=lambda *_: None)
    runner.run([chapter], {}, **quiet)
    robustness.write(chapter, robustness.measure([chapter], 3, jobs=1, log=lambda *_: None)[
        chapter.name])
    # A refactor: the same draws written differently. The record goes stale ...
    source.write_text(noisy.replace('0.3 + run.rng("noise").normal(0, 0.1)',
                                    'run.rng("noise").normal(0, 0.1) + 0.3'))
    runner.run([chapter], {}, **quiet)
    assert any("input changed" in p for p in robustness.problems(chapter))
    # ... and is carried over once its highest seed measures the same again.
    [kept] = robustness.carry_over([chapter], jobs=1, log=lambda *_: None).values()
    assert kept["carried"][-1]["seed"] == 2 and kept["seeds"] == [0, 1, 2]
    robustness.write(chapter, kept)
    assert robustness.problems(chapter) == []
    # New numerics (another MKL branch): seed 0 moves in its last digits, within the claim's
    # tolerance; carried over, the record takes the published run as its seed 0.
    source.write_text(noisy.replace("0.3 +", "0.3 + 1e-9 +"))
    runner.run([chapter], {}, **quiet)
    assert any("seed 0 in the record" in p for p in robustness.problems(chapter))
    [kept] = robustness.carry_over([chapter], jobs=1, log=lambda *_: None).values()
    assert "seed 0 moved within tolerance" in kept["carried"][-1]["changed"][-1]
    robustness.write(chapter, kept)
    assert robustness.problems(chapter) == []
    # A change that moves the values is not carried over: its seeds must run again.
    source.write_text(noisy.replace("0.3 +", "0.2 +"))
    runner.run([chapter], {}, **quiet)
    assert robustness.carry_over([chapter], jobs=1, log=lambda *_: None) == {}
    assert robustness.problems(chapter)
