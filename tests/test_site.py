"""icml25.book.site: what the build adds to the pages (the glance box) and the run spec's rules."""

import json

import pytest
from icml25.book.params import ParameterError
from icml25.book.run.spec import RunSpec
from icml25.book.site import sphinx_ext
from icml25.common import paths


def test_the_build_inserts_the_glance_box_once_under_the_title():
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# Title"},
                    {"cell_type": "code", "metadata": {}, "source": "x = 1", "outputs": [],
                     "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    once = sphinx_ext.with_glance(json.dumps(nb))
    cells = json.loads(once)["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "markdown", "code"]
    assert "{include} _glance.md" in cells[1]["source"]
    assert sphinx_ext.with_glance(once) == once


def test_a_run_spec_knows_whether_it_publishes_and_where_it_writes():
    source = paths.CHAPTERS / "12-equal-share" / "method.py"
    published = RunSpec.of(source)
    assert published.publishes and published.target == source.with_suffix(".ipynb")
    assert published.injected is None and published.mode == "book"
    seeded = RunSpec.of(source, {"seed": 3})
    assert not seeded.publishes and seeded.tag == "book.seed=3"
    assert seeded.target == paths.RUNS / "12-equal-share" / "method.book.seed=3.ipynb"
    assert seeded.injected == {"seed": 3}
    quick = RunSpec.of(source, {"mode": "quick"})
    assert not quick.publishes and quick.target.name == "method.quick.ipynb"


@pytest.mark.parametrize("overrides, message", [
    ({"mode": "fast"}, "must be one of quick, book, paper"),
    ({"seed": -1}, "non-negative integer"),
    ({"sed": 3}, "unknown parameter 'sed'"),
])
def test_a_run_spec_refuses_what_the_notebook_does_not_take(overrides, message):
    with pytest.raises(ParameterError, match=message):
        RunSpec.of(paths.CHAPTERS / "12-equal-share" / "method.py", overrides)
