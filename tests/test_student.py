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
    untouched = [c.source for c in source
                 if c.cell_type == "markdown" and "solution" not in c.source]
    ours_md = [c.source for c in ours if c.cell_type == "markdown"]
    assert all(md in ours_md for md in untouched)
    # up to the first exercise, the edition is the chapter, cell for cell
    first = next(i for i, c in enumerate(source) if "{exercise}" in c.source)
    assert [c.source for c in ours[:first]] == [c.source for c in source[:first]]


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
