"""A claim's declared threshold, for a chapter's code that draws or counts against it.

A chapter never types a declared threshold again (``tests/test_code_in_book.py`` looks): a
reference line at the paper's figure, or the seeds below the bar, read it from ``claims.toml``
with :func:`threshold`. The run records that it read the declaration, as :func:`icml25.book.claim`
does, so a changed threshold makes the notebook stale.

(A module of its own, imported only by the chapters that use it: a new function in the package
that every notebook imports would make every executed notebook stale.)
"""

from __future__ import annotations

from icml25.book import claims as _claims
from icml25.book import current
from icml25.book import declared as _declared

__all__ = ["threshold"]


def threshold(id: str):
    """The threshold declared for claim ``id`` in the chapter's ``claims.toml``: a number, a
    bool, or a ``(low, high)`` range. A claim whose threshold the run computes has none."""
    run = current()
    fields, read = _claims._declaration(id)
    if fields["threshold"] == _declared.COMPUTED:
        raise ValueError(f"claim {id!r} declares a computed threshold: the run derives it")
    run.declared.update(read)
    return fields["threshold"]
