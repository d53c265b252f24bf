"""The numerics probe: digests of the float results of the kernels the chapters compute with.

Two machines that print the same digests under the same settings compute those kernels bit for
bit alike, so a chapter that uses only them gives the same figures on both. Each line is the
sha256 (12 hex digits) of one kernel's output on fixed inputs: torch's matmul family (MKL),
convolutions and their gradients (oneDNN), elementwise functions (torch's own vectorised kernels,
or MKL's vector maths for ``exp``, ``erf``, ``sqrt``, ``log``, ``atan``, ...), an AdamW step (torch's, and the book's
with its correctly rounded root), and numpy's and
scipy's matmul, elementwise functions, reductions, sorting and LAPACK calls (OpenBLAS).

``python -m icml25.book numerics`` prints this machine's record and compares it with every record
committed under ``data/reference/numerics/`` that was taken under the same settings;
``--write`` commits this machine's record there. Run it, as the chapters run, under the pins of
:mod:`icml25.common.numerics` (the command applies them before numpy and torch load).

Every input is drawn from a seeded generator: a kernel whose digest changes from one run to the
next on one machine would make every comparison meaningless (a probe that built ``nn.Linear``
with torch's unseeded global generator did exactly that).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from icml25.common import numerics, paths
from icml25.common.streams import as_generator

#: Where the committed records lie, one JSON file per machine and settings.
FOLDER = paths.DATA / "reference" / "numerics"


def _digest(x) -> str:
    import numpy as np

    if hasattr(x, "detach"):
        x = x.detach().contiguous().numpy()
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()[:12]


def _torch_outputs() -> dict:
    import torch
    from torch.nn import functional as F

    out = {}
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(257, 129, generator=g), torch.randn(129, 263, generator=g)
    out["torch.matmul f32 257x129x263"] = a @ b
    out["torch.matmul f32 64x64x64"] = a[:64, :64] @ b[:64, :64]
    out["torch.matmul f64"] = a.double() @ b.double()
    out["torch.bmm f32"] = torch.bmm(a[:256].reshape(4, 64, 129), b[:, :64].expand(4, 129, 64))
    out["torch.linear f32 (addmm)"] = F.linear(a, b.T[:50], torch.ones(50))
    # a backward pass multiplies by transposed operands: MKL's other layouts
    out["torch.mm f32 transposed 20x257x129"] = a[:, :20].T @ a
    x, w = torch.randn(8, 3, 32, 32, generator=g), torch.randn(16, 3, 3, 3, generator=g)
    out["torch.conv2d f32"] = F.conv2d(x, w, padding=1)
    xr, wr = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    F.conv2d(xr, wr, padding=1).square().sum().backward()
    out["torch.conv2d backward (weight)"] = wr.grad
    out["torch.conv2d backward (input)"] = xr.grad
    v = torch.randn(10000, generator=g)
    for name in ("exp", "log1p", "tanh", "sigmoid", "erf", "sqrt", "log", "log2", "atan",
                 "tan", "sin", "cos"):
        positive = name in ("log1p", "sqrt", "log", "log2")
        out[f"torch.{name} f32"] = getattr(torch, name)(v.abs() + 1e-3 * (name in ("log", "log2"))
                                                        if positive else v)
    # diffusers' noising and its steps take roots as ``tensor ** 0.5``: the same MKL root
    out["torch.pow 0.5 f32"] = v.abs() ** 0.5
    out["torch.softmax f32"] = torch.softmax(a, dim=1)
    out["torch.sum f32"] = v.sum()
    out["torch.layer_norm f32"] = F.layer_norm(a, (129,))
    # AdamW on a linear layer whose weight and bias both come from the seeded generator
    weight = torch.randn(20, 129, generator=g).requires_grad_(True)
    bias = torch.randn(20, generator=g).requires_grad_(True)
    opt = torch.optim.AdamW([weight, bias], lr=1e-2)
    for _ in range(5):
        opt.zero_grad()
        F.linear(a, weight, bias).square().mean().backward()
        opt.step()
    out["torch AdamW 5 steps (seeded)"] = weight
    # the book's root and optimiser (icml25.common.optim): the same on every vendor's CPU, where
    # torch's root (MKL's vector sqrt) and so torch's AdamW are not
    from icml25.common import optim

    out["book sqrt f32 (through float64)"] = optim.sqrt(v.abs())
    weight = torch.randn(20, 129, generator=g).requires_grad_(True)
    bias = torch.randn(20, generator=g).requires_grad_(True)
    opt = optim.AdamW([weight, bias], lr=1e-2)
    for _ in range(5):
        opt.zero_grad()
        F.linear(a, weight, bias).square().mean().backward()
        opt.step()
    out["book AdamW 5 steps (seeded)"] = weight
    return out


def _numpy_outputs() -> dict:
    import numpy as np
    import scipy.linalg

    out = {}
    rng = as_generator(0)
    A, B = rng.standard_normal((300, 200)), rng.standard_normal((200, 100))
    out["numpy.matmul f64"] = A @ B
    out["numpy.matmul f32"] = A.astype(np.float32) @ B.astype(np.float32)
    e = rng.standard_normal(10001)
    for name in ("exp", "log1p", "tanh", "sin", "cos"):
        arg = np.abs(e) if name == "log1p" else e
        out[f"numpy.{name} f64"] = getattr(np, name)(arg)
        out[f"numpy.{name} f32"] = getattr(np, name)(arg.astype(np.float32))
    out["numpy.sum f64"] = e.sum()
    out["numpy.sum f32"] = e.astype(np.float32).sum()
    out["numpy.sort f64"] = np.sort(e)
    S = A.T @ A
    out["numpy.linalg.solve"] = np.linalg.solve(S, B[:, 0])
    out["numpy.linalg.eigh"] = np.linalg.eigh(S)[0]
    out["numpy.linalg.svd"] = np.linalg.svd(A, compute_uv=False)
    out["scipy.linalg.cho_solve"] = scipy.linalg.cho_solve(scipy.linalg.cho_factor(S),
                                                           np.ones(200))
    return out


def record() -> dict:
    """This machine's probe record: the CPU, the versions, the settings, one digest a kernel."""
    import numpy as np
    import torch

    return {
        "machine": {"cpu": numerics.cpu_model(), "torch": torch.__version__,
                    "numpy": np.__version__,
                    "torch_capability": torch.backends.cpu.get_cpu_capability()},
        "env": {k: os.environ[k] for k in numerics.NAMES if k in os.environ},
        "digests": {k: _digest(v) for k, v in {**_torch_outputs(), **_numpy_outputs()}.items()},
    }


#: The kernels that go through MKL (its BLAS, or its vector maths inside torch's ``exp``,
#: ``erf``, ``sqrt``, ``log``, ``log2``, ``atan`` and ``tan``: on an Intel CPU their bits change
#: with the MKL branch): on a CPU not made by Intel, MKL ignores every ``MKL_CBWR`` branch but
#: ``COMPATIBLE`` and takes its own path, so under another branch their bits follow the vendor.
MKL_KERNELS = frozenset({
    "torch.matmul f32 257x129x263", "torch.matmul f32 64x64x64", "torch.matmul f64",
    "torch.bmm f32", "torch.linear f32 (addmm)", "torch.mm f32 transposed 20x257x129",
    "torch.exp f32", "torch.erf f32", "torch.sqrt f32", "torch AdamW 5 steps (seeded)",
    "torch.log f32", "torch.log2 f32", "torch.atan f32", "torch.tan f32", "torch.pow 0.5 f32",
})


#: The kernels whose bits follow the CPU's vendor under every MKL branch, ``COMPATIBLE``
#: included: torch's float32 square root (``sqrt``, ``** 0.5``) is MKL's vector root, which is
#: not correctly rounded and rounds otherwise on an Intel than on an AMD CPU, and torch's AdamW
#: divides by it. The book
#: computes with neither: its roots and its Adam come from :mod:`icml25.common.optim` (the
#: "book" lines, the same on every CPU), and a test keeps torch's out of the book's code.
VENDOR_KERNELS = frozenset({"torch.sqrt f32", "torch.pow 0.5 f32",
                            "torch AdamW 5 steps (seeded)"})


def settings(rec: dict) -> dict:
    """The settings of a record that choose kernels (thread counts and CPU model aside)."""
    names = set(numerics.X86) | {"NPY_DISABLE_CPU_FEATURES"}
    return {k: v for k, v in rec.get("env", {}).items() if k in names}


def compare(mine: dict, other: dict) -> list[str]:
    """The kernels whose digests differ between two records (only those both measured)."""
    theirs = other["digests"]
    return [k for k, v in mine["digests"].items() if k in theirs and theirs[k] != v]


def committed() -> dict[str, dict]:
    """Every committed record, by file name."""
    return {p.name: json.loads(p.read_text()) for p in sorted(FOLDER.glob("*.json"))}


def filename(rec: dict) -> str:
    """``intel-xeon-processor.mkl-avx2.json``: the CPU and the MKL branch of a record."""
    cpu = re.sub(r"\([^)]*\)|\bprocessor\b|\bcpu\b|@.*", "", rec["machine"]["cpu"], flags=re.I)
    cpu = re.sub(r"[^a-z0-9]+", "-", cpu.lower()).strip("-") or "cpu"
    branch = rec.get("env", {}).get("MKL_CBWR", "unset").lower().replace(",", "-")
    return f"{cpu}.mkl-{branch}.json"


def report(mine: dict, records: dict[str, dict]) -> tuple[list[str], int]:
    """Lines comparing ``mine`` with each record of the same settings; and how many differ."""
    lines, differing = [], 0
    same = {n: r for n, r in records.items() if settings(r) == settings(mine)}
    if not same:
        lines.append(f"no committed record was taken under these settings ({settings(mine)})")
    for name, rec in same.items():
        differ = compare(mine, rec)
        shared = sum(k in rec["digests"] for k in mine["digests"])
        # a vendor's own kernel differs from another vendor's by design, and the book avoids it
        vendor = [k for k in differ if k in VENDOR_KERNELS]
        differing += bool(set(differ) - VENDOR_KERNELS)
        lines.append(f"{name} ({rec['machine']['cpu']}): {shared - len(differ)} of {shared} "
                     "kernels give the same bits" + (":" if differ else ""))
        lines.extend(f"   differs: {k}" + (" (follows the vendor; the book does not use it)"
                                           if k in vendor else "") for k in differ)
    return lines, differing


def write(rec: dict, folder: Path = FOLDER) -> Path:
    """Write ``rec`` as ``folder/<cpu>.<branch>.json`` (listed in data/MANIFEST by hand)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename(rec)
    path.write_text(json.dumps(rec, indent=1) + "\n")
    return path


def measure(perturbation: str | None = None) -> dict:
    """Run the probe in a fresh process under the pins (and ``perturbation``, if named):
    numpy and torch read the pinned variables when they load, so this process cannot."""
    import subprocess
    import sys

    env = dict(os.environ)
    env.pop(numerics.PERTURB, None)
    if perturbation:
        env[numerics.PERTURB] = perturbation
    env = numerics.pinned(env)
    done = subprocess.run([sys.executable, "-m", "icml25.book.probe"], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


if __name__ == "__main__":
    print(json.dumps(record(), indent=1))
