"""scikit-learn style estimator around :func:`microagg.microaggregate`."""

from __future__ import annotations

from typing import Any, Optional

import hashlib

import numpy as np
import numpy.typing as npt

from ._api import microaggregate
from ._params import ParamsMixin


def _fingerprint(X: Any) -> tuple[tuple[int, ...], str]:
    """Shape and digest of the data as float64, to recognise the fitted data without a copy."""
    arr = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    return arr.shape, hashlib.blake2b(arr.tobytes(), digest_size=16).hexdigest()


class MicroAggregator(ParamsMixin):
    """k-anonymous microaggregation with scikit-learn's estimator conventions.

    Microaggregation is transductive: it partitions the data it is given. ``fit(X)``
    computes the groups, ``transform(X)`` returns the k-anonymous version of that same
    ``X`` (every record replaced by its group centroid), ``fit_transform`` does both.

    Parameters
    ----------
    k, method, standardize, dtype, n_jobs, seed
        As in :func:`microagg.microaggregate`.
    method_params : dict, optional
        Method-specific options (e.g. ``{"partial_sort": False}``).

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n,)
    centroids_ : ndarray of float64, shape (n_groups, d)
    n_groups_ : int
    group_sizes_ : ndarray of int64
    sse_, sst_, information_loss_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only when fitted on a DataFrame)
    """

    def __init__(
        self,
        k: int = 5,
        method: str = "mdav",
        *,
        standardize: bool = True,
        dtype: Any = None,
        n_jobs: int = 1,
        seed: Optional[int] = None,
        method_params: Optional[dict[str, Any]] = None,
    ) -> None:
        self.k = k
        self.method = method
        self.standardize = standardize
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.seed = seed
        self.method_params = method_params

    _PARAM_NAMES = ("k", "method", "standardize", "dtype", "n_jobs", "seed", "method_params")

    def fit(self, X: Any, y: Any = None) -> "MicroAggregator":
        """Partition ``X`` into groups of at least ``k`` records. ``y`` is ignored."""
        if self.method_params is not None and not isinstance(self.method_params, dict):
            raise TypeError("method_params must be a dict or None")
        res = microaggregate(
            X,
            self.k,
            self.method,
            standardize=self.standardize,
            dtype=self.dtype,
            n_jobs=self.n_jobs,
            seed=self.seed,
            **(self.method_params or {}),
        )
        self.labels_ = res.labels
        self.centroids_ = res.centroids
        self.n_groups_ = res.n_groups
        self.group_sizes_ = res.group_sizes
        self.sse_ = res.sse
        self.sst_ = res.sst
        self.information_loss_ = res.information_loss
        self.n_features_in_ = res.centroids.shape[1]
        if hasattr(X, "columns"):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self._fingerprint = _fingerprint(X)
        return self

    def transform(self, X: Any) -> npt.NDArray[np.float64]:
        """The k-anonymous version of the fitted data (records replaced by their centroids)."""
        if not hasattr(self, "labels_"):
            raise ValueError("this MicroAggregator is not fitted yet; call fit(X) first")
        if _fingerprint(X) != self._fingerprint:
            raise ValueError(
                "microaggregation is transductive: transform() accepts only the data passed to "
                "fit(); use fit_transform(X) for new data"
            )
        return self.centroids_[self.labels_]

    def fit_transform(self, X: Any, y: Any = None) -> npt.NDArray[np.float64]:
        """Fit, then return the k-anonymous version of ``X``."""
        self.fit(X)
        return self.centroids_[self.labels_]
