"""The run machinery: what executes the chapters and keeps their records; never imported by a
notebook, so editing it does not make an executed chapter stale.

The parts, bottom up:

* :mod:`.notebooks` -- the chapters and their py:percent sources;
* :mod:`.spec` -- :class:`~.spec.RunSpec`, one execution said once (publishes? where to?);
* :mod:`.staleness` -- is a committed notebook what its inputs produce today?
* :mod:`.runner` -- papermill, atomic publishing, failures kept apart;
* :mod:`.executor` -- local processes or a Dask cluster, the same interface;
* :mod:`.robustness` -- the seed record: every claim under independent seeds.

It stands on the kernel side (:mod:`icml25.book`) and :mod:`icml25.common`; the site
(:mod:`icml25.book.site`) stands on it.
"""
