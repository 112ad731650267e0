"""``microagg.assess``: every risk and utility measure of a release in one object, what a
release report (:mod:`microagg.report`) is written from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence, Tuple, cast

import numpy as np

from . import risk, utility
from ._assess_input import F64, as_pair, as_release, as_weights, check_aligned, check_information_loss, strata_codes
from ._columns import MeasureRoles
from ._frames import as_frame, column, numeric_matrix
from ._linkage_key import LinkageTables, frame_tables, with_categories
from ._mixed.types import missing_cells, nominal_column
from ._risk_change import DEFAULT_RISK_THRESHOLD, RiskChange, risk_change
from ._tcloseness import _check_t
from ._validation import check_bool, check_int, check_n_jobs
from ._workflow import StratumMerge
from .report import render_report, write_report


@dataclass(frozen=True)
class Assessment:
    """Disclosure risk and utility of a release ``Xm`` of ``X`` (see :func:`assess`).

    Attributes
    ----------
    n_records : int
    n_attributes : int
        Numeric key attributes (the columns of ``X``); the whole key adds the categorical
        ones (:attr:`key_attributes`).
    attributes : tuple of str
        Numeric key column names (from a DataFrame ``X``; ``x0, x1, ...`` otherwise).
    information_loss : float
        The numeric information loss: SSE/SST on the standardized numeric key columns,
        weighted when weights are given (sdcMicro's reading; a mixed key's loss on its
        embedding is another figure, which ``anonymize`` reports).
    il1s, eigen : float
        sdcMicro's ``dUtility`` measures.
    interval_disclosure : float
        sdcMicro's ``dRisk`` at ``p``.
    p : float
        The interval width used.
    record_linkage : microagg.risk.RecordLinkageResult
        Nearest-record linkage over the whole key (``.rate``, ``.expected_correct``).
    min_group_size : int
        The k the release achieves: its smallest class, within strata given ``by``; a
        missing value matches any value (:func:`microagg.risk.min_group_size`).
    changes : microagg.utility.AttributeChanges
        Per-attribute means, variances and correlations before and after.
    k_requested : int or None
        The k the release was asked to meet (``k=`` of :func:`assess`).
    class_size_records : tuple of (size, records)
        For every class size present, the number of records in classes of that size
        (:func:`microagg.risk.class_sizes`), ascending by size.
    n_strata : int or None
        Strata the classes were counted within (``by``).
    missing_original, missing_released : int
        Missing cells of each file over the whole key, numeric and categorical, as read.
    record_linkage_global : microagg.risk.RecordLinkageResult or None
        One-to-one record linkage (``global_linkage=True``).
    histograms : tuple of microagg.utility.AttributeHistogram
        Per attribute, counts of the original and released values over shared bins.
    merges : tuple of microagg.StratumMerge
        The strata merged because they had fewer than k records, as the run reported them.
    weighted : bool
        Whether survey weights weighted the information loss and the moments.
    categorical : tuple of (name, microagg.utility.CategoricalChanges)
        Per categorical key attribute (``categorical=`` of :func:`assess`): the share of
        cells changed and the total variation distance of the frequencies.
    max_emd : dict of str to float, or None
        Per confidential attribute (``sensitive=``), the largest EMD of a class from the
        file's distribution: the t of t-closeness the release achieves
        (:func:`microagg.risk.t_closeness`).
    t_requested : float or None
        The t the release was asked to meet (``t=`` of :func:`assess`).
    identifiers : tuple of str
        Columns outside the key, strata, weights and sensitive attributes that hold a
        distinct value per record in the release: possible direct identifiers copied as
        read (the release report flags them).
    population_risk : microagg.risk.RiskChange or None
        The population re-identification risk (sdcMicro's ``measure_risk``) of the original
        and of the release on the whole key, records above ``risk_threshold``, and the
        l-diversity of the sensitive attributes (docs/assessment.md#population-risk).
    """

    n_records: int
    n_attributes: int
    attributes: tuple[str, ...]
    information_loss: float
    il1s: float
    eigen: float
    interval_disclosure: float
    p: float
    record_linkage: risk.RecordLinkageResult
    min_group_size: int
    changes: utility.AttributeChanges
    k_requested: Optional[int] = None
    class_size_records: tuple[tuple[int, int], ...] = ()
    n_strata: Optional[int] = None
    missing_original: int = 0
    missing_released: int = 0
    record_linkage_global: Optional[risk.RecordLinkageResult] = None
    histograms: tuple[utility.AttributeHistogram, ...] = ()
    merges: tuple[StratumMerge, ...] = ()
    weighted: bool = False
    categorical: tuple[tuple[str, utility.CategoricalChanges], ...] = ()
    max_emd: Optional[dict[str, float]] = None
    t_requested: Optional[float] = None
    identifiers: tuple[str, ...] = ()
    population_risk: Optional[RiskChange] = None

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """The whole key: the numeric attributes, then the categorical ones."""
        return self.attributes + tuple(name for name, _ in self.categorical)

    @property
    def meets_t(self) -> Optional[bool]:
        """Whether every sensitive attribute's largest class EMD is at most the requested t
        (None without ``t`` or ``sensitive``)."""
        if self.t_requested is None or self.max_emd is None:
            return None
        return all(v <= self.t_requested for v in self.max_emd.values())

    @property
    def meets_k(self) -> Optional[bool]:
        """Whether every class has at least the requested k records (None without ``k``)."""
        return None if self.k_requested is None else self.min_group_size >= self.k_requested

    @property
    def records_below_k(self) -> Optional[int]:
        """Records in classes smaller than the requested k (None without ``k``)."""
        if self.k_requested is None:
            return None
        return self.records_in_classes_below(self.k_requested)

    def records_in_classes_below(self, j: int) -> int:
        """Records in classes of fewer than ``j`` records: those violating j-anonymity, as
        sdcMicro's report counts them for j = 2 and 3."""
        return sum(r for size, r in self.class_size_records if size < j)

    @property
    def reidentification_risk(self) -> tuple[float, float]:
        """(highest, average) prosecutor risk, as ARX reports it: a record in a class of s
        records is re-identified with probability 1/s by an intruder who knows it is in
        the file; the highest is 1/min_group_size, the average is over records."""
        mean = sum(r / size for size, r in self.class_size_records) / self.n_records
        return 1.0 / self.min_group_size, mean

    def to_dict(self) -> dict[str, Any]:
        """The scalar measures, then per-attribute lists, then the class sizes, histograms
        and merges (JSON-friendly Python values; None where a measure was not asked for)."""
        c = self.changes
        g = self.record_linkage_global
        return {
            "n_records": self.n_records,
            "n_attributes": self.n_attributes,
            "information_loss": self.information_loss,
            "il1s": self.il1s,
            "eigen": self.eigen,
            "interval_disclosure": self.interval_disclosure,
            "record_linkage_rate": self.record_linkage.rate,
            "record_linkage_expected_correct": self.record_linkage.expected_correct,
            "min_group_size": self.min_group_size,
            "attributes": list(self.attributes),
            "key_attributes": list(self.key_attributes),
            "n_key_attributes": len(self.key_attributes),
            "mean_change": c.mean_change.tolist(),
            "variance_ratio": c.variance_ratio.tolist(),
            "max_correlation_change": c.max_correlation_change.tolist(),
            "p": self.p,
            "k_requested": self.k_requested,
            "meets_k": self.meets_k,
            "records_below_k": self.records_below_k,
            "records_violating": {
                str(j): self.records_in_classes_below(j)
                for j in sorted({2, 3} | ({self.k_requested} if self.k_requested else set()))
            },
            "reidentification_risk_max": self.reidentification_risk[0],
            "reidentification_risk_mean": self.reidentification_risk[1],
            "class_size_records": [list(pair) for pair in self.class_size_records],
            "n_strata": self.n_strata,
            "missing_original": self.missing_original,
            "missing_released": self.missing_released,
            "record_linkage_global_rate": None if g is None else g.rate,
            "mean_original": c.mean_original.tolist(),
            "mean_released": c.mean_released.tolist(),
            "sd_original": np.sqrt(c.variance_original).tolist(),
            "sd_released": np.sqrt(c.variance_released).tolist(),
            "histograms": [
                {"edges": h.edges.tolist(), "original": h.original.tolist(), "released": h.released.tolist()}
                for h in self.histograms
            ],
            "merges": [{"stratum": m.stratum, "into": m.into, "size": m.size} for m in self.merges],
            "weighted": self.weighted,
            "categorical": {
                name: {
                    "cells_changed": c.cells_changed,
                    "total_variation": c.total_variation,
                    "levels": list(c.levels),
                    "original_frequencies": c.original_frequencies.tolist(),
                    "released_frequencies": c.released_frequencies.tolist(),
                    "original_records": c.original_records.tolist(),
                    "released_records": c.released_records.tolist(),
                }
                for name, c in self.categorical
            },
            "max_emd": self.max_emd,
            "t_requested": self.t_requested,
            "meets_t": self.meets_t,
            "identifiers": list(self.identifiers),
            "population_risk": None if self.population_risk is None else self.population_risk.to_dict(),
        }

    def to_html(
        self,
        path: Any = None,
        *,
        provenance: Optional[dict[str, Any]] = None,
        candidates: Optional[Sequence[dict[str, Any]]] = None,
        title: Optional[str] = None,
    ) -> str:
        """The release report: one self-contained HTML page for a disclosure review board
        (summary, provenance, privacy, utility, the R-U map of ``candidates``), holding
        aggregates only, never a record's value nor a level or bin of fewer than k records
        (the small-cell rule the page states). Written to ``path`` when given; the HTML
        text is returned either way. See :func:`microagg.report.write_report`."""
        if path is None:
            return render_report(self, provenance=provenance, candidates=candidates, title=title)
        return write_report(path, self, provenance=provenance, candidates=candidates, title=title)

    def to_frame(self) -> Any:
        """The per-attribute table as a pandas DataFrame (needs pandas), one row per attribute:
        means, variances, their change, and the largest correlation change."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Assessment.to_frame() needs pandas: pip install pandas") from None
        c = self.changes
        return pd.DataFrame(
            {
                "mean_original": c.mean_original,
                "mean_released": c.mean_released,
                "mean_change": c.mean_change,
                "variance_original": c.variance_original,
                "variance_released": c.variance_released,
                "variance_ratio": c.variance_ratio,
                "max_correlation_change": c.max_correlation_change,
            },
            index=pd.Index(self.attributes, name="attribute"),
        )

    def __repr__(self) -> str:
        c = self.changes
        worst = int(np.nanargmax(np.abs(1 - c.variance_ratio))) if np.isfinite(c.variance_ratio).any() else 0
        return (
            f"Assessment({self.n_records} records x {self.n_attributes} attributes)\n"
            f"  utility  numeric information loss {100 * self.information_loss:.3f}%   IL1s {self.il1s:.6g}"
            f"   eigen {self.eigen:.4f}\n"
            f"  risk     interval disclosure (p={self.p:g}) {100 * self.interval_disclosure:.2f}%"
            f"   record linkage {100 * self.record_linkage.rate:.2f}%"
            f"   min group size {self.min_group_size}\n"
            f"  changes  largest variance change {self.attributes[worst]} "
            f"(ratio {c.variance_ratio[worst]:.4f}), largest |mean change| "
            f"{float(np.nanmax(np.abs(c.mean_change), initial=0.0)):.4g}, largest correlation change "
            f"{float(np.nanmax(c.max_correlation_change, initial=0.0)):.4f}"
        )


def assess(
    X: Any,
    Xm: Any,
    *,
    by: Any = None,
    weights: Any = None,
    p: float = 0.05,
    n_jobs: int = 1,
    columns: Any = None,
    k: Optional[int] = None,
    global_linkage: bool = False,
    merges: Iterable[Any] = (),
    categorical: Any = None,
    ordinal: Any = None,
    sensitive: Any = None,
    t: Optional[float] = None,
    risk_threshold: float = DEFAULT_RISK_THRESHOLD,
) -> Assessment:
    """Every risk and utility measure of the release ``Xm`` of ``X``: sdcMicro's ``dRisk``
    and ``dUtility`` measures, record linkage, the class sizes of k-anonymity and the
    per-attribute changes.

    Parameters
    ----------
    X, Xm : DataFrames, or array-like (n, d)
        Original and released data, record i released as row i; NaN allowed in both (see
        each measure: :mod:`microagg.risk`, :mod:`microagg.utility`). DataFrames take the
        column roles of :func:`microagg.anonymize` (``columns``, ``categorical``,
        ``ordinal``, ``by``, ``weights``, ``sensitive`` by name, read from ``X``; strata and
        confidential values from ``Xm``, as published): the numeric measures read the
        numeric key columns; record linkage, the class sizes and the EMD the whole key
        (linkage in the key's one-hot embedding geometry, from level codes:
        :func:`microagg.risk.record_linkage`). A release must line up with
        its original: every other column of both frames is copied as read and must be equal
        row by row, else a ``ValueError`` naming the column and the first row that differs;
        with no such column (arrays), an information loss above 100 % is a ``ValueError``
        saying the rows look misaligned (docs/assessment.md).
    by : column name(s) of the frames, or labels, optional
        Strata (one label per record, or an (n, m) array): ``min_group_size`` counts classes
        within a stratum.
    weights : column name, or array-like (n,), optional
        Survey weights: the information loss and the per-attribute means, variances and
        correlations are weighted. The risks count records (an intruder links records,
        not population units) and IL1s/eigen follow sdcMicro, which has no weights.
    p : float, default 0.05
        Interval width of :func:`microagg.risk.interval_disclosure`.
    n_jobs : int, default 1
        Threads of the record-linkage search (same answer for every value).
    columns : sequence of str, optional
        The key: columns of the DataFrames (default: as ``anonymize`` chooses it), or the
        names of the columns of arrays (one per column).
    k : int, optional
        The k the release is meant to meet: the assessment then says whether it does and
        how many records are in smaller classes.
    global_linkage : bool, default False
        Also run the one-to-one record linkage (needs scipy; at most
        :data:`microagg.risk.GLOBAL_MAX_RECORDS` records; O(n³) time).
    merges : iterable of microagg.StratumMerge
        The strata merges of the run (``result.merges``), shown in the release report.
    categorical, ordinal : as in :func:`microagg.anonymize`, optional
        Key columns of the DataFrames read as categories (text columns are anyway): each
        attribute's share of cells changed and total variation distance
        (:func:`microagg.utility.categorical_changes`), and the class sizes are counted
        over the whole key, numbers and categories together. With arrays, ``categorical``
        maps each categorical key column's name to its (original values, released values).
    sensitive : column name(s) of the DataFrames, or values as in
        :func:`microagg.risk.t_closeness`, optional
        Confidential attributes (never keys): the assessment then holds each one's largest
        class EMD (``max_emd``).
    t : float, optional
        The t the release is meant to meet (0 < t <= 1; needs ``sensitive``): the assessment
        then says whether every sensitive attribute's largest class EMD is within it.
    risk_threshold : float, default 0.1
        Individual population risk above which a record counts as at risk, in the original
        and in the release (``population_risk``; weights that are sampling weights, each at
        least 1, give sdcMicro's weighted risk, else the sample view 1 / f_k).
    """
    if t is not None:
        t = _check_t(t)
        if sensitive is None:
            raise ValueError("t needs sensitive (the confidential attributes whose closeness t bounds)")
    aligned = False
    identifiers: tuple[str, ...] = ()
    tables: Optional[LinkageTables] = None
    original, released = as_frame(X, "X"), as_frame(Xm, "Xm")
    frames = original is not None and released is not None and not isinstance(categorical, Mapping)
    if frames:
        X, Xm, columns, categorical, by, weights, sensitive, aligned, identifiers, tables = _frame_inputs(
            X, original, released, columns=columns, by=by, weights=weights, categorical=categorical, ordinal=ordinal,
            sensitive=sensitive,
        )
    names = _key_names(columns)
    if not frames and names is not None:
        confidential = list(sensitive) if isinstance(sensitive, Mapping) else _names_of(sensitive)
        roles = [*names, *(categorical or {}), *confidential, *_names_of(by), *_names_of(weights)]
        identifiers = _distinct_columns(Xm, roles)
    if names is not None and hasattr(X, "columns"):
        X, Xm = _select(X, names, "X"), _select(Xm, names, "Xm")
    x, xm = as_pair(X, Xm)
    n, d = x.shape
    w = as_weights(weights, n)
    information_loss = utility.information_loss(x, xm, w)
    if not aligned:
        check_information_loss(information_loss)
    strata = strata_codes(by, n)
    n_jobs = check_n_jobs(n_jobs)
    if k is not None:
        k = check_int(k, "k", minimum=2)
    global_linkage = check_bool(global_linkage, "global_linkage")
    categories = _categorical_changes(categorical, n, w)
    if tables is None:
        tables = with_categories(x, xm, categorical or {})
    key = xm if categorical is None else np.column_stack([xm, *(_codes(r, name) for name, (_, r) in categorical.items())])
    sizes, records = np.unique(risk.class_sizes(key, strata), return_counts=True)
    return Assessment(
        n_records=n,
        n_attributes=d,
        attributes=_attribute_names(X, d) if names is None else _named(names, d),
        information_loss=information_loss,
        il1s=utility.il1s(x, xm),
        eigen=utility.eigen(x, xm),
        interval_disclosure=risk.interval_disclosure(x, xm, p),
        p=float(p),
        record_linkage=risk.link_tables(tables, "nearest", n_jobs),
        min_group_size=int(sizes[0]),
        changes=utility.attribute_changes(x, xm, w),
        k_requested=k,
        class_size_records=tuple((int(s), int(r)) for s, r in zip(sizes, records)),
        n_strata=None if strata is None else int(strata.max()) + 1,
        missing_original=int(np.isnan(x).sum()) + _missing(categorical, 0),
        missing_released=int(np.isnan(xm).sum()) + _missing(categorical, 1),
        record_linkage_global=risk.link_tables(tables, "global") if global_linkage else None,
        histograms=tuple(utility.histograms(x, xm)),
        merges=tuple(_as_merge(m) for m in merges),
        weighted=w is not None,
        categorical=categories,
        max_emd=None if sensitive is None else risk.t_closeness(key, sensitive, by=strata),
        t_requested=t,
        identifiers=identifiers,
        population_risk=risk_change(
            x if categorical is None else np.column_stack([x, *(_codes(o, name) for name, (o, _) in categorical.items())]),
            key, strata, w, risk_threshold, sensitive),
    )


def _frame_inputs(X: Any, original: Any, released: Any, **roles: Any) -> tuple[Any, ...]:
    """What :func:`assess` scores from two DataFrames: their numeric key columns, the key's
    names, each categorical key column's (original, released) values, the strata labels and
    confidential values as ``Xm`` publishes them, the weights of ``X``, and whether a copied
    column lined the files up (:func:`microagg._assess_input.check_aligned`), and the copied
    columns that hold a value per record (:func:`distinct_per_record`). ``original``
    and ``released`` are the narwhals frames of ``X`` and ``Xm``."""
    if len(original) != len(released):
        raise ValueError(f"X has {len(original)} rows and Xm {len(released)}; a release has the original's records")
    roles_of = cast(MeasureRoles, as_release(X, **roles, name="X").roles)
    absent = [str(c) for c in (*roles_of.key, *roles_of.sensitive) if c not in released.columns]
    if absent:
        raise ValueError(f"Xm lacks the column(s) {', '.join(absent)} of X")
    x_native, xm_native = original.to_native(), released.to_native()
    numeric = [c for c in roles_of.key if c not in roles_of.categories]
    if not numeric:
        raise ValueError("the key has no numeric column; the measures of a release need at least one")
    both = [c for c in original.columns if c in released.columns]
    copied = [c for c in both if c not in (*roles_of.key, *roles_of.sensitive, *roles_of.by)]
    aligned = check_aligned(
        {c: column(x_native, c) for c in copied}, {c: column(xm_native, c) for c in copied}, copied
    )
    by = roles["by"]
    if roles_of.by:
        labels = [column(xm_native, c) for c in roles_of.by]
        by = labels[0] if len(labels) == 1 else np.column_stack([np.asarray(v, dtype=object) for v in labels])
    weights = roles["weights"] if roles_of.weights is None else column(x_native, roles_of.weights)
    sensitive = roles["sensitive"]
    if roles_of.sensitive:
        sensitive = {str(c): column(xm_native, c) for c in roles_of.sensitive}
    categorical = {str(c): (column(x_native, c), column(xm_native, c)) for c in roles_of.categories} or None
    roles_named = [*roles_of.key, *roles_of.sensitive, *roles_of.by, *([] if roles_of.weights is None else [roles_of.weights])]
    identifiers = distinct_per_record(((str(c), column(xm_native, c)) for c in released.columns), map(str, roles_named))
    tables = frame_tables(original, released, roles_of, roles["categorical"])
    return (numeric_matrix(original, numeric), numeric_matrix(released, numeric, name="Xm"), [str(c) for c in numeric],
            categorical, by, weights, sensitive, aligned, identifiers, tables)


def distinct_per_record(columns: Iterable[Tuple[str, Any]], exclude: Iterable[str] = ()) -> tuple[str, ...]:
    """The names of ``columns`` ((name, values) pairs, ``exclude`` left out) in which every
    record holds a value no other record holds, none missing: in a release, possible direct
    identifiers (a name, a record number) copied as read. Files of fewer than two records
    have none."""
    skip = set(exclude)
    out = []
    for name, values in columns:
        arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)
        if name in skip or arr.ndim != 1 or arr.shape[0] < 2 or missing_cells(arr).any():
            continue
        if len(set(arr.tolist())) == arr.shape[0]:
            out.append(str(name))
    return tuple(out)


def _distinct_columns(Xm: Any, key: Sequence[Any]) -> tuple[str, ...]:
    """:func:`distinct_per_record` over the columns of a released DataFrame outside ``key``
    (nothing for an array, whose every column is key)."""
    if not hasattr(Xm, "columns"):
        return ()
    return distinct_per_record(((str(c), Xm[c]) for c in Xm.columns), [str(c) for c in key])


def _names_of(labels: Any) -> list[str]:
    """Column names given for a role (``by=``, ``weights=``): a name or a list of names; none
    for values."""
    if isinstance(labels, str):
        return [labels]
    if isinstance(labels, (list, tuple)) and all(isinstance(c, str) for c in labels):
        return list(labels)
    return []


def _missing(categorical: Optional[Mapping[str, Tuple[Any, Any]]], which: int) -> int:
    """Missing cells of the categorical key columns of the original (0) or the release (1)."""
    return sum(int(missing_cells(np.asarray(pair[which], dtype=object)).sum()) for pair in (categorical or {}).values())


def _categorical_changes(
    categorical: Optional[Mapping[str, Tuple[Any, Any]]], n: int, w: Optional[F64]
) -> tuple[tuple[str, utility.CategoricalChanges], ...]:
    if categorical is None:
        return ()
    out = []
    for name, pair in categorical.items():
        try:
            original, released = pair
        except (TypeError, ValueError):
            raise TypeError(f"categorical[{name!r}] must be (original values, released values)") from None
        changes = utility.categorical_changes(original, released, w)
        if len(np.asarray(original, dtype=object)) != n:
            raise ValueError(f"categorical[{name!r}] has {len(np.asarray(original, dtype=object))} values, the data {n} records")
        out.append((str(name), changes))
    return tuple(out)


def _codes(values: Any, name: str) -> F64:
    """Released categories as float codes, NaN where missing (a wildcard in class sizes)."""
    arr = np.asarray(values.to_numpy() if hasattr(values, "to_numpy") else values, dtype=object)
    missing = missing_cells(arr)
    codes = nominal_column(name, arr, missing).values
    return np.where(missing, np.nan, codes.astype(np.float64))


def _key_names(columns: Optional[Sequence[str]]) -> Optional[list[str]]:
    if columns is None:
        return None
    if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
        raise TypeError(f"columns must be a sequence of column names (str), got {columns!r}")
    return list(columns)


def _select(frame: Any, names: list[str], which: str) -> Any:
    absent = [c for c in names if c not in list(frame.columns)]
    if absent:
        raise ValueError(f"columns {absent} are not columns of {which}")
    return frame[names]


def _named(names: list[str], d: int) -> tuple[str, ...]:
    if len(names) != d:
        raise ValueError(f"columns names {len(names)} columns, the data has {d}")
    return tuple(names)


def _as_merge(m: Any) -> StratumMerge:
    try:
        stratum, into, size = m
    except (TypeError, ValueError):
        raise TypeError(f"merges must hold (stratum, into, size) entries such as result.merges, got {m!r}") from None
    return StratumMerge(stratum, into, check_int(size, "merges size", minimum=1))


def _attribute_names(X: Any, d: int) -> tuple[str, ...]:
    columns: Optional[Sequence[Any]] = getattr(X, "columns", None)
    if columns is not None and len(columns) == d:
        return tuple(str(c) for c in columns)
    return tuple(f"x{j}" for j in range(d))
