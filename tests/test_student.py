"""Student editions: no solution left, a cell for each exercise, the rest as in the source."""

import re

import nbformat
import pytest

from icml25.book.run import notebooks
from icml25.common import paths
from icml25.book.site import student

SOURCES = [py for chapter in notebooks.chapters() for py in chapter.notebooks]
IDS = [paths.relative(py) for py in SOURCES]


def _gated_code(py):
    """Code cells of the source that lie inside a gated solution."""
    inside, found = False, []
    for cell in notebooks.read_source(py).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if "{solution-start}" in line:
                    inside = True
                elif "{solution-end}" in line:
                    inside = False
        elif inside:
            found.append(cell.source.strip())
    return found


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_edition_has_no_solution_and_a_cell_per_exercise(py):
    nb = student.edition(py)
    text = "\n".join(c.source for c in nb.cells)
    assert "{solution" not in text
    source = py.read_text()
    assert sum(student.TAG in c.metadata.get("tags", []) for c in nb.cells) == \
        source.count("{exercise}")
    code = [c.source.strip() for c in nb.cells if c.cell_type == "code"]
    assert not set(_gated_code(py)) & set(code), "solution code left in the edition"


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_edition_otherwise_matches_its_source(py):
    nb = student.edition(py)
    ours = [c for c in nb.cells if student.TAG not in c.metadata.get("tags", [])]
    source = notebooks.read_source(py).cells
    gated = set(_gated_code(py))
    kept_code = [c.source.strip() for c in source
                 if c.cell_type == "code" and c.source.strip() not in gated]
    assert [c.source.strip() for c in ours if c.cell_type == "code"] == kept_code
    values = student.glued_values(py.with_suffix(".ipynb"))
    figures = student.figure_names("\n".join(c.source for c in source
                                             if c.cell_type == "markdown"))
    untouched = [student.plain_markdown(c.source, values, figures) for c in source
                 if c.cell_type == "markdown" and "solution" not in c.source]
    ours_md = [c.source for c in ours if c.cell_type == "markdown"]
    assert all(md in ours_md for md in untouched)
    # the front page first; then, up to the first exercise, the chapter cell for cell
    assert ours[0].source.startswith("# ") and student.NOTE in ours[0].source
    first = next(i for i, c in enumerate(source) if "{exercise}" in c.source)
    assert [c.cell_type for c in ours[1:first + 1]] == [c.cell_type for c in source[:first]]
    assert [c.source for c in ours[1:first + 1] if c.cell_type == "code"] == \
        [c.source for c in source[:first] if c.cell_type == "code"]


@pytest.mark.parametrize("py", SOURCES, ids=IDS)
def test_edition_reads_without_the_books_renderer(py):
    """No MyST left for plain Jupyter to show raw: no glued value, included code, directive
    fence or role; stable cell ids."""
    nb = student.edition(py)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    raw = re.findall(r"\{glue|\{literalinclude|^(?:`{3,}|:{3,})\{[\w:-]+\}|\{[a-z:]+\}`",
                     text, re.M)
    assert not raw, raw[:5]
    assert [c["id"] for c in nb.cells] == [c["id"] for c in student.edition(py).cells]
    assert len({c["id"] for c in nb.cells}) == len(nb.cells)
    nbformat.validate(nb)


def test_plain_markdown_writes_out_what_the_renderer_would():
    text = ("Rho is {glue:text}`rho:.2f` ({cite}`nguyen2025sotdd`), see {numref}`fig-a`.\n"
            "```{exercise} Predict\n:label: ex\n\nWhat is {glue:text}`n`?\n```\n"
            "```{glue:figure} fig\n:name: fig-a\n\n**A title.** More.\n```")
    figures = student.figure_names(text)
    out = student.plain_markdown(text, {"rho": "0.4567", "n": "12"}, figures)
    assert out.startswith("Rho is 0.46 (Nguyen et al., 2025), see the figure “A title.”.")
    assert "#### Exercise: Predict" in out and "What is 12?" in out
    assert "{" not in out


def test_an_unclosed_gated_solution_is_refused(tmp_path):
    bad = tmp_path / "method.py"
    bad.write_text('# %% [markdown]\n# ```{exercise} E\n# :label: e\n# Do it.\n# ```\n#\n'
                   '# ```{solution-start} e\n# ```\n\n# %%\nx = 1\n')
    with pytest.raises(ValueError, match="has no \\{solution-end\\}"):
        student.edition(bad)


def test_one_piece_and_gated_solutions_are_both_removed(tmp_path):
    py = tmp_path / "method.py"
    py.write_text(
        '# %% [markdown]\n# ```{exercise} One\n# :label: one\n# Compute.\n# ```\n#\n'
        '# ```{solution} one\n# :class: dropdown\n#\n# It is 42.\n# ```\n#\n'
        '# ```{exercise} Two\n# :label: two\n# Compute more.\n# ```\n#\n'
        '# ```{solution-start} two\n# :class: dropdown\n# ```\n#\n# We compute:\n\n'
        '# %%\nanswer = 6 * 7\n\n'
        '# %% [markdown]\n# which is 42.\n#\n# ```{solution-end}\n# ```\n#\n# After.\n')
    nb = student.edition(py)
    text = "\n".join(c.source for c in nb.cells)
    assert "42" not in text and "answer" not in text and "We compute" not in text
    assert "After." in text and "Compute more." in text
    assert [c.metadata.get("tags") for c in nb.cells if c.cell_type == "code"] == \
        [["student"], ["student"]]


@pytest.mark.slow
def test_edition_runs_in_quick_mode_up_to_the_first_exercise(tmp_path):
    import papermill

    py = paths.CHAPTERS / "11-sotdd" / "method.py"
    nb = student.edition(py)
    first = next(i for i, c in enumerate(nb.cells) if student.TAG in c.metadata.get("tags", []))
    nb.cells = nb.cells[:first]
    source = tmp_path / "student.ipynb"
    nbformat.write(nb, source)
    papermill.execute_notebook(str(source), str(tmp_path / "out.ipynb"),
                               parameters={"mode": "quick"}, cwd=str(py.parent),
                               kernel_name="python3", progress_bar=False)
    executed = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert any(c.get("outputs") for c in executed.cells if c.cell_type == "code")
    assert not re.search(r"\{solution", "\n".join(c.source for c in executed.cells))


CHAPTERS = notebooks.chapters()


@pytest.mark.slow
@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.name for c in CHAPTERS])
def test_every_edition_runs_from_its_own_folder(chapter, tmp_path):
    """What a student gets: ``make student``'s folder, run top to bottom in quick mode with
    the folder as working directory (the chapter's own folder is not there to lean on)."""
    import papermill

    from icml25.common import numerics

    numerics.pin_process()
    written = student.write([chapter], out=tmp_path)
    folder = tmp_path / chapter.name
    assert {p.name for p in folder.iterdir()} >= {p.name for p in written} | {
        name for name in student.BESIDE if (chapter.path / name).exists()}
    for nb in written:
        papermill.execute_notebook(str(nb), str(nb.with_suffix(".out.ipynb")),
                                   parameters={"mode": "quick"}, kernel_name="python3",
                                   cwd=str(folder), progress_bar=False, log_output=False,
                                   execution_timeout=600)


def _solutions(py):
    """``{label: code}``: each gated solution's code cells, joined, as a student might write
    them."""
    code, label = {}, None
    for cell in notebooks.read_source(py).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                start = student._OPEN.match(line)
                if start and start.group(2) == "solution-start":
                    label = start.group(3)
                elif student._END.match(line):
                    label = None
        elif label:
            code[label] = code.get(label, "") + cell.source + "\n"
    return code


@pytest.mark.slow
def test_grading_tells_a_solved_edition_from_an_unsolved_one(tmp_path):
    py = next(c for c in notebooks.chapters() if c.name.startswith("01-")).path / "method.py"
    assert set(student.answers(py)) and all(student.answers(py).values())
    unsolved = student.write([next(c for c in notebooks.chapters()
                                   if c.name.startswith("01-"))], out=tmp_path)[0]
    solved_nb = nbformat.read(unsolved, as_version=4)
    code, pending = _solutions(py), None
    for cell in solved_nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("**Your solution**"):
            pending = re.search(r"exercise `([^`]+)`", cell.source).group(1)
        elif student.TAG in cell.metadata.get("tags", []) and pending in code:
            cell.source = code[pending]
    solved = unsolved.with_name("method.solved.ipynb")
    nbformat.write(solved_nb, solved)
    right = student.grade(solved)
    wrong = student.grade(unsolved)
    assert right and all(r[-1] for r in right), right
    assert wrong and not any(r[-1] for r in wrong), wrong
    assert [r[1] for r in right] == [r[1] for r in wrong]
