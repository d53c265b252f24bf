"""The library's API reference: every module of ``lib/icml25``, by Sphinx's autodoc.

Built by ``make api`` into ``_build/api`` and by ``tests/test_api.py`` in nitpicky mode, with
warnings as errors: a reference in a docstring (``:func:`x```, ``:data:`X```) that names no
object of the library fails the test. A reference is resolved the way Python would resolve
the name: from the module of the docstring, then from the top, so ``:func:`mp_cdf``` in
``icml25.htmp`` finds ``icml25.htmp.marchenko_pastur.mp_cdf`` when the package exports it.
Types in a docstring's *Parameters* (``array of shape (n, d)``) are words, not references,
and references to other libraries are not checked (the build is offline, with no intersphinx
inventories).
"""

import importlib
import pkgutil
import re
import sys
from pathlib import Path

import icml25

project = "ICML 2025, Executable: the library"
# MathJax from the package, not from a network (the book is read offline)
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx-mathjax-offline"]
nitpicky = True
autodoc_default_options = {"members": True, "ignore-module-all": True}
autodoc_typehints = "none"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_param = False
napoleon_use_rtype = False
html_theme = "alabaster"
exclude_patterns = ["_build"]
#: Types are words here (see above), and other libraries' objects are not checked: a target
#: whose first part is another importable module (``numpy.ndarray``, ``os.replace``).
_OTHERS = sorted((set(sys.stdlib_module_names) | {m.name for m in pkgutil.iter_modules()})
                 - {"icml25"})
nitpick_ignore_regex = [("py:class", ".*"),
                        ("py:.*", "(" + "|".join(map(re.escape, _OTHERS)) + r")(\..*)?")]

MODULES = sorted(m.name for m in pkgutil.walk_packages(icml25.__path__, "icml25.")
                 if not m.name.endswith("__main__"))
#: One page a part of the library (``icml25.book``, ``icml25.common``, a method's package),
#: each with its modules; the pages are generated here (``api/*.rst`` is not committed).
PARTS = sorted({".".join(name.split(".")[:2]) for name in MODULES})
_HERE = Path(__file__).parent


def _write(name: str, text: str) -> None:
    path = _HERE / f"{name}.rst"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n\n"


_write("index", _title("The library: API reference") + (icml25.__doc__ or "") + "\n\n"
       ".. toctree::\n   :maxdepth: 1\n\n" + "".join(f"   {part}\n" for part in PARTS))
for _part in PARTS:
    _write(_part, _title(_part) + "".join(
        f".. automodule:: {name}\n\n" if name == _part else
        f"{name}\n{'-' * len(name)}\n\n.. automodule:: {name}\n\n"
        for name in MODULES if name == _part or name.startswith(_part + ".")))


def _canonical(target: str, context: str | None) -> str | None:
    """The documented name of what ``target`` names, seen from the module ``context``."""
    for base in ([context] if context else []) + [""]:
        parts = (f"{base}.{target}" if base else target).split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except (ImportError, ValueError):  # ValueError: an empty name ("a..b", ".")
                continue
            try:
                for name in parts[cut:]:
                    obj = getattr(obj, name)
            except AttributeError:
                break
            if cut == len(parts):
                return obj.__name__
            module, qual = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
            if module and qual and module.startswith("icml25"):
                return f"{module}.{qual}"
            return ".".join(parts)  # a constant: documented where it is found
    return None


def _resolve(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"].lstrip("~.")
    name = _canonical(target, node.get("py:module"))
    if name is None or name == target:
        return None
    node = node.deepcopy()
    node["reftarget"] = name
    return env.get_domain("py").resolve_xref(env, node["refdoc"], app.builder,
                                              node["reftype"], name, node, contnode)


def _skip_generated(app, what, name, obj, skip, options):
    """scikit-learn writes ``set_*_request`` methods into its estimators' subclasses (a
    classifier's ``set_score_request``); their docstrings are scikit-learn's, with references
    to its own glossary, and nothing of the book."""
    if re.fullmatch(r"set_\w+_request", name):
        return True
    return None


def setup(app):
    app.connect("missing-reference", _resolve)
    app.connect("autodoc-skip-member", _skip_generated)
