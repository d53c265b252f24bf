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


class _VendorRoots:
    """A torch dispatch mode that records every float32 root torch takes through MKL (``sqrt``,
    ``** 0.5``, ``** -0.5``): the kernels whose bits follow the CPU's vendor. It sees what the
    text search above cannot: a root taken inside another library (diffusers' schedulers take
    ``alphas_cumprod[t] ** 0.5``). ``rsqrt`` is torch's own kernel (the IEEE root and division;
    its bits do not move with the MKL branch), as in transformers' RMSNorm."""

    def __enter__(self):
        import collections

        import torch
        from torch.utils._python_dispatch import TorchDispatchMode

        found = self.found = collections.Counter()
        roots = {torch.ops.aten.sqrt}

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                packet = func.overloadpacket
                x = args[0] if args else None
                if isinstance(x, torch.Tensor) and x.dtype == torch.float32 and (
                        packet in roots or packet is torch.ops.aten.pow and len(args) > 1
                        and not isinstance(args[1], torch.Tensor) and abs(args[1]) == 0.5):
                    found[str(func)] += 1
                return func(*args, **(kwargs or {}))

        self.mode = Mode()
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)


def test_the_books_torch_trainers_and_samplers_take_no_vendor_root():
    """Chapter 18's training (its three models) and both samplers, chapter 16's SOP training,
    chapter 19's and chapter 06's trainers: no float32 root from torch anywhere in them, their
    libraries' included."""
    import numpy as np
    import torch

    from icml25 import cell_diff as C
    from icml25 import motion_transfer as M
    from icml25 import rationales as R
    from icml25 import sum_of_parts as sp

    small = dict(C.TRAINING, d=16, depth=1, heads=2, steps=3, no_sequence_steps=3,
                 regression_steps=3, batch=8, n_train=40)
    cells = C.make_cells(40, seed=3)
    with _VendorRoots() as guard:
        models = {name: C.train_model(name, cells, small, seed=0)[0] for name in C.MODELS}
        for sampler in ("ddim", "ddpm"):
            C.sample_images(models["cell_diff"], cells.subset(slice(0, 2)), steps=4,
                            sampler=sampler)
        xor = sp.two_motif_xor(50, seed=7)
        sp.train(sp.MLPBackbone(64, 2, hidden=(8,), seed=4), xor.X, xor.y, steps=5, seed=5,
                 mask_patch=2)
        R.train(R.SmallUNet(4), R.make_phantoms(40, 24, seed=3), epochs=1, batch_size=20, seed=5)
        clips = np.random.default_rng(0).random((4, 2, 3, 32, 32)).astype(np.float32)
        M.train_animator(M.Animator(4, 8), clips, steps=2, batch_size=2)
    assert not guard.found, dict(guard.found)
    # and the guard sees a root when one is taken
    with _VendorRoots() as guard:
        torch.ones(3) ** 0.5
        np.sqrt(np.ones(3, np.float32))  # numpy's root is correctly rounded: not counted
    assert sum(guard.found.values()) == 1
