"""The numerics probe against the committed records of other CPUs (data/reference/numerics).

Under the book's pins (``MKL_CBWR=COMPATIBLE``) every kernel must give the bits that every
committed CPU gave under them (Intel and AMD alike). Records taken under another MKL branch
(the pins of before, ``AVX2``, which MKL ignores on AMD) may differ in the kernels that MKL
computes, and in no other: oneDNN's convolutions, torch's vectorised kernels, numpy and
OpenBLAS's LAPACK must still agree.
"""

import pytest

from icml25.book import probe
from icml25.common import numerics

pytestmark = pytest.mark.skipif(not numerics.is_x86(), reason="the records are of x86 CPUs")


@pytest.fixture(scope="module")
def records():
    found = probe.committed()
    assert {"AVX2", "COMPATIBLE"} <= {r["env"].get("MKL_CBWR") for r in found.values()}
    return found


@pytest.fixture(scope="module")
def mine():
    return probe.measure()


def test_the_pins_are_mkl_compatible(mine):
    assert mine["env"]["MKL_CBWR"] == "COMPATIBLE"


def test_the_probe_is_deterministic_and_agrees_with_every_cpu_under_the_pins(mine, records):
    assert probe.measure()["digests"] == mine["digests"]
    compared = {n: r for n, r in records.items() if probe.settings(r) == probe.settings(mine)}
    cpus = {r["machine"]["cpu"].split()[0] for r in compared.values()}
    assert len(cpus) >= 2, f"records of two CPU vendors under the pins; found {sorted(cpus)}"
    for name, rec in compared.items():
        differ = set(probe.compare(mine, rec)) - probe.VENDOR_KERNELS
        assert not differ, f"{name} ({rec['machine']['cpu']}): {sorted(differ)}"


def test_the_books_root_and_adam_are_what_a_correctly_rounded_root_gives(mine):
    """The book's lines (icml25.common.optim) are machine-independent: the root's digest is that
    of numpy's correctly rounded root of the same draws, computed here independently."""
    import hashlib

    import numpy as np
    import torch

    g = torch.Generator().manual_seed(0)
    for shape in [(257, 129), (129, 263), (8, 3, 32, 32), (16, 3, 3, 3)]:
        torch.randn(*shape, generator=g)  # the probe's earlier draws, in its order
    v = np.abs(torch.randn(10000, generator=g).numpy())
    expected = hashlib.sha256(np.sqrt(v).tobytes()).hexdigest()[:12]
    assert mine["digests"]["book sqrt f32 (through float64)"] == expected
    assert "book AdamW 5 steps (seeded)" in mine["digests"]


def test_the_books_code_takes_no_root_or_adam_from_torch():
    """torch's float32 root and its Adam family round by the CPU's vendor (VENDOR_KERNELS): the
    library and the chapters take them from icml25.common.optim. (``x ** 0.5`` on a tensor is
    the same root; the scalars that the code raises to 0.5 are not tensors.)"""
    import re

    from icml25.common import paths

    forbidden = re.compile(r"torch\.sqrt\(|\.sqrt\(\)|torch\.rsqrt|\.rsqrt\(|"
                           r"torch\.optim\.(Adam|AdamW|Adamax|NAdam|RAdam|RMSprop|Adagrad|"
                           r"Adadelta)\b")
    allowed = {"common/optim.py", "book/probe.py"}
    found = []
    for path in [*(paths.ROOT / "lib" / "icml25").rglob("*.py"),
                 *(paths.ROOT / "chapters").glob("*/*.py")]:
        rel = path.relative_to(paths.ROOT / "lib" / "icml25").as_posix() \
            if "lib" in path.parts else path.relative_to(paths.ROOT).as_posix()
        if rel in allowed:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if forbidden.search(code) and not code.lstrip().startswith(("r\"\"\"", "\"\"\"")):
                found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "\n".join(found)


def test_another_mkl_branch_moves_only_the_kernels_of_mkl(mine, records):
    def without_mkl(rec):
        return {k: v for k, v in probe.settings(rec).items() if k != "MKL_CBWR"}

    compared = {n: r for n, r in records.items() if probe.settings(r) != probe.settings(mine)
                and without_mkl(r) == without_mkl(mine)}
    assert compared, "a committed record under another MKL branch"
    for name, rec in compared.items():
        differ = set(probe.compare(mine, rec)) - probe.MKL_KERNELS
        assert not differ, f"{name} ({rec['machine']['cpu']}): {sorted(differ)}"
