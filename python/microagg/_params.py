"""scikit-learn's parameter protocol (get_params / set_params / repr), shared by the estimators."""

from __future__ import annotations

from typing import Any, TypeVar

_E = TypeVar("_E", bound="ParamsMixin")


class ParamsMixin:
    """Estimators list their constructor parameters in ``_PARAM_NAMES``."""

    _PARAM_NAMES: tuple[str, ...] = ()

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters, as scikit-learn expects."""
        return {name: getattr(self, name) for name in self._PARAM_NAMES}

    def set_params(self: _E, **params: Any) -> _E:
        """Set constructor parameters; unknown names raise ``ValueError``."""
        for name, value in params.items():
            if name not in self._PARAM_NAMES:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; "
                    f"valid: {', '.join(self._PARAM_NAMES)}"
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._PARAM_NAMES)
        return f"{type(self).__name__}({args})"
