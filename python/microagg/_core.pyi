"""Type stubs of the Rust extension module ``microagg._core`` (keep in step with src/python/mod.rs)."""

from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

__version__: str
METHODS: tuple[str, ...]

_Data = Union[npt.NDArray[np.float64], npt.NDArray[np.float32]]

class Progress:
    """Progress of a run (records assigned, improvement rounds done), readable while it runs."""

    def __init__(self) -> None: ...
    @property
    def assigned(self) -> int: ...
    @property
    def rounds(self) -> int: ...

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
) -> tuple[npt.NDArray[np.int64], int, npt.NDArray[np.float64], float, float]: ...
def evaluate_labels(
    x: _Data, labels: npt.NDArray[np.int64], *, standardize: bool
) -> tuple[npt.NDArray[np.float64], float, float]: ...
def method_parameters(method: str) -> tuple[str, ...]: ...

CRITICAL_HEAD_START: float

def plan_incremental(head_start: float, deadline: Optional[float] = None) -> dict[str, Any]: ...

class IncrementalState:
    """An incremental microaggregation in progress."""

    def __init__(
        self,
        x: _Data,
        k: int,
        base_method: str,
        *,
        strategy: str,
        inertial: bool,
        standardize: bool,
        refit_scaling: bool,
        n_jobs: int,
    ) -> None: ...
    def extend(self, x: _Data) -> None: ...
    def result(self) -> tuple[npt.NDArray[np.int64], int, npt.NDArray[np.float64], float, float]: ...

def link_nearest_arrays(
    x: npt.NDArray[np.float64], xm: npt.NDArray[np.float64], *, n_jobs: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]: ...
