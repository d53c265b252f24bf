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
        assert probe.compare(mine, rec) == [], f"{name}: {rec['machine']['cpu']}"


def test_another_mkl_branch_moves_only_the_kernels_of_mkl(mine, records):
    def without_mkl(rec):
        return {k: v for k, v in probe.settings(rec).items() if k != "MKL_CBWR"}

    compared = {n: r for n, r in records.items() if probe.settings(r) != probe.settings(mine)
                and without_mkl(r) == without_mkl(mine)}
    assert compared, "a committed record under another MKL branch"
    for name, rec in compared.items():
        differ = set(probe.compare(mine, rec)) - probe.MKL_KERNELS
        assert not differ, f"{name} ({rec['machine']['cpu']}): {sorted(differ)}"
