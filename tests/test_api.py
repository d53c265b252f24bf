"""The library's API reference builds without a warning in Sphinx's nitpicky mode.

Every module of ``lib/icml25`` is documented by autodoc (``api/conf.py``); a reference in a
docstring that names no object of the library, or a docstring that is not valid reST, fails.
"""

import subprocess
import sys

from icml25.common import paths


def test_the_api_reference_builds_with_every_reference_resolved(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-n", "-W", "--keep-going", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(paths.ROOT / "api"), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    for module in ("icml25.book.pooling", "icml25.common.optim", "icml25.cell_diff.model"):
        part = ".".join(module.split(".")[:2])
        page = (tmp_path / "html" / f"{part}.html").read_text()
        assert f'id="module-{module}"' in page, module
    assert 'href="icml25.cell_diff.html"' in (tmp_path / "html" / "index.html").read_text()
