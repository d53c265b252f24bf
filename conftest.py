"""Root pytest setup, for the library tests and the chapter notebooks (nbval) alike.

* Every kernel that nbval starts inherits the pinned CPU numerics of :mod:`icml25.common.numerics`
  (one thread, AVX2 code paths on x86), as the runner's executions do.
* nbval's kernels listen on Unix sockets, as the runner's do
  (:func:`icml25.book.run.runner.unix_socket_manager`): TCP ports picked free race with the other
  test workers' kernels and the Dask cluster of the executor tests.
* A claim's output is compared as what it is, not as text: its verdict exactly, its value within
  the tolerance the claim declares (:func:`icml25.book.claims.same_result`). The rendered box and
  line around it are not compared, since they print the value.
* nbval does not compare glued values (``application/papermill.record/...``): they are
  full-precision floats for the prose, whose last digits follow the CPU's BLAS kernels.
"""

from icml25.common import numerics

# Before anything imports numpy or torch: they read the pinned variables when they load, so the
# library tests in this process compute with the same kernels as the notebooks' kernels do.
numerics.pin_process()

from pathlib import Path  # noqa: E402

from icml25.book import claims, declarations  # noqa: E402  (after the pins, on purpose)

# myst-nb stores a glued value under "application/papermill.record/<its own mimetype>".
GLUE_KEYS = tuple(f"application/papermill.record/{m}"
                  for m in ("text/plain", "text/html", "text/markdown", "image/png"))


def _patch_nbval():
    try:
        from nbval.plugin import IPyNbCell
    except ImportError:  # pragma: no cover - nbval is pinned in requirements.txt
        return
    if getattr(IPyNbCell.compare_outputs, "icml25", False):
        return
    original = IPyNbCell.compare_outputs

    def compare_outputs(self, test, ref, skip_compare=None):
        # the tolerances the chapter declares today (a record keeps only its measurement)
        notebook = getattr(self.parent, "fspath", None)
        tolerances = declarations.tolerances(Path(str(notebook)).parent) if notebook else {}
        problems = claims.compare_outputs(test, ref, tolerances)
        if problems:
            self.comparison_traceback = ["Claims differ from the published notebook:", *problems]
            return False
        return original(self, claims.split_outputs(test)[1], claims.split_outputs(ref)[1],
                        skip_compare)

    compare_outputs.icml25 = True
    IPyNbCell.compare_outputs = compare_outputs

    import nbval.kernel  # builds its kernels with the KernelManager name in its own namespace
    from icml25.book.run.runner import unix_socket_manager

    nbval.kernel.KernelManager = unix_socket_manager(nbval.kernel.KernelManager)


_patch_nbval()


def pytest_collection_modifyitems(items):
    for item in items:
        notebook = item.parent
        if type(notebook).__name__ == "IPyNbFile" and GLUE_KEYS[0] not in notebook.skip_compare:
            notebook.skip_compare = (*notebook.skip_compare, *GLUE_KEYS)
