"""The population risk of a release against its original's, on the same key
(docs/assessment.md#population-risk): what :func:`microagg.assess` and the release report show
a review board as before -> after.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ._assess_input import F64
from ._ldiversity import l_diversity
from ._population_risk import IndividualRisk, are_sampling_weights, risk_of_key

RISK_BINS = 20
"""Equal-width bins of the individual-risk histogram from 0 to the largest risk of either file
(the report merges bins of fewer than k records into their neighbours)."""

DEFAULT_RISK_THRESHOLD = 0.1
"""Individual risk above which a record counts as at risk, as sdcMicro's reports flag risks
above 0.1."""


@dataclass(frozen=True)
class RiskChange:
    """Population re-identification risk of the original and of the release.

    Attributes
    ----------
    original, released : microagg.risk.IndividualRisk
        Per-record risk of each file on the same key and strata.
    threshold : float
        The risk above which a record counts in :attr:`records_above`.
    weights_ignored : bool
        Weights were given but are not sampling weights (some below 1): the risk is then
        the sample view 1 / f_k.
    l_diversity_original, l_diversity_released : dict of str to int, or None
        Distinct l-diversity of each sensitive attribute (as published) over each file's
        classes; None without sensitive attributes.
    """

    original: IndividualRisk
    released: IndividualRisk
    threshold: float
    weights_ignored: bool = False
    l_diversity_original: Optional[dict[str, int]] = None
    l_diversity_released: Optional[dict[str, int]] = None

    @property
    def records_above(self) -> tuple[int, int]:
        """Records whose individual risk exceeds :attr:`threshold`, original and release."""
        return self.original.above(self.threshold), self.released.above(self.threshold)

    def histogram(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Edges of :data:`RISK_BINS` equal bins from 0 to the largest risk of either file
        and the records of each file in each bin (the largest in the last)."""
        top = max(float(self.original.risk.max()), float(self.released.risk.max()))
        edges = np.linspace(0.0, top, RISK_BINS + 1)
        counts = [np.histogram(r.risk, bins=edges)[0].astype(np.int64) for r in (self.original, self.released)]
        return edges, counts[0], counts[1]

    def to_dict(self) -> dict[str, Any]:
        """The before and after figures (JSON-friendly Python values)."""
        edges, before, after = self.histogram()
        o, r = self.original, self.released
        return {
            "weighted": r.weighted,
            "weights_ignored": self.weights_ignored,
            "threshold": self.threshold,
            "global_risk_original": o.global_risk,
            "global_risk_released": r.global_risk,
            "expected_reidentifications_original": o.expected_reidentifications,
            "expected_reidentifications_released": r.expected_reidentifications,
            "max_risk_original": float(o.risk.max()),
            "max_risk_released": float(r.risk.max()),
            "records_above_original": self.records_above[0],
            "records_above_released": self.records_above[1],
            "histogram": {"edges": edges.tolist(), "original": before.tolist(), "released": after.tolist()},
            "l_diversity_original": self.l_diversity_original,
            "l_diversity_released": self.l_diversity_released,
        }


def risk_change(
    original_key: F64,
    released_key: F64,
    strata: Optional[npt.NDArray[np.int64]],
    weights: Optional[F64],
    threshold: Any = DEFAULT_RISK_THRESHOLD,
    sensitive: Any = None,
) -> RiskChange:
    """The :class:`RiskChange` of a release: ``original_key`` and ``released_key`` (n, d, NaN
    missing) on the same key columns, ``strata`` codes, the files' ``weights`` (used when
    they are sampling weights, each at least 1), ``threshold`` in [0, 1], and the
    ``sensitive`` values as :func:`microagg.risk.l_diversity` takes them."""
    threshold = check_risk_threshold(threshold)
    usable = weights if weights is not None and are_sampling_weights(weights) else None
    l_of = None if sensitive is None else (lambda key: l_diversity(key, sensitive, by=strata))
    return RiskChange(
        original=risk_of_key(original_key, strata, usable),
        released=risk_of_key(released_key, strata, usable),
        threshold=threshold,
        weights_ignored=weights is not None and usable is None,
        l_diversity_original=None if l_of is None else l_of(original_key),
        l_diversity_released=None if l_of is None else l_of(released_key),
    )


def check_risk_threshold(value: Any) -> float:
    """``risk_threshold``: a number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"risk_threshold must be a number in [0, 1], got {type(value).__name__} {value!r}")
    v = float(value)
    if math.isnan(v) or not 0.0 <= v <= 1.0:
        raise ValueError(f"risk_threshold must be in [0, 1], got {value!r}")
    return v
