"""microagg: fast k-anonymous microaggregation.

Partition numerical records into groups of at least ``k`` and publish group centroids,
so that every record hides among at least k-1 others while losing as little information
as possible. The algorithms run in a Rust core (single-threaded "fair" mode or parallel,
float32 or float64) with the GIL released.

>>> import numpy as np, microagg as ma
>>> X = np.random.default_rng(0).normal(size=(1000, 3))
>>> res = ma.microaggregate(X, k=5)
>>> bool(res.group_sizes.min() >= 5)
True
"""

from . import datasets, incremental, plot, report, risk, utility
from ._api import (
    METHODS,
    MicroaggregationResult,
    information_loss,
    is_k_anonymous,
    microaggregate,
    sse,
)
from typing import TYPE_CHECKING, Any

from ._assessment import Assessment, assess
from ._core import Progress, __version__
from ._pandas import anonymize
from ._tcloseness import T_METHODS, TCloseResult, t_close_microaggregate
from ._workflow import StratumMerge, relabel_strata
from .incremental import IncrementalMicroaggregator

if TYPE_CHECKING:
    from ._estimator import MicroAggregator

__all__ = [
    "METHODS",
    "Assessment",
    "IncrementalMicroaggregator",
    "MicroAggregator",
    "MicroaggregationResult",
    "Progress",
    "StratumMerge",
    "TCloseResult",
    "T_METHODS",
    "__version__",
    "anonymize",
    "assess",
    "datasets",
    "incremental",
    "information_loss",
    "is_k_anonymous",
    "microaggregate",
    "plot",
    "relabel_strata",
    "report",
    "risk",
    "sse",
    "t_close_microaggregate",
    "utility",
]


def __getattr__(name: str) -> Any:
    """``MicroAggregator`` is built on first access: only then is scikit-learn imported."""
    if name == "MicroAggregator":
        from ._estimator import MicroAggregator

        return MicroAggregator
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
