"""Pinned CPU numerics: the settings that make a chapter's figures the same on every x86 machine.

A float sum depends on its order, and the order depends on which kernel a library picks for the
CPU it finds: torch's vectorised ATen kernels (AVX2 adds 8 floats at a time, AVX-512 adds 16),
MKL's BLAS and oneDNN's convolutions (blocked by instruction set), numpy's OpenBLAS (a kernel per
core type), and the number of threads that split a reduction. Every execution of a chapter (the
runner, the notebook tests, ``make run``) therefore starts its kernel with these settings:

========================  ================  ======================================================
variable                  value             what it pins
========================  ================  ======================================================
``OMP_NUM_THREADS``       ``1``             one thread for OpenMP loops (torch, MKL, oneDNN)
``MKL_NUM_THREADS``       ``1``             one thread for MKL
``OPENBLAS_NUM_THREADS``  ``1``             one thread for numpy's OpenBLAS
``ATEN_CPU_CAPABILITY``   ``avx2``          torch's own vectorised kernels: AVX2 on every x86 CPU
``MKL_CBWR``              ``COMPATIBLE``    MKL's vendor-neutral branch (see below)
``ONEDNN_MAX_CPU_ISA``    ``AVX2``          oneDNN (torch's convolutions) uses at most AVX2
``OPENBLAS_CORETYPE``     Haswell           numpy's OpenBLAS kernel, *only where the machine has
                                            not set it* (some machines set it because older
                                            OpenBLAS builds compute wrong results on their CPU)
========================  ================  ======================================================

AVX2 is the level every x86-64 CPU of the last decade has, so for torch's kernels a machine with
AVX-512 computes what a machine without it computes. numpy is not pinned yet: it dispatches its
AVX-512 kernels where the CPU has them, and three of the probe's numpy kernels (``exp`` in float64,
``log1p`` in float64 and float32) give other bits with them disabled, as on a CPU without AVX-512
(``ICML25_PERTURB=numpy`` runs so). MKL needs more than a cap: it honours its instruction-set branches
(``MKL_CBWR=AVX2``) on Intel CPUs only and takes a path of its own on any other vendor's, so an
AMD EPYC and an Intel Xeon parted in every torch matmul, ``exp`` and ``erf`` under ``AVX2``.
``COMPATIBLE`` is the one branch that MKL runs alike on both, with one exception: its vector
square root, which torch calls for every float32 ``sqrt``, is not correctly rounded and rounds
otherwise on each vendor's CPU (17% of 100,003 roots one unit off on an AMD EPYC; other bits
again on an Intel Xeon). torch's Adam and AdamW divide by it at every step, so a model they train
parts between vendors. The book takes its roots and its optimisers from
:mod:`icml25.common.optim`, whose root goes through float64 and is correctly rounded on every
CPU, and a test keeps torch's out of the book's code. The same root hides in other libraries:
``tensor ** 0.5`` is it, and diffusers' schedulers take their roots so (chapter 18 trained to
other weights on an Intel Xeon than on an AMD EPYC until its noising and reverse steps took the
book's root); a test runs the book's trainers and samplers under a torch dispatch mode that
counts every float32 root they take. Under the pins the numerics probe
(``python -m icml25.book numerics``) then gives the same bits on the two machines for every
kernel they share but torch's own root and AdamW (:data:`icml25.book.probe.VENDOR_KERNELS`),
which it measures to show the difference. It costs time: about 1.2 times the CPU time of a torch chapter (05, 16; paired runs),
up to 2 times for a process of nothing but large matmuls. On other architectures (arm64) only the thread counts apply,
and figures may differ in their last digits: the claims declare how far they may move.

``ICML25_PIN=threads`` keeps only the thread counts: for experiments that compare code paths
(e.g. ``ICML25_PIN=threads ATEN_CPU_CAPABILITY=avx512 make test``), never for publishing.

Pins break (a new MKL, an arm64 laptop), so a claim must also survive the last bit.
``ICML25_PERTURB=<name>`` applies one of :data:`PERTURBATIONS` over the pins: another MKL branch,
torch's scalar kernels, numpy without its AVX-512 kernels, or all three at once. The notebook
tests run under it (``python -m icml25.book perturbed``) compare every claim as they do under the
pins: its verdict exactly, its value within the claim's tolerance.
"""

from __future__ import annotations

import os
import platform
import sys

THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
X86 = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
#: Set only when the machine has not set them itself (never override a machine's choice).
X86_IF_UNSET = {"OPENBLAS_CORETYPE": "Haswell"}
#: Everything this module sets or records.
NAMES = (*THREADS, *X86, *X86_IF_UNSET, "OPENBLAS_L2_SIZE", "ICML25_PIN", "ICML25_PERTURB",
         "NPY_DISABLE_CPU_FEATURES")
#: ``threads``: pin the thread counts only, to compare code paths (``all`` is the default).
SWITCH = "ICML25_PIN"
#: numpy's AVX-512 dispatch targets (numpy 2.4 names); without them it takes its AVX2 kernels.
NUMPY_AVX512 = "X86_V4 AVX512_ICL AVX512_SPR"
#: Perturbed numerics, applied over the pins: each changes the last bits of some kernels.
#: ``mkl``: MKL's own choice for the CPU (``AUTO``: on an Intel CPU its fastest branch, on any
#: other its vendor-specific path), what an unpinned reader gets: it differs from the pinned
#: ``COMPATIBLE`` branch in every matmul, ``exp``, ``erf`` and ``sqrt`` of torch;
#: ``aten``: torch's own kernels without vectorisation (other summation orders); ``numpy``:
#: numpy's elementwise functions and reductions at AVX2 instead of AVX-512.
PERTURBATIONS = {
    "mkl": {"MKL_CBWR": "AUTO"},
    "aten": {"ATEN_CPU_CAPABILITY": "default"},
    "numpy": {"NPY_DISABLE_CPU_FEATURES": NUMPY_AVX512},
}
PERTURBATIONS["all"] = {k: v for p in list(PERTURBATIONS.values()) for k, v in p.items()}
#: The variable that names the perturbation (unset: none; the published runs never set it).
PERTURB = "ICML25_PERTURB"


def is_x86() -> bool:
    return platform.machine().lower() in {"x86_64", "amd64", "i686", "x86"}


def pinned(environ: dict | None = None) -> dict[str, str]:
    """The environment for an execution: ``environ`` (default ``os.environ``) plus the pins.

    Thread counts and the x86 instruction-set caps are set; ``OPENBLAS_CORETYPE`` only where
    ``environ`` lacks it; then the perturbation that ``ICML25_PERTURB`` names, if any. The result
    is a new dict; ``environ`` is not changed.
    """
    env = dict(os.environ if environ is None else environ)
    env.update(THREADS)
    perturbation = env.get(PERTURB) or None
    if perturbation is not None and perturbation not in PERTURBATIONS:
        raise ValueError(f"{PERTURB} must be one of {', '.join(PERTURBATIONS)}; "
                         f"got {perturbation!r}")
    if env.get(SWITCH) == "threads":
        return env
    if env.get(SWITCH, "all") != "all":
        raise ValueError(f"{SWITCH} must be 'all' (the default) or 'threads'; got {env[SWITCH]!r}")
    if is_x86():
        env.update(X86)
        for name, value in X86_IF_UNSET.items():
            env.setdefault(name, value)
    if perturbation is not None:
        env.update(PERTURBATIONS[perturbation])
    return env


def pin_process() -> dict[str, str]:
    """Apply :func:`pinned` to this process's environment (kernels started later inherit it).

    Call it before numpy, torch or a Jupyter kernel start: the libraries read these variables
    when they load. Returns the variables that it changed, name to new value.
    """
    target = pinned()
    changed = {k: v for k, v in target.items() if os.environ.get(k) != v}
    os.environ.update(changed)
    return changed


def cpu_model() -> str:
    """The CPU's model name, as the kernel reports it (``platform.processor()`` is often empty)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def describe() -> dict:
    """What this process runs on and with: CPU, cores, the pinned variables, torch's capability.

    Stored in each executed notebook's provenance, so a figure that differs can be traced to the
    machine and the settings that produced it.
    """
    record = {
        "cpu": cpu_model(),
        "machine": platform.machine(),
        "cores": os.cpu_count(),
        "settings": {name: os.environ[name] for name in NAMES if name in os.environ},
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        record["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
        record["torch_threads"] = torch.get_num_threads()
    return record
