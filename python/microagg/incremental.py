"""Incremental (two-step) microaggregation and its planner
(papers/incremental-microaggregation-thesis.txt §3-4).

Microaggregate the part of the data that has arrived, then fold late records in with a
cheap incremental step; the released table is always one k-anonymous partition of every
record seen. :func:`plan` tells how large the late part may be under uniform arrivals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from . import _core
from ._api import METHODS
from ._params import ParamsMixin
from ._validation import as_data_matrix, check_bool, check_k, check_n_jobs, check_str

__all__ = ["IncrementalMicroaggregator", "Plan", "plan", "STRATEGIES", "CRITICAL_HEAD_START"]

STRATEGIES: tuple[str, ...] = ("two-step", "nn", "nn-split-mid", "nn-split-end")
"""Folding strategies (thesis Table 4.1)."""

CRITICAL_HEAD_START: float = _core.CRITICAL_HEAD_START
"""ς− = 2(2/√3 − 1) ≈ 0.309, where the two branches of the optimal ratio meet."""


@dataclass(frozen=True)
class Plan:
    """Planning quantities for MDAV as base and incremental algorithm, uniform arrivals.

    Times are relative to one MDAV run on all the data (thesis §3.2, §4.2.1).

    Attributes
    ----------
    head_start : float
        ς, the arrival period relative to one MDAV run on all the data.
    critical_ratio : float
        ν−, the incremental fraction for which the base run ends as the last record arrives.
    optimal_ratio : float
        ν*, the incremental fraction maximizing the time gain.
    time_gain : float
        Δτ at ν*.
    base_time, incremental_time, head_start_time : float
        τ0, τ+ and τ− at ν*.
    min_deadline : float
        The earliest relative finish, 1 − Δτ(ν*).
    deadline_ratio : float or None
        ν_end, the smallest incremental fraction that finishes at the given deadline.
    """

    head_start: float
    critical_ratio: float
    optimal_ratio: float
    time_gain: float
    base_time: float
    incremental_time: float
    head_start_time: float
    min_deadline: float
    deadline_ratio: Optional[float]


def plan(head_start: float, deadline: Optional[float] = None) -> Plan:
    """Plan an incremental MDAV run.

    Parameters
    ----------
    head_start : float
        ς >= 0: how long the data takes to arrive, relative to one MDAV run on all of it
        (an 8-hour poll whose data MDAV processes in 2 hours has ς = 4).
    deadline : float, optional
        τ_end in (0, 1]: the time available, relative to one MDAV run; at least the
        plan's ``min_deadline``.

    Raises
    ------
    TypeError, ValueError
        For a non-numeric or out-of-range argument.
    """
    for name, value in (("head_start", head_start), ("deadline", deadline)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))):
            raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    values = _core.plan_incremental(float(head_start), None if deadline is None else float(deadline))
    return Plan(**values)


class IncrementalMicroaggregator(ParamsMixin):
    """Two-step k-anonymous microaggregation: ``fit`` the base part, ``extend`` with late records.

    Parameters
    ----------
    k : int
        Minimum group size.
    base_method : str, default "mdav"
        Any of :data:`microagg.METHODS`, for the base part (and for ``"two-step"``).
    strategy : {"two-step", "nn", "nn-split-mid", "nn-split-end"}
        ``"two-step"``: the base method on the new records alone (fewer than k join their
        nearest groups); ``"nn"``: each joins the group with the nearest centroid;
        ``"nn-split-mid"``: and a group reaching 2k is split by MDAV at once;
        ``"nn-split-end"``: and afterwards every group of >= 2k is split by MDAV.
    inertial : bool, default False
        Join the group whose SSE rises least, n_q/(n_q+1)·‖y − x̂_q‖² (thesis §3.2.6).
    standardize : bool, default True
        z-score the attributes. The statistics are the base part's, so groups formed earlier
        are never re-scaled and the late records are placed in the same geometry...
    refit_scaling : bool, default False
        ...unless this is True: every ``extend`` then recomputes the statistics over all
        records seen (better when late records shift the distribution; IL is reported on the
        refitted scale, so it is not comparable between calls).
    n_jobs : int, default 1
        Threads for the base method and splits.
    spatial_index : bool or None, default None
        Answer each late record's nearest-group query from a k-d tree of the centroids
        (followed as groups grow and split) instead of scoring every group: the same groups.
        None = automatic: from 500 groups for at most 3 attributes, 1 000 for at most 5,
        10 000 for at most 8; never above 8.

    Attributes
    ----------
    labels_, centroids_, group_sizes_, information_loss_, aggregated_, n_groups_
        For all records seen (base first, then each extension in order).
    """

    _PARAM_NAMES = (
        "k", "base_method", "strategy", "inertial", "n_jobs", "standardize", "refit_scaling", "spatial_index",
    )

    def __init__(
        self,
        k: int = 5,
        base_method: str = "mdav",
        strategy: str = "nn-split-end",
        *,
        inertial: bool = False,
        n_jobs: int = 1,
        standardize: bool = True,
        refit_scaling: bool = False,
        spatial_index: Optional[bool] = None,
    ) -> None:
        self.k = k
        self.base_method = base_method
        self.strategy = strategy
        self.inertial = inertial
        self.n_jobs = n_jobs
        self.standardize = standardize
        self.refit_scaling = refit_scaling
        self.spatial_index = spatial_index

    def _validated(self) -> dict[str, Any]:
        strategy = check_str(self.strategy, "strategy")
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got {strategy!r}")
        base = check_str(self.base_method, "base_method")
        if base not in METHODS:
            raise ValueError(f"unknown base_method {base!r}; choose one of: {', '.join(METHODS)}")
        return dict(
            strategy=strategy,
            inertial=check_bool(self.inertial, "inertial"),
            standardize=check_bool(self.standardize, "standardize"),
            refit_scaling=check_bool(self.refit_scaling, "refit_scaling"),
            n_jobs=check_n_jobs(self.n_jobs),
            spatial_index=None if self.spatial_index is None else check_bool(self.spatial_index, "spatial_index"),
        )

    def fit(self, X_base: Any, y: Any = None) -> "IncrementalMicroaggregator":
        """Microaggregate the base part."""
        opts = self._validated()
        arr, _ = as_data_matrix(X_base, name="X_base")
        k = check_k(self.k)
        self._state = _core.IncrementalState(arr, k, self.base_method, **opts)
        self._n_features = arr.shape[1]
        self._update()
        return self

    def extend(self, X_new: Any) -> "IncrementalMicroaggregator":
        """Fold new records in (may be called repeatedly)."""
        if not hasattr(self, "_state"):
            raise ValueError("call fit(X_base) before extend(X_new)")
        arr, _ = as_data_matrix(X_new, name="X_new")
        if arr.shape[1] != self._n_features:
            raise ValueError(f"X_new has {arr.shape[1]} attributes, the fitted data has {self._n_features}")
        self._state.extend(arr)
        self._update()
        return self

    def _update(self) -> None:
        labels, n_groups, centroids, sse, sst = self._state.result()
        self.labels_: npt.NDArray[np.int64] = labels
        self.n_groups_: int = n_groups
        self.centroids_: npt.NDArray[np.float64] = centroids
        self.group_sizes_: npt.NDArray[np.int64] = np.bincount(labels, minlength=n_groups).astype(np.int64)
        self.sse_: float = sse
        self.sst_: float = sst
        self.information_loss_: float = sse / sst if sst > 0 else 0.0

    @property
    def aggregated_(self) -> npt.NDArray[np.float64]:
        """The k-anonymous table of all records seen."""
        return self.centroids_[self.labels_]
