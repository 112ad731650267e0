"""Validation shared by the assessment measures (docs/assessment.md): the original/release pair,
weights and strata, and the NaN-aware column statistics the measures are built from.

Missing values: ``X`` and ``Xm`` may hold NaN (``missing="keep"`` leaves missing cells
missing); every statistic here skips them. Infinity is rejected.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ._columns import MeasureRoles, Terms, measure_roles, strata_names
from ._frames import as_frame, column
from ._mixed.types import NUMERIC, frame_key
from ._validation import as_data_matrix
from ._workflow import as_weights as workflow_weights
from ._workflow import _is_missing, factorize_strata

F64 = npt.NDArray[np.float64]


def as_pair(X: Any, Xm: Any) -> Tuple[F64, F64]:
    """The original ``X`` and the release ``Xm`` as float64 arrays of the same 2-D shape."""
    x = np.asarray(as_data_matrix(X, name="X")[0], dtype=np.float64)
    xm = np.asarray(as_data_matrix(Xm, name="Xm")[0], dtype=np.float64)
    if x.shape != xm.shape:
        raise ValueError(f"X and Xm must have the same shape, got {x.shape} and {xm.shape}")
    if x.size == 0:
        raise ValueError(f"X is empty (shape {x.shape}); the measures need records and attributes")
    for name, a in (("X", x), ("Xm", xm)):
        if np.isinf(a).any():
            raise ValueError(f"{name} contains infinity (NaN, a missing value, is allowed)")
    return x, xm


@dataclass(frozen=True)
class Release:
    """A release as the class-based measures read it: ``key`` (n, d) the whole key as
    floats (categories as level codes, NaN where missing, the wildcard of
    :mod:`microagg._kanonymity`), ``strata`` one code per record (None: no strata),
    ``roles`` the frame's column roles and ``frame`` the narwhals frame (None for arrays)."""

    key: F64
    strata: Optional[npt.NDArray[np.int64]]
    roles: Optional[MeasureRoles] = None
    frame: Any = None


def as_release(
    Xm: Any,
    *,
    columns: Any = None,
    by: Any = None,
    weights: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    sensitive: Any = None,
    name: str = "Xm",
) -> Release:
    """``Xm`` as the measures read it. A DataFrame's roles are ``anonymize``'s
    (:func:`microagg._columns.measure_roles`): ``columns`` the key (default: its numeric
    columns without another role, and the categorical and ordinal ones), ``by`` strata
    column names (or one label per record), ``weights`` and ``sensitive`` column names, never
    keys. An array is the key itself, ``by`` its labels; naming columns is then a
    ``TypeError``."""
    frame = as_frame(Xm, name)
    if frame is None:
        for option, value in (("columns", columns), ("categorical", categorical), ("ordinal", ordinal)):
            if value is not None:
                raise TypeError(f"{option}= names the key columns of a DataFrame; {name} is not one")
        key = np.asarray(as_data_matrix(Xm, name=name)[0], dtype=np.float64)
        return Release(_finite(key, name), _strata(by, key.shape[0]))
    names = strata_names(frame.columns, by)
    roles = measure_roles(
        frame, columns=columns, by=names, weights=weights, categorical=categorical, ordinal=ordinal,
        sensitive=sensitive, terms=Terms(name),
    )
    key = np.column_stack([
        c.values if c.kind == NUMERIC else np.where(c.missing, np.nan, c.values.astype(np.float64))
        for c in frame_key(frame, roles.key, roles.categories, {})
    ])
    native = frame.to_native()
    if names is not None:
        labels = [column(native, c, name=name) for c in names]
        by = labels[0] if len(labels) == 1 else np.column_stack([np.asarray(v, dtype=object) for v in labels])
    return Release(_finite(key, name), _strata(by, key.shape[0]), roles, frame)


def _strata(by: Any, n: int) -> Optional[npt.NDArray[np.int64]]:
    """The strata codes of ``by`` as every entry point's ``by`` takes labels."""
    return None if by is None else factorize_strata(by, n)[0]


def _finite(key: F64, name: str) -> F64:
    if key.size == 0:
        raise ValueError(f"{name} is empty (shape {key.shape})")
    if np.isinf(key).any():
        raise ValueError(f"{name} contains infinity (NaN, a missing value, is allowed)")
    return key


def as_weights(weights: Any, n: int) -> Optional[F64]:
    """``None``, or ``n`` finite non-negative weights with a positive sum
    (:func:`microagg._workflow.as_weights`)."""
    return None if weights is None else workflow_weights(weights, n, check_values=True)


def strata_codes(by: Any, n: int) -> Optional[npt.NDArray[np.int64]]:
    """One integer code per record for the strata ``by`` (``None`` for no strata), as
    :func:`microagg._workflow.factorize_strata` codes them.

    ``by`` is a sequence of n labels (numbers, strings, a pandas Series; NaN and None form a
    stratum of their own) or an (n, m) array / DataFrame whose rows combine m labels.
    """
    if by is None:
        return None
    shape = np.shape(by.to_numpy() if hasattr(by, "to_numpy") else by)
    if len(shape) not in (1, 2) or shape[0] != n:
        raise ValueError(f"by must hold one stratum label per record ({n}), got shape {shape}")
    return factorize_strata(by, n)[0]


def sample_sd(a: F64) -> F64:
    """Per-column sample standard deviation (n − 1) over observed values, R's
    ``sd(na.rm = TRUE)``: NaN for a column with fewer than two observed values."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(np.nanstd(a, axis=0, ddof=1), dtype=np.float64)


def population_scale(x: F64) -> Tuple[F64, F64]:
    """Per-column mean and population sd (ddof 0) of the observed values of ``x``; a
    constant or empty column gets sd 1 (any scale leaves its distances unchanged) and
    mean 0 when it has no observed value."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=0)
        sd = np.nanstd(x, axis=0)
    mean = np.where(np.isnan(mean), 0.0, mean)
    sd = np.where(np.isnan(sd) | (sd == 0), 1.0, sd)
    return mean, sd


def pairwise_moments(a: F64, weights: Optional[F64] = None, ddof: int = 1) -> Tuple[F64, F64]:
    """Covariance and correlation matrices over the records observed in both columns of each
    pair, each pair centred on its own means (R's ``var``/``cor`` with
    ``use = "pairwise.complete.obs"`` for ``ddof=1`` without weights). Weighted:
    Σ w (a − ā)(b − b̄) / (Σ w − ddof) with weighted means. Undefined entries (a constant
    column, fewer than ``ddof + 1`` common records) are NaN."""
    n, d = a.shape
    w = np.ones(n) if weights is None else weights
    observed = ~np.isnan(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        if observed.all():
            total = w.sum()
            centred = a - (w @ a) / total
            cov = np.asarray((centred * w[:, None]).T @ centred / (total - ddof), dtype=np.float64)
            sd = np.sqrt(np.diag(cov))
            return cov, cov / np.outer(sd, sd)
        cov, corr = np.full((d, d), np.nan), np.full((d, d), np.nan)
        for i in range(d):
            for j in range(i, d):
                both = observed[:, i] & observed[:, j]
                wb = w[both]
                total = wb.sum()
                if total - ddof <= 0:
                    continue
                ci, cj = a[both, i] - wb @ a[both, i] / total, a[both, j] - wb @ a[both, j] / total
                cov[i, j] = cov[j, i] = (wb * ci) @ cj / (total - ddof)
                corr[i, j] = corr[j, i] = cov[i, j] / np.sqrt(((wb * ci) @ ci) * ((wb * cj) @ cj)) * (total - ddof)
        return cov, corr


def check_aligned(original: Any, released: Any, copied: list[Any], where: Any = None) -> bool:
    """A release lines up with its original (docs/assessment.md#a-release-lines-up-with-its-original):
    every column of ``copied`` (present in both files and released as read: not key, not
    confidential, not strata) holds the same values row by row in ``original`` and
    ``released`` (mappings of column name to values; missing equals missing), else a
    ``ValueError`` naming the column and the first row that differs (``where(i)`` words
    row i; default "row i"). True when a column was compared."""
    for name in copied:
        a, b = np.asarray(original[name]), np.asarray(released[name])
        if a.dtype.kind in "biuf" and b.dtype.kind in "biuf":
            x, y = a.astype(np.float64), b.astype(np.float64)
            same = (x == y) | (np.isnan(x) & np.isnan(y))
        else:
            pairs = zip(a.astype(object).tolist(), b.astype(object).tolist())
            same = np.array([u == v or (_is_missing(u) and _is_missing(v)) for u, v in pairs], dtype=bool)
        if not same.all():
            i = int(np.flatnonzero(~same)[0])
            at = f"row {i}" if where is None else where(i)
            raise ValueError(
                f"column {name!r} differs between the original and the release at {at} "
                f"({a[i]!r} vs {b[i]!r}): scoring pairs row i with row i, so a release must keep the "
                "original's records in the original's order"
            )
    return bool(copied)


def check_information_loss(il: float) -> None:
    """With no copied column to line the files up by, an information loss above 100 % (worse
    than releasing every record as the file's mean) says the rows look misaligned: a
    ``ValueError``, since shuffled rows understate the linkage risk."""
    if il > 1.0:
        raise ValueError(
            f"information loss {100 * il:.2f}% is above 100%: the release's rows look misaligned with the "
            "original's (row i of the release must be the release of row i); scoring would understate the risk"
        )
