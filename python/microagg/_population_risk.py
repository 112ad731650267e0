"""Population re-identification risk of a file (docs/assessment.md#population-risk): each record's
individual risk under the Benedetti–Franconi model from its class's sample frequency f_k and
the population frequency F_k its sampling weights estimate, as sdcMicro's ``measure_risk``
(R/indivRisk.R, ``method = "approx"``), and the distinct l-diversity of sensitive attributes.

Classes follow the one class rule of :mod:`microagg._kanonymity`: records equal on the whole
key within a stratum, a missing cell matching any value. sdcMicro's ``freqCalc`` counts a
record with missing keys the same way (with its ``alpha = 1``): f_k is the number of records
compatible with the record, F_k the sum of their weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ._assess_input import F64, Release, as_release, as_weights
from ._frames import column
from ._kanonymity import classes

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class IndividualRisk:
    """Population re-identification risk of every record of a file.

    Attributes
    ----------
    risk : ndarray of float64, shape (n,)
        The record's individual risk: the probability that the one population unit an
        intruder links it to is the right one, given f_k and F_k.
    fk : ndarray of int64, shape (n,)
        Sample frequency of the record's class (itself included).
    Fk : ndarray of float64, shape (n,)
        Population frequency of the class, the sum of its records' weights (``fk`` without
        weights).
    weighted : bool
        Whether sampling weights were given; without them the risk is 1 / f_k.
    """

    risk: F64
    fk: I64
    Fk: F64
    weighted: bool

    @property
    def global_risk(self) -> float:
        """Mean individual risk (sdcMicro's ``global_risk``)."""
        return float(self.risk.mean())

    @property
    def expected_reidentifications(self) -> float:
        """Sum of the individual risks: the expected number of records re-identified
        (sdcMicro's ``global_risk_ER``)."""
        return float(self.risk.sum())

    def above(self, threshold: float) -> int:
        """Number of records whose individual risk exceeds ``threshold``."""
        return int(np.count_nonzero(self.risk > threshold))

    def to_frame(self) -> Any:
        """The per-record table (``risk``, ``fk``, ``Fk``) as a pandas DataFrame (needs pandas)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("IndividualRisk.to_frame() needs pandas: pip install pandas") from None
        return pd.DataFrame({"risk": self.risk, "fk": self.fk, "Fk": self.Fk})

    def __repr__(self) -> str:
        return (
            f"IndividualRisk(n={self.risk.shape[0]}, weighted={self.weighted}, "
            f"global_risk={self.global_risk:.6g}, "
            f"expected_reidentifications={self.expected_reidentifications:.6g})"
        )


def individual_risk(
    data: Any,
    *,
    columns: Any = None,
    weights: Any = None,
    by: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
) -> IndividualRisk:
    """Individual and global re-identification risk of a file in the population, exactly as
    sdcMicro's ``measure_risk`` (5.8.1, ``indivRisk(method = "approx")``).

    With p_k = f_k / F_k: risk = p_k / (1 − p_k) · log(1 / p_k) when f_k = 1,
    p_k / (1 − p_k) − (p_k / (1 − p_k))² · log(1 / p_k) when f_k = 2, and the approximation
    p_k / (f_k − (1 − p_k)) above; 1 / f_k where f_k = F_k (the class is the whole population
    class) and everywhere without weights. The model and its assumptions (weights are
    inverse inclusion probabilities of a probability sample) are in
    docs/assessment.md#population-risk.

    Parameters
    ----------
    data : array-like (n, d) or DataFrame
        The file whose records are scored: an original or a release. An array is the key.
    columns, categorical, ordinal, by
        The key and strata, as :func:`microagg.anonymize` takes them for a frame
        (docs/assessment.md#measures-of-a-frame); for an array ``by`` holds one label per
        record. Classes are the records equal on the whole key within a stratum, a missing
        cell matching any value.
    weights : column name, or array-like (n,), optional
        Sampling weights (inverse inclusion probabilities, each at least 1). Without them
        the risk is the sample view 1 / f_k.

    Returns
    -------
    IndividualRisk
        ``risk``, ``fk``, ``Fk`` per record, ``global_risk`` and
        ``expected_reidentifications``.
    """
    r = as_release(data, columns=columns, by=by, weights=weights if _is_name(weights) else None,
                   categorical=categorical, ordinal=ordinal, name="data")
    return risk_of_key(r.key, r.strata, _weights(r, weights, r.key.shape[0]))


def risk_of_key(key: F64, strata: Optional[I64], weights: Optional[F64]) -> IndividualRisk:
    """:func:`individual_risk` of a key matrix (NaN = missing) within ``strata`` codes, with
    checked ``weights`` (each at least 1) or none."""
    c = classes(key, strata)
    counts = c.counts.astype(np.float64)
    weight_sums = counts if weights is None else np.bincount(c.inverse, weights=weights, minlength=len(counts))
    sums = c.spread(np.column_stack([counts, weight_sums.astype(np.float64)]))[c.inverse]
    fk = np.rint(sums[:, 0]).astype(np.int64)
    if weights is None:
        return IndividualRisk(1.0 / fk, fk, fk.astype(np.float64), False)
    Fk = sums[:, 1]
    return IndividualRisk(benedetti_franconi(fk, Fk), fk, Fk, True)


def benedetti_franconi(fk: I64, Fk: F64) -> F64:
    """The individual risk of sdcMicro's ``indivRisk(method = "approx")`` for sample
    frequencies ``fk`` and estimated population frequencies ``Fk`` (Franconi & Polettini 2004),
    1 / f_k where f_k = F_k."""
    p = fk / Fk
    odds = np.divide(p, 1.0 - p, out=np.full_like(p, np.inf), where=p < 1.0)
    log_inv = -np.log(p)
    with np.errstate(invalid="ignore"):
        risk = np.where(fk == 1, odds * log_inv,
                        np.where(fk == 2, odds - odds * odds * log_inv, p / (fk - (1.0 - p))))
    exact = fk == Fk
    risk[exact] = 1.0 / fk[exact]
    out: F64 = risk.astype(np.float64)
    return out


def _is_name(weights: Any) -> bool:
    return isinstance(weights, str)


def _weights(r: Release, weights: Any, n: int) -> Optional[F64]:
    """The sampling weights (a frame's column or an array), each finite and at least 1."""
    if weights is None:
        return None
    if _is_name(weights):
        if r.frame is None:
            raise TypeError(f"weights={weights!r} names a column of a DataFrame; data is not one")
        weights = column(r.frame.to_native(), weights, name="data")
    w = as_weights(weights, n)
    assert w is not None
    if not are_sampling_weights(w):
        raise ValueError(
            "weights must be finite sampling weights of at least 1 (inverse inclusion "
            "probabilities); a weight below 1 makes F_k smaller than f_k"
        )
    return w


def are_sampling_weights(w: F64) -> bool:
    """Whether ``w`` can be sampling weights (inverse inclusion probabilities): finite, each
    at least 1, so that F_k is at least f_k."""
    return bool(np.isfinite(w).all() and (w >= 1.0).all())
