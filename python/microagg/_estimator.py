"""scikit-learn estimator around :func:`microagg.microaggregate` (docs/api.md#scikit-learn).

``MicroAggregator`` is built on first use (this module's ``__getattr__``): with scikit-learn
(≥ 1.6) installed it subclasses ``TransformerMixin`` and ``BaseEstimator``, so ``set_output``
(pandas, polars), pipelines, ``clone``, the HTML repr and ``check_estimator`` work as for
scikit-learn's own transformers; without it, it is the same estimator minus those extras.
Either way ``import microagg`` never imports scikit-learn.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import numpy.typing as npt

from ._api import microaggregate
from ._frames import as_frame, numeric_matrix
from ._params import ParamsMixin
from ._validation import as_data_matrix, check_k


class NotFittedError(ValueError, AttributeError):
    """The estimator is used before ``fit`` (without scikit-learn; the same bases as
    scikit-learn's NotFittedError, which the scikit-learn build raises)."""


def _fingerprint(arr: npt.NDArray[Any]) -> tuple[tuple[int, ...], str]:
    """Shape and digest of the data as float64, to recognise the fitted data."""
    data = np.ascontiguousarray(arr, dtype=np.float64)
    return data.shape, hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()


class _MicroAggregator(ParamsMixin):
    """k-anonymous microaggregation with scikit-learn's estimator conventions.

    Microaggregation is transductive: it partitions the data it is given. ``fit(X)``
    computes the groups, ``transform(X)`` returns the k-anonymous version of that same
    ``X`` (every record replaced by its group centroid), ``fit_transform`` does both.
    ``X`` may be a NumPy array, a pandas or polars DataFrame or a pyarrow Table; with
    scikit-learn installed, ``set_output(transform="pandas")`` (or ``"polars"``) makes
    ``transform`` return a DataFrame with the input's column names.

    The transformer takes numeric attributes only (a text column is a ``TypeError``): a key
    that mixes numbers with categories goes through :func:`microagg.anonymize`
    (``categorical=``, ``ordinal=``), whose release of a category is not a transform of
    numbers.

    Parameters
    ----------
    k, method, standardize, dtype, n_jobs, seed
        As in :func:`microagg.microaggregate`.
    small_strata, aggregation, trim, missing, max_part
        The workflow options of :func:`microagg.microaggregate` (docs/workflow.md,
        docs/scaling.md#partitioned-runs). Strata and sampling weights are per-record data, so they
        are arguments of ``fit``: ``fit(X, by=strata, sample_weight=weights)``.
    method_params : dict, optional
        Method-specific options (e.g. ``{"partial_sort": False}``).

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n,)
    centroids_ : ndarray of float64, shape (n_groups, d)
        Group means (plain, whatever the weights and the aggregation).
    n_groups_ : int
    group_sizes_ : ndarray of int64
    group_values_ : ndarray of float64, shape (n_groups, d)
        What each group releases (its weighted ``aggregation``; the centroids for "mean"
        without weights).
    merges_ : tuple of StratumMerge
    sse_, sst_, information_loss_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of str (only when fitted on a DataFrame)
    """

    # The constructor parameters, in order: get_params/set_params/repr read this list.
    _PARAM_NAMES = (
        "k",
        "method",
        "standardize",
        "dtype",
        "n_jobs",
        "seed",
        "small_strata",
        "aggregation",
        "trim",
        "missing",
        "max_part",
        "method_params",
    )

    def __init__(
        self,
        k: int = 5,
        method: str = "mdav",
        *,
        standardize: bool = True,
        dtype: Any = None,
        n_jobs: int = 1,
        seed: Optional[int] = None,
        small_strata: str = "error",
        aggregation: str = "mean",
        trim: Optional[float] = None,
        missing: str = "error",
        max_part: Optional[int] = None,
        method_params: Optional[dict[str, Any]] = None,
    ) -> None:
        self.k = k
        self.method = method
        self.standardize = standardize
        self.dtype = dtype
        self.n_jobs = n_jobs
        self.seed = seed
        self.small_strata = small_strata
        self.aggregation = aggregation
        self.trim = trim
        self.missing = missing
        self.max_part = max_part
        self.method_params = method_params

    def _options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`microagg.microaggregate` these parameters give:
        every parameter but ``k`` and ``method`` under its own name (so a new parameter only
        needs ``__init__`` and ``_PARAM_NAMES``), plus the entries of ``method_params``."""
        if self.method_params is not None and not isinstance(self.method_params, dict):
            raise TypeError("method_params must be a dict or None")
        named = {n: getattr(self, n) for n in self._PARAM_NAMES if n not in ("k", "method", "method_params")}
        return {**named, **(self.method_params or {})}

    def _read(self, X: Any) -> tuple[npt.NDArray[Any], Optional[npt.NDArray[np.object_]]]:
        """``X`` as a 2-D float array, and its column names when it is a DataFrame."""
        frame = as_frame(X)
        if frame is None:
            return self._array(X), None
        return numeric_matrix(frame), np.asarray([str(c) for c in frame.columns], dtype=object)

    def _array(self, X: Any) -> npt.NDArray[Any]:
        """A non-frame ``X`` as a 2-D float array; the scikit-learn build uses its
        ``check_array`` (its messages for sparse, complex, 1-D, empty data)."""
        return as_data_matrix(X)[0]

    def _check_features(
        self, X: Any, data: npt.NDArray[Any], names: Optional[npt.NDArray[np.object_]], *, reset: bool
    ) -> None:
        """Record (``reset``) or check ``n_features_in_`` and ``feature_names_in_``. The
        scikit-learn build lets scikit-learn do it, for its exact messages and warnings."""
        if reset:
            self.n_features_in_ = data.shape[1]
            if names is None:
                self.__dict__.pop("feature_names_in_", None)
            else:
                self.feature_names_in_ = names
            return
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and not np.array_equal(names, fitted):
            raise ValueError("The feature names should match those that were passed during fit.")
        if data.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {data.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input."
            )

    def fit(self, X: Any, y: Any = None, *, by: Any = None, sample_weight: Any = None) -> "_MicroAggregator":
        """Partition ``X`` into groups of at least ``k`` records. ``y`` is ignored; ``by``
        (strata labels) and ``sample_weight`` are ``microaggregate``'s ``by`` and
        ``weights``."""
        data, names = self._read(X)
        n = data.shape[0]
        if n < check_k(self.k):  # scikit-learn's words for too few records
            raise ValueError(f"k={self.k} needs at least k records, got {n} sample{'' if n == 1 else 's'}")
        res = microaggregate(data, self.k, self.method, by=by, weights=sample_weight, **self._options())
        self._check_features(X, data, names, reset=True)
        self.labels_ = res.labels
        self.centroids_ = res.centroids
        self.n_groups_ = res.n_groups
        self.group_sizes_ = res.group_sizes
        self.group_values_ = res.group_values
        self.merges_ = res.merges
        self._released = res.aggregated
        self.sse_ = res.sse
        self.sst_ = res.sst
        self.information_loss_ = res.information_loss
        self._fingerprint = _fingerprint(data)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "labels_"):
            raise NotFittedError(
                f"this {type(self).__name__} is not fitted yet; call fit(X) first"
            )

    def transform(self, X: Any) -> npt.NDArray[np.float64]:
        """The k-anonymous version of the fitted data (records replaced by their centroids)."""
        self._check_fitted()
        data, names = self._read(X)
        self._check_features(X, data, names, reset=False)
        if not np.isfinite(data[~np.isnan(data)] if self.missing != "error" else data).all():
            raise ValueError("X contains NaN or infinity")
        if _fingerprint(data) != self._fingerprint:
            raise ValueError(
                "microaggregation is transductive: transform() accepts only the data passed to "
                "fit(); use fit_transform(X) for new data"
            )
        return self._released.copy()

    def fit_transform(
        self, X: Any, y: Any = None, *, by: Any = None, sample_weight: Any = None
    ) -> npt.NDArray[np.float64]:
        """Fit, then return the k-anonymous version of ``X``."""
        self.fit(X, by=by, sample_weight=sample_weight)
        return self._released.copy()

    def get_feature_names_out(self, input_features: Any = None) -> npt.NDArray[np.object_]:
        """Output column names: the input's (one output column per input column)."""
        self._check_fitted()
        fitted = getattr(self, "feature_names_in_", None)
        if input_features is None:
            if fitted is not None:
                return np.array(fitted, dtype=object)
            return np.array([f"x{i}" for i in range(self.n_features_in_)], dtype=object)
        names = np.asarray(input_features, dtype=object)
        if fitted is not None and not np.array_equal(names, fitted):
            raise ValueError("input_features is not equal to feature_names_in_")
        if names.shape != (self.n_features_in_,):
            raise ValueError(
                f"input_features should have length equal to number of features "
                f"({self.n_features_in_}), got {len(names)}"
            )
        return names

    if TYPE_CHECKING:  # provided by scikit-learn's TransformerMixin when it is installed

        def set_output(self, *, transform: Optional[str] = None) -> "_MicroAggregator": ...


def _with_sklearn(base: type[_MicroAggregator]) -> type[_MicroAggregator]:
    """``base`` made a scikit-learn transformer, or ``base`` without scikit-learn ≥ 1.6."""
    try:
        from sklearn.base import BaseEstimator, TransformerMixin
        from sklearn.utils.validation import check_array, check_is_fitted, validate_data
    except ImportError:
        return base

    class MicroAggregator(base, TransformerMixin, BaseEstimator):  # type: ignore[misc, valid-type]
        __doc__ = base.__doc__
        # Defined here so that TransformerMixin wraps them for set_output.
        transform = base.transform
        fit_transform = base.fit_transform

        def _check_features(
            self, X: Any, data: npt.NDArray[Any], names: Optional[npt.NDArray[np.object_]], *, reset: bool
        ) -> None:
            validate_data(self, X, reset=reset, skip_check_array=True)
            if reset:  # also for inputs scikit-learn cannot count (Arrow streams)
                self.n_features_in_ = data.shape[1]

        def _array(self, X: Any) -> npt.NDArray[Any]:
            finite: Any = "allow-nan" if self.missing != "error" else True
            return np.asarray(check_array(X, dtype=(np.float64, np.float32), ensure_all_finite=finite))

        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()
            tags.input_tags.allow_nan = self.missing != "error"
            return tags

        def _check_fitted(self) -> None:  # raises scikit-learn's own NotFittedError
            check_is_fitted(self)

    return MicroAggregator


def _build() -> type[_MicroAggregator]:
    cls = _with_sklearn(_MicroAggregator)
    cls.__name__ = cls.__qualname__ = "MicroAggregator"
    cls.__module__ = __name__
    return cls


if TYPE_CHECKING:
    MicroAggregator = _MicroAggregator
else:

    def __getattr__(name: str) -> Any:
        """Builds ``MicroAggregator`` on first access (imports scikit-learn only then)."""
        if name == "MicroAggregator":
            cls = globals()["MicroAggregator"] = _build()
            return cls
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
