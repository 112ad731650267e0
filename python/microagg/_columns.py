"""Column roles: which columns of a table are the key (the quasi-identifiers), the strata
(``by``), the sampling weights, the confidential columns of t-closeness (``sensitive``), and
which key columns are categorical or ordinal. The rules
are stated once here for every caller: ``microagg.anonymize`` (pandas, polars and Arrow
frames), ``microagg.dask.anonymize`` (a Dask frame, read through its empty ``_meta``) and the
command line (a file's header, with its flags' names in the messages).

The rules: ``by`` and ``weights`` name existing columns, ``by`` without repeats, ``weights``
one numeric column; ``sensitive`` names existing columns without repeats and with no other
role; the key is every numeric, non-boolean column that has no other role plus
the declared categorical and ordinal ones, unless named; a named key exists, does not repeat
and holds no strata or weights column; ``categorical`` and ``ordinal`` name key columns,
never both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional, Sequence

from ._frames import is_numeric
from ._mixed.types import check_levels


@dataclass(frozen=True)
class Terms:
    """How a caller's messages name things: ``source`` is the table (``df``, ``ddf``, a
    file's path); with ``flags`` the roles are the command line's flags (``--by``) and
    column names are quoted, as the CLI's other messages quote them."""

    source: str
    flags: bool = False

    def option(self, role: str) -> str:
        """The argument (``by``) or flag (``--by``) that gives ``role``."""
        return f"--{role}" if self.flags else role

    def unknown(self, role: Optional[str], names: Sequence[Any], columns: Sequence[Any]) -> ValueError:
        """The error for ``names`` that are not columns (``role`` None: the key)."""
        prefix = "" if role is None else f"{self.option(role)}: "
        listed = ", ".join(map(str, columns))
        if self.flags:
            return ValueError(f"{prefix}unknown column {names[0]!r}; columns are: {listed}")
        return ValueError(f"{prefix}unknown column(s): {', '.join(map(str, names))}; the columns of {self.source} are: {listed}")

    def clash(self, name: Any, role: str) -> ValueError:
        """The error for a key column that ``role`` (an option, as :meth:`option` names it)
        also names."""
        named = " (--columns)" if self.flags else ""
        workflow = (self.option("by"), self.option("weights"))
        kept = "/".join(workflow) if role in workflow else role
        return ValueError(
            f"column {name!r} is both a quasi-identifier{named} and in {role}: a column cannot be both anonymized and {kept}"
        )


API = Terms("df")
"""The terms of ``microagg.anonymize``."""


def names_of(value: Any) -> list[Any]:
    """Column names given as one name or a list (None: no column)."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


@dataclass(frozen=True)
class Roles:
    """The strata and weights columns of a table, and the option that gave each one."""

    by: list[Any]
    weights: Optional[Any]
    of: dict[Any, str] = field(default_factory=dict)
    """Column -> the option naming it (``by``, ``weights``, or the CLI's flags)."""


def workflow_roles(
    columns: Sequence[Any], numeric: Callable[[Any], bool], by: Any, weights: Any, terms: Terms = API
) -> Roles:
    """The ``by`` and ``weights`` columns among ``columns`` (``numeric(name)``: whether a
    column holds real numbers). Raises ``ValueError`` for an unknown or repeated column or
    several weights columns, ``TypeError`` for a weights column that is not numeric."""
    by_names = names_of(by)
    if isinstance(weights, (list, tuple)):
        raise ValueError(f"{terms.option('weights')} must name one column")
    of: dict[Any, str] = {}
    for role, wanted in (("by", by_names), ("weights", names_of(weights))):
        unknown = [c for c in wanted if c not in columns]
        if unknown:
            raise terms.unknown(role, unknown, columns)
        of.update((c, terms.option(role)) for c in wanted)
    if len(set(by_names)) != len(by_names):
        raise ValueError(f"{terms.option('by')} must not repeat a column")
    if weights is not None and not numeric(weights):
        raise TypeError(f"{terms.option('weights')}: column {weights!r} is not numeric")
    return Roles(by_names, weights, of)


def confidential_columns(columns: Sequence[Any], sensitive: Any, roles: dict[Any, str], terms: Terms = API) -> list[Any]:
    """The confidential columns ``sensitive`` names (t-closeness), marked in ``roles`` so that
    they are never keys: existing columns, no repeats, none with another role."""
    wanted = names_of(sensitive)
    unknown = [c for c in wanted if c not in columns]
    if unknown:
        raise terms.unknown("sensitive", unknown, columns)
    if len(set(wanted)) != len(wanted):
        raise ValueError(f"{terms.option('sensitive')} must not repeat a column")
    flag = f" ({terms.option('sensitive')})" if terms.flags else ""
    for c in wanted:
        if c in roles:
            raise ValueError(f"column {c!r} is both confidential{flag} and in {roles[c]}")
        roles[c] = terms.option("sensitive")
    return wanted


def check_key(columns: Sequence[Any], key: Sequence[Any], roles: Mapping[Any, str], terms: Terms = API) -> None:
    """A key that was named: existing columns, no repeats, none with another role."""
    unknown = [c for c in key if c not in columns]
    if unknown:
        raise terms.unknown(None, unknown, columns)
    if len(set(key)) != len(key):
        raise ValueError("columns must not repeat")
    for c in key:
        if c in roles:
            raise terms.clash(c, roles[c])


@dataclass(frozen=True)
class FrameRoles:
    """Every column role of a frame: the key, the strata and weights, and the mixed key
    (None: a numeric key)."""

    key: list[Any]
    roles: Roles
    mixed: Optional["MixedKey"]


def frame_roles(
    frame: Any,
    columns: Any,
    *,
    by: Any,
    weights: Any,
    categorical: Any,
    ordinal: Any,
    attribute_weights: Optional[Mapping[Any, float]],
    categorical_release: str,
    terms: Terms = API,
) -> FrameRoles:
    """The roles of the columns of the narwhals ``frame`` (for a Dask frame, its ``_meta``):
    :func:`workflow_roles`, then the key (:func:`choose_key`) and whether it is mixed
    (:func:`mixed_key`)."""
    roles = workflow_roles(frame.columns, lambda c: is_numeric(frame, c, booleans=False), by, weights, terms)
    key = choose_key(frame, columns, roles.of, categorical, ordinal, terms)
    return FrameRoles(key, roles, mixed_key(frame, key, categorical, ordinal, attribute_weights, categorical_release))


def choose_key(
    frame: Any, columns: Any, roles: Mapping[Any, str], categorical: Any, ordinal: Any, terms: Terms = API
) -> list[Any]:
    """The key of the narwhals ``frame``: ``columns`` checked (:func:`check_key`), or every
    numeric, non-boolean column without a role in ``roles`` and the declared categorical
    and ordinal columns. ``ValueError`` when that leaves no column."""
    if columns is not None:
        key = [columns] if isinstance(columns, str) else list(columns)
        check_key(frame.columns, key, roles, terms)
        if not key:
            raise ValueError("columns must name at least one column")
        return key
    key = [c for c in frame.columns if is_numeric(frame, c, booleans=False) and c not in roles]
    key += [c for c in declared_categories(categorical, ordinal) if c not in key]
    check_key(frame.columns, key, roles, terms)
    if not key:
        raise ValueError("the DataFrame has no numeric column to anonymize; pass columns=[...]")
    return key


@dataclass(frozen=True)
class MixedKey:
    """A key with categories: its columns, those declared nominal, and the ordinal levels."""

    columns: list[Any]
    categorical: tuple[Any, ...]
    ordinal: dict[Any, tuple[Any, ...]]


def _categorical_names(categorical: Any) -> list[Any]:
    if categorical is None:
        return []
    names = [categorical] if isinstance(categorical, str) else list(categorical)
    if len(set(names)) != len(names):
        raise ValueError("categorical: column names must not repeat")
    return names


def _ordinal_levels(ordinal: Any) -> dict[Any, tuple[Any, ...]]:
    if ordinal is None:
        return {}
    if not isinstance(ordinal, Mapping):
        raise TypeError(
            "ordinal must map column names to their levels in increasing order, e.g. "
            f"{{'education': ['HS', 'BSc', 'MSc']}}, got {type(ordinal).__name__}"
        )
    return {name: check_levels(name, levels) for name, levels in ordinal.items()}


def declared_categories(categorical: Any, ordinal: Any) -> list[Any]:
    """The columns named in ``categorical`` and ``ordinal``, in that order."""
    return _categorical_names(categorical) + [c for c in _ordinal_levels(ordinal) if c not in _categorical_names(categorical)]


def mixed_key(
    frame: Any,
    columns: Sequence[Any],
    categorical: Any,
    ordinal: Any,
    attribute_weights: Optional[Mapping[Any, float]],
    categorical_release: str,
) -> Optional[MixedKey]:
    """The mixed key of ``frame``, or None when the key is numeric and no mixed-key argument
    is given (then ``anonymize`` microaggregates the numbers as it always has)."""
    names, levels = _categorical_names(categorical), _ordinal_levels(ordinal)
    for role, declared in (("categorical", names), ("ordinal", list(levels))):
        outside = [str(c) for c in declared if c not in columns]
        if outside:
            raise ValueError(f"{role}: column(s) not in the key: {', '.join(outside)}")
    both = [str(c) for c in names if c in levels]
    if both:
        raise ValueError(f"column(s) both categorical and ordinal: {', '.join(both)}")
    numeric = all(is_numeric(frame, c, booleans=False) for c in columns)
    if numeric and not names and not levels and attribute_weights is None and categorical_release == "mode":
        return None
    return MixedKey(list(columns), tuple(names), levels)


@dataclass(frozen=True)
class MeasureRoles:
    """The column roles of a released (or original) frame that a measure reads, resolved
    as for ``anonymize``: the key, which key columns are categories (nominal or ordinal,
    compared by equality), the strata, the weights column and the confidential columns."""

    key: list[Any]
    categories: list[Any]
    by: list[Any]
    weights: Optional[Any]
    sensitive: list[Any]
    ordinal: dict[Any, tuple[Any, ...]] = field(default_factory=dict)
    """The levels of the key columns declared ordinal (ordered categoricals carry theirs)."""


def strata_names(columns: Sequence[Any], by: Any) -> Optional[list[Any]]:
    """``by`` as column names when it names columns of the frame (one name, or a list or
    tuple of names), None when it is labels (one per record, as the array API takes)."""
    if isinstance(by, (list, tuple)) and by and all(isinstance(c, (str, int)) and c in columns for c in by):
        return list(by)
    return [by] if isinstance(by, str) else None


def measure_roles(
    frame: Any,
    *,
    columns: Any = None,
    by: Any = None,
    weights: Any = None,
    categorical: Any = None,
    ordinal: Any = None,
    sensitive: Any = None,
    terms: Terms = API,
) -> MeasureRoles:
    """The roles of the narwhals ``frame`` for the measures of a release
    (docs/assessment.md): :func:`workflow_roles`, :func:`confidential_columns`, then the key
    (:func:`choose_key`) and its categories (:func:`mixed_key`), the rules ``anonymize``
    applies, so that a release is measured on the key it was made on. ``by`` names strata
    columns (labels per record are the caller's to handle, :func:`strata_names`)."""
    def numeric(c: Any) -> bool:
        return is_numeric(frame, c, booleans=False)

    roles = workflow_roles(frame.columns, numeric, by, weights, terms)
    of = dict(roles.of)
    confidential = confidential_columns(frame.columns, sensitive, of, terms)
    key = choose_key(frame, columns, of, categorical, ordinal, terms)
    mixed = mixed_key(frame, key, categorical, ordinal, None, "mode")
    declared = () if mixed is None else (*mixed.categorical, *mixed.ordinal)
    categories = [c for c in key if c in declared or not numeric(c)]
    levels = {} if mixed is None else dict(mixed.ordinal)
    return MeasureRoles(key, categories, roles.by, roles.weights, confidential, levels)
