"""The import layers of ``lib/icml25``: every arrow points down, and no two modules import each
other in a circle (``import`` statements anywhere in a module, deferred ones included).

Floors, bottom up:

0. ``icml25.common`` -- beneath everything;
1. the methods (``icml25.<method>``) and ``icml25.minilm`` -- on ``common`` only;
2. ``icml25.book`` itself, what a notebook imports -- on ``common`` (never on a method, ``run``
   or ``site``);
3. ``icml25.book.run`` -- the run machinery;
4. ``icml25.book.site`` -- the generated pages and the build;
5. ``icml25.book.__main__`` -- the command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[1] / "lib"


def module_name(path: Path) -> str:
    parts = path.relative_to(LIB).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(name: str) -> int:
    if name.startswith("icml25.common"):
        return 0
    if name == "icml25.book.__main__":
        return 5
    if name.startswith("icml25.book.site"):
        return 4
    if name.startswith("icml25.book.run"):
        return 3
    if name.startswith("icml25.book"):
        return 2
    return 1


def imports(path: Path) -> set[str]:
    """The ``icml25`` modules a module imports (a package import counts as its ``__init__``)."""
    me = module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("icml25")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("icml25"):
                continue
            for alias in node.names:  # `from pkg import module` imports the module
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in MODULES else target)
    return {f for f in found if f != me}


MODULES = {module_name(p): p for p in sorted((LIB / "icml25").rglob("*.py"))}
GRAPH = {name: imports(path) for name, path in MODULES.items()}


def method_of(name: str) -> str:
    return name.split(".")[1] if name.count(".") >= 1 else name


@pytest.mark.parametrize("name", sorted(GRAPH))
def test_every_import_points_down_or_stays_on_its_floor(name):
    up = sorted(t for t in GRAPH[name] if floor(t) > floor(name))
    assert not up, f"{name} (floor {floor(name)}) imports {up} from a floor above"


def test_methods_stand_on_common_only():
    """A method module never imports the book, nor another paper's method (``minilm``, the
    shared sentence encoder, is the one method-floor module others may use)."""
    wrong = {}
    for name, targets in GRAPH.items():
        if floor(name) != 1:
            continue
        bad = [t for t in targets if floor(t) == 1 and method_of(t) not in
               (method_of(name), "minilm")]
        if bad:
            wrong[name] = bad
    assert not wrong


def test_the_kernel_side_loads_no_method():
    kernel = [n for n in GRAPH if floor(n) == 2]
    assert not {n: sorted(t for t in GRAPH[n] if floor(t) == 1) for n in kernel
                if any(floor(t) == 1 for t in GRAPH[n])}


def test_no_circle():
    seen, on_path, circles = set(), [], []

    def visit(node):
        if node in on_path:
            circles.append(on_path[on_path.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        on_path.append(node)
        for target in sorted(GRAPH.get(node, ())):
            # A package's __init__ importing its own parts is how a package re-exports.
            if target.startswith(node + "."):
                continue
            visit(target)
        on_path.pop()

    for name in sorted(GRAPH):
        visit(name)
    assert not circles, " ; ".join(" -> ".join(c) for c in circles)
