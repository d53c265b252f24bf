"""The numerics probe against the committed records of other CPUs (data/reference/numerics).

Under ``MKL_CBWR=COMPATIBLE`` every kernel must give the bits that every committed CPU gave
(Intel and AMD alike). Under the book's own pins the kernels that MKL computes follow the
CPU's vendor (MKL ignores its AVX2 branch on AMD), and every other kernel (oneDNN's
convolutions, torch's vectorised kernels, numpy, OpenBLAS's LAPACK) must still agree.
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


def test_the_probe_is_deterministic_and_agrees_under_mkl_compatible(records):
    mine = probe.measure("mkl")
    assert probe.measure("mkl")["digests"] == mine["digests"]
    compared = {n: r for n, r in records.items() if probe.settings(r) == probe.settings(mine)}
    assert len(compared) >= 2, "records of two CPU vendors under MKL_CBWR=COMPATIBLE"
    for name, rec in compared.items():
        assert probe.compare(mine, rec) == [], f"{name}: {rec['machine']['cpu']}"


def test_outside_mkl_the_pinned_kernels_agree_with_every_cpu(records):
    mine = probe.measure()
    compared = {n: r for n, r in records.items() if probe.settings(r) == probe.settings(mine)}
    assert compared, "a committed record under the book's pins"
    for name, rec in compared.items():
        differ = set(probe.compare(mine, rec)) - probe.MKL_KERNELS
        assert not differ, f"{name} ({rec['machine']['cpu']}): {sorted(differ)}"
