"""Content hashes: what provenance and the data registry compare."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path | str) -> str:
    """Hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_digest(path: Path | str) -> str:
    """Hex sha256 of a Python module's code: its text without comments, docstrings and blank
    lines, each line stripped of trailing space.

    What a module computes is its code; a comment or a docstring cannot move a figure, so an
    edit to them should not make the notebooks that imported it stale. The comments are found
    by :mod:`tokenize` and the docstrings by :mod:`ast` (by position), and cut out of the text
    itself, so the digest does not depend on how one Python version unparses a tree. A file
    that does not parse is hashed as it is (:func:`sha256_file`).
    """
    import ast
    import io
    import tokenize

    text = Path(path).read_text(encoding="utf-8")
    try:
        tree = ast.parse(text)
        comments = [(t.start, t.end) for t in tokenize.generate_tokens(io.StringIO(text).readline)
                    if t.type == tokenize.COMMENT]
    except (SyntaxError, tokenize.TokenError, ValueError):
        return sha256_file(path)
    docstrings = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            doc = body[0]
            docstrings.append(((doc.lineno, doc.col_offset), (doc.end_lineno, doc.end_col_offset)))
    lines = text.splitlines()
    # cut from the last span back, so that earlier positions stay valid; positions are
    # (1-based line, 0-based column); ast's columns count UTF-8 bytes, tokenize's characters
    for (l0, c0), (l1, c1) in sorted(comments + docstrings, reverse=True):
        first, last = lines[l0 - 1], lines[l1 - 1]
        if (l0, c0) in {d[0] for d in docstrings}:
            c0 = len(first.encode()[:c0].decode(errors="ignore"))
            c1 = len(last.encode()[:c1].decode(errors="ignore"))
        lines[l0 - 1: l1] = [first[:c0] + last[c1:]]
    kept = [line.rstrip() for line in lines if line.strip()]
    return hashlib.sha256("\n".join(kept).encode()).hexdigest()
