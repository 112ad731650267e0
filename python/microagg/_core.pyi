"""Type stubs of the Rust extension module ``microagg._core`` (keep in step with src/python/mod.rs)."""

from typing import Any, Optional, Sequence, TypedDict, Union, final

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
    "distinct_rows",
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

class _RunOptions(TypedDict):
    """The method, its parameters and the run options (src/python/options.rs)."""

    method: str
    params: Optional[dict[str, Any]]
    standardize: bool
    n_jobs: int
    seed: Optional[int]
    missing: str

class _WorkflowOptions(TypedDict):
    """The workflow around the method (src/python/workflow.rs)."""

    by: Optional[npt.NDArray[np.int64]]
    by_names: Optional[list[str]]
    small_strata: str
    weights: Optional[npt.NDArray[np.float64]]
    aggregation: str
    trim: Optional[float]
    max_part: Optional[int]
    scale: Optional[npt.NDArray[np.float64]]

class _MixedWorkflowOptions(_WorkflowOptions, total=False):
    """A mixed key's nominal columns beside the numeric matrix (src/python/workflow.rs):
    codes (n x c, each in 0..L-1) and one weight per column, grouped natively by "mdav"."""

    nominal_codes: npt.NDArray[np.int64]
    nominal_weights: list[float]

def microaggregate_array(
    x: _Data,
    k: int,
    options: _RunOptions,
    workflow: _WorkflowOptions,
    *,
    single_precision: bool,
    progress: Optional[Progress] = None,
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
    x: npt.NDArray[np.float64],
    xm: npt.NDArray[np.float64],
    *,
    n_jobs: int,
    mismatch_costs: Sequence[float] = ...,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Nearest-record links of every row of ``x`` in ``xm`` (both scaled); the last
    ``len(mismatch_costs)`` columns hold nominal level codes (NaN where missing), a mismatch
    on one costing its entry."""

def distinct_rows(
    a: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(first record of each distinct row, row of each record, records of each row), rows
    numbered by first record; -0.0 = 0.0, NaN = NaN."""
    ...

def t_close_array(
    x: npt.NDArray[np.float64],
    k: int,
    sensitive: list[npt.NDArray[np.int64]],
    n_values: list[int],
    ordered: list[bool],
    names: list[str],
    t: float,
    t_method: str,
    options: _RunOptions,
    workflow: _WorkflowOptions,
    *,
    progress: Optional[Progress] = None,
) -> tuple[_Released, list[str], list[float]]: ...
