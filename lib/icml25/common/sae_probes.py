"""The probing data sets that ship in the PyPI package ``sae-probes`` (Kantamneni, Engels et
al., 2025), read from the installed package's files.

Shared by the chapters that use its texts (sparse probing, and Sum-of-Parts's language task):
:func:`package_data_dir` finds the files without importing the package, :func:`read_dataset`
and :func:`read_ood` read one binary data set, :func:`dataset_tags` and :func:`ood_tags` list
them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd

PACKAGE = "sae_probes"
INSTALL = "pip install --no-deps sae-probes==0.4.2"
"""How to install the data (``--no-deps``: the package's dependencies are a GPU model stack)."""


def package_data_dir() -> Path:
    """The ``data`` folder of the installed package ``sae-probes``, found without importing it.

    Importing ``sae_probes`` would import ``transformer_lens`` and ``torch`` models; only the
    location of its files is needed here.

    Raises
    ------
    ModuleNotFoundError
        The package is not installed; the message gives :data:`INSTALL`.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            f"the probing data sets ship in the package sae-probes, which is not installed; "
            f"install it with: {INSTALL}")
    root = Path(next(iter(spec.submodule_search_locations))) / "data"
    if not (root / "cleaned_data").is_dir():
        raise ModuleNotFoundError(
            f"sae-probes is installed at {root.parent} but has no data/cleaned_data; "
            f"reinstall it with: {INSTALL}")
    return root


def _read_zst(file: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(file, compression="zstd")
    except ImportError as err:
        raise ImportError(f"reading {file.name} needs the package zstandard: "
                          "pip install zstandard") from err


def dataset_tags() -> list[str]:
    """Numbered tags (``"5_hist_fig_ismale"``) of the package's binary data sets (113 of them)."""
    master = _read_zst(package_data_dir() / "probing_datasets_MASTER.csv.zst")
    binary = master[master["Data type"] == "Binary Classification"]
    return [name.split("/")[-1].removesuffix(".csv") for name in binary["Dataset save name"]]


def ood_tags() -> list[str]:
    """Numbered tags of the data sets that have an OOD test set in the package."""
    folder = package_data_dir() / "OOD data"
    return sorted((f.name.removesuffix("_OOD.csv.zst") for f in folder.glob("*_OOD.csv.zst")),
                  key=lambda t: int(t.split("_")[0]))


def _encode(target: pd.Series) -> tuple[np.ndarray, tuple[str, str]]:
    """Labels 0/1 from the sorted class names (``LabelEncoder`` on their string form)."""
    names = target.astype(str).to_numpy()
    classes = sorted(set(names))
    if len(classes) != 2:
        raise ValueError(f"expected a binary target, got {len(classes)} classes: {classes[:5]}")
    return (names == classes[1]).astype(np.int8), (classes[0], classes[1])


def _frame(df: pd.DataFrame, file: Path) -> pd.DataFrame:
    if not {"prompt", "target"} <= set(df.columns):
        raise ValueError(f"{file.name} has no prompt/target columns: {list(df.columns)}")
    label, classes = _encode(df["target"])
    out = pd.DataFrame({"text": df["prompt"].astype(str).to_numpy(), "label": label})
    out.attrs["classes"] = classes
    return out


def read_dataset(tag: str) -> pd.DataFrame:
    """One data set as a frame with columns ``text`` and ``label`` (0/1), rows in file order.

    ``frame.attrs["classes"]`` names the classes 0 and 1.
    """
    file = package_data_dir() / "cleaned_data" / f"{tag}.csv.zst"
    if not file.exists():
        raise ValueError(f"no data set {tag!r} in sae-probes; dataset_tags() lists them")
    return _frame(_read_zst(file), file)


def read_ood(tag: str) -> pd.DataFrame:
    """The OOD test set of ``tag`` (see :func:`ood_tags`), as :func:`read_dataset` returns it."""
    file = package_data_dir() / "OOD data" / f"{tag}_OOD.csv.zst"
    if not file.exists():
        raise ValueError(f"data set {tag!r} has no OOD test set; ood_tags() lists those that do")
    return _frame(_read_zst(file), file)
