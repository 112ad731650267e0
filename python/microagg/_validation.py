"""Coercion and validation of user arguments before they reach the Rust core.

The core accepts 2-D float32/float64 arrays only; everything a user may pass (lists,
integer or boolean arrays, Fortran-ordered or strided views, DataFrames of pandas, polars
or pyarrow (see ``_frames``), big-endian data) is turned into one of those here, without a
copy when the input already is one. Every bad input raises a ``TypeError`` or ``ValueError`` that names it.
"""

from __future__ import annotations

import numbers
from typing import Any, Optional, Tuple

import numpy as np
import numpy.typing as npt

from ._frames import as_frame, numeric_matrix

FloatArray = npt.NDArray[np.floating[Any]]

_CATEGORIES = "; categorical attributes go through microagg.anonymize(df, columns=[...])"


def as_data_matrix(X: Any, dtype: Any = None, *, name: str = "X") -> Tuple[FloatArray, bool]:
    """Return ``(array, single_precision)`` for a 2-D array-like of real numbers.

    ``dtype=None`` computes in float64 unless the input already is float32;
    ``"float32"``/``"float64"`` (or the NumPy types) force the working precision.
    """
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse
        raise TypeError(
            f"{name} is a sparse matrix ({type(X).__module__}.{type(X).__qualname__}); "
            "microaggregation needs dense data: pass X.toarray()"
        )
    frame = as_frame(X, name)  # pandas, polars, pyarrow, Arrow PyCapsule tables
    if frame is not None:
        X = numeric_matrix(frame, name=name)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and other unconvertible objects
        raise TypeError(f"{name} must be a 2-D array-like of real numbers: {exc}") from None
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must contain real numbers only (got Python objects: {exc}){_CATEGORIES}") from None
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must contain real numbers, got an array of dtype {arr.dtype}{_CATEGORIES}")
    if arr.ndim != 2:
        hint = " (use X.reshape(-1, 1) for a single attribute)" if arr.ndim == 1 else ""
        raise ValueError(
            f"{name} must be 2-D (n_records, n_attributes), got {arr.ndim}-D with shape "
            f"{arr.shape}{hint}"
        )
    single = _single_precision(dtype, arr.dtype)
    if arr.dtype not in (np.dtype(np.float32), np.dtype(np.float64)) or not arr.dtype.isnative:
        arr = arr.astype(np.float32 if arr.dtype == np.float32 else np.float64)
    return arr, single


def _single_precision(dtype: Any, data_dtype: np.dtype[Any]) -> bool:
    if dtype is None:
        return bool(data_dtype == np.float32)
    try:
        want = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be None, 'float32' or 'float64', got {dtype!r}") from None
    if want == np.float32:
        return True
    if want == np.float64:
        return False
    raise ValueError(f"dtype must be None, 'float32' or 'float64', got {dtype!r}")


INT64_MAX = 2**63 - 1
"""The largest integer the core takes (its counts are 64-bit)."""


def check_int(value: Any, name: str, *, minimum: Optional[int] = None, maximum: int = INT64_MAX) -> int:
    """An integer (Python or NumPy, not bool) in ``[minimum, maximum]``; by default at most
    2**63 - 1, so that a huge value is a ``ValueError`` naming ``name`` rather than an
    ``OverflowError`` on its way to the core."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {readable_int(value)}")
    result = int(value)
    if minimum is not None and result < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {readable_int(result)}")
    if result > maximum:
        power = (maximum + 1).bit_length() - 1
        bound = f"2**{power} - 1" if maximum + 1 == 2**power else readable_int(maximum)
        raise ValueError(f"{name} must be at most {bound}, got {readable_int(result)}")
    return result


def check_n_jobs(value: Any) -> int:
    """``n_jobs`` (joblib's convention: 1 one thread, -1 every core, -2 all but one, ...) as
    the core takes it, a 64-bit integer: beyond that a ``ValueError`` naming it, not an
    ``OverflowError``. Whether the machine has the cores is the core's to say."""
    return check_int(value, "n_jobs", minimum=-(2**63))


def check_k(value: Any) -> int:
    """The ``k`` of a release: an integer of at least 2. k = 1 puts every record in a group
    of its own and releases it as it is, so it is refused rather than published."""
    k = check_int(value, "k")
    if k < 2:
        raise ValueError(f"k must be at least 2 (k = 1 is no protection: every record is released as it is), got k={k}")
    return k


def readable_int(value: Any) -> str:
    """``repr(value)``, or for an integer of more than 16 digits its leading digits and
    power of ten (``1.181e+21``): a message names a value, it need not spell 300 digits."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        digits = str(abs(int(value)))
        if len(digits) > 16:
            sign = "-" if value < 0 else ""
            return f"{sign}{digits[0]}.{digits[1:4]}e+{len(digits) - 1}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check_bool(value: Any, name: str) -> bool:
    """A Python or NumPy bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} {value!r}")
    return bool(value)


def check_str(value: Any, name: str) -> str:
    """A string."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__} {value!r}")
    return value


def normalize_params(params: dict[str, Any]) -> dict[str, Any]:
    """NumPy scalars to Python ones, so the core sees bool/int/float."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        out[key] = value.item() if isinstance(value, np.generic) else value
    return out


def as_labels(labels: Any, n_records: int) -> npt.NDArray[np.int64]:
    """A 1-D integer label array of length ``n_records``."""
    arr = np.asarray(labels)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n_records:
        raise ValueError(f"labels must be 1-D with one label per record ({n_records}), got shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise ValueError("labels must be non-negative")
    return np.ascontiguousarray(arr, dtype=np.int64)
