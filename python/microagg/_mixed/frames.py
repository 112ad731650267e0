"""Which key of a frame is mixed: the ``categorical=`` and ``ordinal=`` arguments of
``microagg.anonymize`` checked against the key columns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence

from .._frames import is_numeric
from .types import check_levels


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
