"""The floor beneath the methods and the book: what both use, and nothing of either.

The parts:

* :mod:`.paths` -- the repository's folders;
* :mod:`.hashing` -- the sha256 of a file;
* :mod:`.data` -- the registry of committed data (``data/MANIFEST``: path, sha256, command);
* :mod:`.streams` -- named, independent random streams of one seed, and ``as_generator``;
* :mod:`.stats` -- the bootstrap interval of a statistic, one API;
* :mod:`.validation` -- checks of arguments at a public boundary, one message style;
* :mod:`.numerics` -- the pinned CPU numerics (threads, instruction set) of every execution;
* :mod:`.checkpoints` -- train per seed, save, load: the committed models' commands.

Nothing here imports :mod:`icml25.book` or a method module (``tests/test_layers.py``).
"""
