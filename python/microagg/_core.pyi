"""Type stubs of the Rust extension module ``microagg._core`` (keep in step with src/python/mod.rs)."""

from typing import Any, Optional, Union, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "METHODS",
    "Progress",
    "microaggregate_array",
    "evaluate_labels",
    "complete_missing",
    "method_parameters",
    "plan_incremental",
    "IncrementalState",
    "CRITICAL_HEAD_START",
    "link_nearest_arrays",
    "AGGREGATIONS",
    "MISSING_MODES",
    "SMALL_STRATA",
    "T_METHODS",
    "t_close_array",
]

__version__: str
METHODS: tuple[str, ...]
AGGREGATIONS: tuple[str, ...]
MISSING_MODES: tuple[str, ...]
SMALL_STRATA: tuple[str, ...]
T_METHODS: tuple[str, ...]

_Data = Union[npt.NDArray[np.float64], npt.NDArray[np.float32]]
# (labels, n_groups, centroids, sse, sst, released values or None, strata merges)
_Released = tuple[
    npt.NDArray[np.int64],
    int,
    npt.NDArray[np.float64],
    float,
    float,
    Optional[npt.NDArray[np.float64]],
    list[tuple[int, int, int]],
]

@final
class Progress:
    """Progress of a run (records assigned, improvement rounds done), readable while it runs."""

    def __new__(cls) -> "Progress": ...
    @property
    def assigned(self) -> int: ...
    @property
    def rounds(self) -> int: ...
    @property
    def bytes_scanned(self) -> int: ...

def microaggregate_array(
    x: _Data,
    k: int,
    method: str,
    *,
    standardize: bool,
    single_precision: bool,
    n_jobs: int,
    seed: Optional[int] = None,
    params: Optional[dict[str, Any]] = None,
    progress: Optional[Progress] = None,
    by: Optional[npt.NDArray[np.int64]] = None,
    by_names: Optional[list[str]] = None,
    small_strata: str = "error",
    weights: Optional[npt.NDArray[np.float64]] = None,
    aggregation: str = "mean",
    trim: Optional[float] = None,
    missing: str = "error",
    max_part: Optional[int] = None,
    scale: Optional[npt.NDArray[np.float64]] = None,
) -> _Released: ...
def evaluate_labels(
    x: _Data, labels: npt.NDArray[np.int64], *, standardize: bool, missing: str = "error"
) -> tuple[npt.NDArray[np.float64], float, float]: ...
def complete_missing(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]: ...
def method_parameters(method: str) -> tuple[str, ...]: ...

CRITICAL_HEAD_START: float

def plan_incremental(head_start: float, deadline: Optional[float] = None) -> dict[str, Any]: ...

@final
class IncrementalState:
    """An incremental microaggregation in progress."""

    def __new__(
        cls,
        x: _Data,
        k: int,
        base_method: str,
        *,
        strategy: str,
        inertial: bool,
        standardize: bool,
        refit_scaling: bool,
        n_jobs: int,
        spatial_index: Optional[bool] = None,
    ) -> "IncrementalState": ...
    def extend(self, x: _Data) -> None: ...
    def result(self) -> tuple[npt.NDArray[np.int64], int, npt.NDArray[np.float64], float, float]: ...

def link_nearest_arrays(
    x: npt.NDArray[np.float64], xm: npt.NDArray[np.float64], *, n_jobs: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]: ...

def t_close_array(
    x: npt.NDArray[np.float64],
    k: int,
    sensitive: list[npt.NDArray[np.int64]],
    n_values: list[int],
    ordered: list[bool],
    names: list[str],
    t: float,
    t_method: str,
    *,
    method: str = "mdav",
    params: Optional[dict[str, Any]] = None,
    standardize: bool = True,
    n_jobs: int = 1,
    seed: Optional[int] = None,
    by: Optional[npt.NDArray[np.int64]] = None,
    by_names: Optional[list[str]] = None,
    small_strata: str = "error",
    weights: Optional[npt.NDArray[np.float64]] = None,
    aggregation: str = "mean",
    trim: Optional[float] = None,
    missing: str = "error",
    max_part: Optional[int] = None,
    scale: Optional[npt.NDArray[np.float64]] = None,
    progress: Optional[Progress] = None,
) -> tuple[_Released, list[str], list[float]]: ...
