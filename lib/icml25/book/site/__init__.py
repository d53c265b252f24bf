"""The site: the pages generated from the executed notebooks, and the build's own steps.

The parts:

* :mod:`.generated` -- the "do not edit" header and the verdicts' badges;
* :mod:`.ledger` -- the claims ledger, the chapters' tables and glance boxes, claims.json/csv;
* :mod:`.landing` -- the landing page's cards and the course table;
* :mod:`.sphinx_ext` -- the Sphinx extension (pooled verdict boxes, edit links, downloads);
* :mod:`.printing` -- one PDF per chapter (headless Chromium);
* :mod:`.student` -- the student editions (solutions replaced by empty cells).

It stands on :mod:`icml25.book.run`, the kernel side and :mod:`icml25.common`; only the command
line (``python -m icml25.book``) stands on it.
"""
