"""Root pytest setup, for the library tests and the chapter notebooks (nbval) alike.

nbval does not compare glued values (``application/papermill.record/...``): they are
full-precision floats for the prose, whose last digits follow the CPU's BLAS kernels (a re-run on
another machine of the same kind differed in the 6th digit of a p-value). The claim lines, which
nbval does compare in the tagged cells, are rounded by ``book.claim``.
"""

# myst-nb stores a glued value under "application/papermill.record/<its own mimetype>".
GLUE_KEYS = tuple(f"application/papermill.record/{m}"
                  for m in ("text/plain", "text/html", "text/markdown", "image/png"))


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = item.parent
        if type(notebook).__name__ == "IPyNbFile" and GLUE_KEYS[0] not in notebook.skip_compare:
            notebook.skip_compare = (*notebook.skip_compare, *GLUE_KEYS)
