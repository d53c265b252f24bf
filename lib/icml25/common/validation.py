"""Checks of arguments at a public boundary, one message style: ``name must be ...; got X``.

A method module calls these on what a caller hands it (sizes, rates, arrays, names), in the
manner of scikit-learn's ``check_scalar`` and ``check_array``, so that a wrong argument fails at
once with a message that names the argument, what it must be and what it was. Every check
raises ``ValueError`` (a wrong type included: the methods' boundaries have always raised
``ValueError``, and their callers catch that one class) and returns the value converted
(``int``, ``float``, ``numpy.ndarray``), so a call reads ``n = check_int(n, "n", minimum=1)``.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

__all__ = ["check_array", "check_choice", "check_int", "check_scalar"]


def _interval(minimum, maximum, open_minimum=False, open_maximum=False) -> str:
    """``positive``, ``>= 2``, ``in [0, 1)``: the words for a range of numbers."""
    if minimum is not None and maximum is not None:
        return (f"in {'(' if open_minimum else '['}{minimum}, "
                f"{maximum}{')' if open_maximum else ']'}")
    if minimum is not None:
        if minimum == 0:
            return "positive" if open_minimum else "non-negative"
        return f"{'>' if open_minimum else '>='} {minimum}"
    return f"{'<' if open_maximum else '<='} {maximum}"


def check_int(value, name: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """``value`` as an ``int``, if it is an integer within ``[minimum, maximum]``.

    Parameters
    ----------
    value : object
        The argument. A Python or numpy integer is accepted; ``bool`` (an ``int`` subclass
        that is never meant as a count) and non-integral numbers (``3.0`` included) are not.
    name : str
        The argument's name, for the message.
    minimum, maximum : int, optional
        Inclusive bounds; ``minimum=1`` asks for a positive integer.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``"n must be an integer; got 2.5"`` or ``"n must be positive; got 0"``.
    """
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        words = (_interval(0, None, open_minimum=True) if minimum == 1 and maximum is None
                 else _interval(minimum, maximum))
        raise ValueError(f"{name} must be {words}; got {value!r}")
    return int(value)


def check_scalar(value, name: str, *, minimum: float | None = None,
                 maximum: float | None = None, open_minimum: bool = False,
                 open_maximum: bool = False) -> float:
    """``value`` as a ``float``, if it is a finite real number within the given range.

    Parameters
    ----------
    value : object
        The argument: a Python or numpy real number (an integer included), not ``bool``, not
        NaN or infinite.
    name : str
        The argument's name, for the message.
    minimum, maximum : float, optional
        Bounds of the range.
    open_minimum, open_maximum : bool
        Whether the bound itself is excluded: ``minimum=0, open_minimum=True`` asks for
        :math:`x > 0`, ``minimum=0, maximum=1, open_minimum=True, open_maximum=True`` for
        :math:`x \\in (0, 1)`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``"level must be a real number; got '0.9'"``, ``"ell must be finite; got inf"`` or
        ``"level must be in (0, 1); got 1.5"``.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number; got {value!r}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite; got {value!r}")
    low = minimum is not None and (x <= minimum if open_minimum else x < minimum)
    high = maximum is not None and (x >= maximum if open_maximum else x > maximum)
    if low or high:
        words = _interval(minimum, maximum, open_minimum, open_maximum)
        raise ValueError(f"{name} must be {words}; got {value!r}")
    return x


def check_array(value, name: str, *, ndim: int | None = None, finite: bool = True,
                dtype=float) -> np.ndarray:
    """``value`` as a numpy array of ``dtype``, checked for its number of axes and finiteness.

    Parameters
    ----------
    value : array_like
        The argument.
    name : str
        The argument's name, for the message.
    ndim : int, optional
        The number of axes the array must have.
    finite : bool
        Refuse NaN and infinite entries (for a floating or complex ``dtype``).
    dtype : numpy dtype
        What the array is converted to (``None`` keeps numpy's inference).

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValueError
        ``"x must be a 2-d array; got shape (5,)"``, ``"x must be finite; got 1 non-finite
        value(s)"`` or the conversion's failure, re-raised with the name.
    """
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as err:
        kind = np.dtype(dtype).name if dtype is not None else "numbers"
        raise ValueError(f"{name} must be an array of {kind}; got "
                         f"{type(value).__name__} ({err})") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-d array; got shape {arr.shape}")
    if finite and arr.dtype.kind in "fc":
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        if bad:
            raise ValueError(f"{name} must be finite; got {bad} non-finite value(s)")
    return arr


def check_choice(value, name: str, choices):
    """``value`` unchanged, if it is one of ``choices``.

    Parameters
    ----------
    value : object
        The argument.
    name : str
        The argument's name, for the message.
    choices : iterable
        What is allowed (compared with ``==``; unhashable values are fine).

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ValueError
        ``"mode must be one of ('a', 'b'); got 'c'"``.
    """
    choices = tuple(choices)
    try:
        ok = any(value == c for c in choices)
    except (TypeError, ValueError):  # an array compared with a string, for instance
        ok = False
    if not ok or isinstance(value, np.ndarray):
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value
