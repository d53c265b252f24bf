"""Quivers: ensembles of probes chosen on validation, and how often the SAE probe wins."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from icml25.common.stats import clopper_pearson

_KEYS = ["dataset", "regime", "setting"]


def quiver(results: pd.DataFrame, families: Sequence[str] = ("baseline",)) -> pd.DataFrame:
    """The paper's "quiver of arrows": per data set and setting, the probe of ``families`` with
    the best validation AUC (ties: the first listed) and its test AUC.

    Returns one row per (dataset, regime, setting) with ``probe`` and ``test_auc``.
    """
    pick = results[results["family"].isin(families)]
    if pick.empty:
        raise ValueError(f"no results of families {list(families)}")
    idx = pick.groupby(_KEYS, sort=False)["val_auc"].idxmax()
    return pick.loc[idx, _KEYS + ["probe", "test_auc"]].reset_index(drop=True)


def compare_quivers(results: pd.DataFrame) -> pd.DataFrame:
    """Baselines-only quiver against baselines + SAE probes, per data set and setting.

    Columns ``baselines``, ``with_sae`` (test AUCs), ``gain`` (their difference) and
    ``sae_chosen`` (whether validation picked an SAE probe).
    """
    base = quiver(results, ("baseline",))
    both = quiver(results, ("baseline", "sae"))
    out = base.rename(columns={"test_auc": "baselines", "probe": "baseline_probe"}).merge(
        both.rename(columns={"test_auc": "with_sae", "probe": "chosen"}), on=_KEYS)
    out["gain"] = out["with_sae"] - out["baselines"]
    out["sae_chosen"] = out["chosen"].isin(results.loc[results.family == "sae", "probe"].unique())
    return out


def sae_wins(results: pd.DataFrame, against: str = "quiver") -> pd.DataFrame:
    """Whether the best SAE probe beats the baselines on test AUC, per data set and setting.

    ``against="quiver"`` compares with the baseline chosen on validation (what a practitioner
    would deploy); ``"oracle"`` with the best baseline on the test set (the strictest bar). The
    SAE side is the SAE probe chosen on validation in both cases.
    """
    if against not in ("quiver", "oracle"):
        raise ValueError(f"against must be 'quiver' or 'oracle', got {against!r}")
    sae = quiver(results, ("sae",)).rename(columns={"test_auc": "sae", "probe": "sae_probe"})
    if against == "quiver":
        base = quiver(results, ("baseline",)).rename(columns={"test_auc": "baseline"})
    else:
        b = results[results.family == "baseline"]
        best = b.groupby(_KEYS, sort=False)["test_auc"].idxmax()
        base = b.loc[best, _KEYS + ["probe", "test_auc"]].rename(columns={"test_auc": "baseline"})
    out = sae.merge(base.rename(columns={"probe": "baseline_probe"}), on=_KEYS)
    out["sae_wins"] = out["sae"] > out["baseline"]
    return out


def win_shares(wins: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    r"""Per regime, the share of evaluations the SAE probe wins, with a Clopper-Pearson interval.

    ``wins`` is :func:`sae_wins`'s frame. With :math:`k` wins in :math:`n` evaluations the share
    is :math:`k/n` and the interval the exact binomial one at ``level``; it treats the
    evaluations as independent draws, which they are only in part (the settings of one data set
    share its texts), so it is a lower bound on the uncertainty.

    Returns
    -------
    One row per regime (in order of appearance): ``wins``, ``evaluations``, ``share``, ``low``
    and ``high``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if wins.empty or not {"regime", "sae_wins"} <= set(wins.columns):
        raise ValueError("wins must be sae_wins()'s non-empty frame")
    rows = []
    for regime, group in wins.groupby("regime", sort=False):
        k, n = int(group["sae_wins"].sum()), len(group)
        low, high = clopper_pearson(k, n, level)
        rows.append({"regime": regime, "wins": k, "evaluations": n, "share": k / n,
                     "low": low, "high": high})
    return pd.DataFrame(rows).set_index("regime")
