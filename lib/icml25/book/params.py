"""Modes and parameters: the ``parameters`` cell, overrides from the command line, validation.

Every notebook has one cell tagged ``parameters`` whose values are the **book** mode defaults::

    mode = "book"  # choices: quick, book, paper
    seed = 0

papermill alone only warns about an unknown parameter; here an unknown name or a bad value is
refused, in one line that names the parameter and the choices, before any work starts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

#: The three execution modes, cheapest first (see the book's introduction).
MODES = ("quick", "book", "paper")
#: The mode of the publication run (with no other override, its notebook is the committed one).
PUBLISHED_MODE = "book"

# What the runner and the kernel (two processes) tell each other, and the cluster's address:
#: The runner asks the kernel's ``book.finish()`` to write the run's record to this file.
RECORD_ENV = "ICML25_RECORD"
#: The notebook source the kernel is running (relative path): its claims' declarations.
SOURCE_ENV = "ICML25_SOURCE"
#: A Dask scheduler address for ``run``, ``book`` and ``robustness`` (:mod:`.run.executor`).
SCHEDULER_ENV = "ICML25_SCHEDULER"


class ParameterError(ValueError):
    """A parameter override that the notebook does not accept."""


@dataclass(frozen=True)
class Parameter:
    """One assignment of a ``parameters`` cell: its name, default and allowed values."""

    name: str
    default: Any
    choices: tuple | None = None

    @property
    def kind(self) -> str:
        return type(self.default).__name__

    def check(self, value: Any, where: str = "") -> Any:
        """Return ``value`` converted to this parameter's type, or raise :class:`ParameterError`."""
        at = f" ({where})" if where else ""
        if self.choices is not None:
            if value not in self.choices:
                raise ParameterError(
                    f"parameter '{self.name}' must be one of {', '.join(map(str, self.choices))}; "
                    f"got {value!r}{at}"
                )
            return value
        expected = type(self.default)
        ok = (
            (expected is bool and isinstance(value, bool))
            or (expected is int and isinstance(value, int) and not isinstance(value, bool))
            or (expected is float and isinstance(value, (int, float)) and not isinstance(value, bool))
            or (expected is str and isinstance(value, str))
            or (self.default is None)
        )
        if not ok:
            raise ParameterError(
                f"parameter '{self.name}' must be of type {self.kind} (default {self.default!r}); "
                f"got {value!r}{at}"
            )
        return float(value) if expected is float else value


_CHOICES = re.compile(r"#\s*choices:\s*(.+)$")


def check_mode(mode) -> str:
    """``mode`` if it is one of :data:`MODES`; else :class:`ParameterError` naming the choices."""
    if mode not in MODES:
        raise ParameterError(f"parameter 'mode' must be one of {', '.join(MODES)}; got {mode!r}")
    return mode


def check_seed(seed) -> int:
    """``seed`` as an ``int`` if it is a non-negative integer; else :class:`ParameterError`."""
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterError(f"parameter 'seed' must be a non-negative integer; got {seed!r}")
    return int(seed)


def parse_parameters_cell(source: str) -> dict[str, Parameter]:
    """Read the assignments of a ``parameters`` cell (literal values only).

    A trailing comment ``# choices: a, b, c`` restricts a parameter to those values; ``mode`` is
    always restricted to :data:`MODES`.
    """
    tree = ast.parse(source)
    lines = source.splitlines()
    params: dict[str, Parameter] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            continue
        choices = None
        match = _CHOICES.search(lines[node.lineno - 1])
        if match:
            choices = tuple(_literal(c.strip()) for c in match.group(1).split(",") if c.strip())
        if target.id == "mode":
            choices = MODES
        params[target.id] = Parameter(target.id, default, choices)
    return params


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def parse_overrides(text: str | None) -> dict[str, Any]:
    """``"seed=3 mode=quick"`` (spaces or commas) → ``{"seed": 3, "mode": "quick"}``."""
    overrides: dict[str, Any] = {}
    for item in re.split(r"[\s,]+", (text or "").strip()):
        if not item:
            continue
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise ParameterError(f"cannot read parameter {item!r}: write NAME=VALUE, e.g. seed=3")
        overrides[name] = _literal(value)
    return overrides


def validate_overrides(
    overrides: dict[str, Any], params: dict[str, Parameter], where: str = ""
) -> dict[str, Any]:
    """Check every override against the notebook's parameters; return the converted values."""
    checked = {}
    for name, value in overrides.items():
        if name not in params:
            raise ParameterError(
                f"unknown parameter '{name}'{' in ' + where if where else ''}; "
                f"choices: {', '.join(params) or '(none)'}"
            )
        checked[name] = params[name].check(value, where)
    if "seed" in checked:
        checked["seed"] = check_seed(checked["seed"])
    return checked
