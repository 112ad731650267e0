"""t-closeness on a mixed key without its one-hot embedding (docs/algorithms.md#mixed-keys):
every t_method gives the dense embedding's partition where exact arithmetic decides
(continuous numeric columns; few-level, many-level and weighted nominal columns), every class
within t, and the t-close release of ``microagg.anonymize`` goes native."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg as ma
from microagg._mixed import native
from microagg._mixed.workflow import release
from microagg._tcloseness import t_closeness
from test_mixed_native import _key


def _dense(*args: Any, **kwargs: Any) -> Any:
    """``t_close_microaggregate`` under another name: the mixed workflow then takes the embedding."""
    return ma.t_close_microaggregate(*args, **kwargs)


@pytest.mark.parametrize("t_method", ma.T_METHODS)
@pytest.mark.parametrize("levels", [[2], [3, 40], [150, 2, 7]])
@pytest.mark.parametrize("options", [{}, {"attribute_weights": {"c0": 2.0, "x": 0.5}}, {"by": "strata", "weights": "weights"},
                                     {"max_part": 150}])
def test_every_t_method_gives_the_embedding_partition(t_method: str, levels: list[int], options: dict[str, Any]) -> None:
    n = 600
    values, kinds = _key(n, levels, seed=len(levels))
    rng = np.random.default_rng(2)
    income = rng.choice(["low", "mid", "high"], n, p=[0.6, 0.3, 0.1])
    opts = dict(options)
    if opts.get("by") == "strata":
        opts["by"] = np.arange(n) % 2
        opts["weights"] = rng.uniform(1, 5, n)
    close = {"sensitive": {"income": income}, "t": 0.15, "t_method": t_method}
    out, res = release(values, kinds, k=4, group=functools.partial(ma.t_close_microaggregate, **close), **opts)
    dense_out, dense = release(values, kinds, k=4, group=functools.partial(_dense, **close), **opts)
    np.testing.assert_array_equal(res.labels, dense.labels)
    assert res.chosen == dense.chosen
    assert res.max_emd == pytest.approx(dense.max_emd, abs=1e-12)
    assert res.max_emd["income"] <= 0.15 + 1e-12
    assert res.sse == pytest.approx(dense.sse, rel=1e-9)
    assert res.sst == pytest.approx(dense.sst, rel=1e-9)
    for name in values:
        np.testing.assert_array_equal(out[name], dense_out[name])


def _survey(n: int, regions: int, seed: int) -> pd.DataFrame:
    """age, sex, a region of ``regions`` levels and a confidential income."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.normal(40, 10, n).round(),
        "sex": rng.choice(["f", "m"], n),
        "region": rng.choice([f"r{j}" for j in range(regions)], n),
        "income": rng.choice(["<=50K", ">50K"], n, p=[0.75, 0.25]),
    })


def test_anonymize_goes_native_and_releases_t_close_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _survey(400, 30, seed=5)
    calls = []
    original = native.group_natively

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs.get("group", args[4] if len(args) > 4 else None))
        return original(*args, **kwargs)

    monkeypatch.setattr("microagg._mixed.workflow.group_natively", spy)
    key = ["age", "sex", "region"]
    out = ma.anonymize(frame, 5, columns=key, categorical=["sex", "region"], sensitive="income", t=0.1)
    assert len(calls) == 1, "the t-close mixed key went native"
    assert t_closeness(out, "income", columns=key, categorical=["sex", "region"])["income"] <= 0.1 + 1e-12
    assert ma.is_k_anonymous(out, 5, columns=key, categorical=["sex", "region"])


def test_missing_cells_and_parts_go_native_with_t_close_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _survey(600, 40, seed=6)
    frame.loc[frame.index[::13], "region"] = None
    frame.loc[frame.index[4::17], "age"] = np.nan
    monkeypatch.setattr("microagg._mixed.workflow.embed", None)  # the embedding is never built
    key, categorical = ["age", "sex", "region"], ["sex", "region"]
    for options in ({"missing": "fill"}, {"missing": "fill", "max_part": 200}, {"missing": "keep", "max_part": 200}):
        out = ma.anonymize(frame, 5, columns=key, categorical=categorical, sensitive="income", t=0.1, **options)
        assert ma.is_k_anonymous(out, 5, columns=key, categorical=categorical)
        assert t_closeness(out, "income", columns=key, categorical=categorical)["income"] <= 0.1 + 1e-12
        kept = out["region"].isna().sum() + out["age"].isna().sum()
        if options["missing"] == "keep":  # cells that would join classes farther than t are filled
            assert 0 < kept < frame["region"].isna().sum() + frame["age"].isna().sum()
        else:
            assert kept == 0


def test_what_the_native_key_does_not_take_keeps_the_embedding() -> None:
    values, kinds = _key(200, [3], seed=0)
    group = functools.partial(ma.t_close_microaggregate, sensitive={"s": np.arange(200) % 3}, t=0.2)
    key = __import__("microagg._mixed.types", fromlist=["array_key"]).array_key(values, kinds)
    assert native.takes_natively(key, "mdav", group, "mode", {})
    assert not native.takes_natively(key, "mondrian", group, "mode", {})
    assert not native.takes_natively(key, "mdav", group, "medoid", {})
    assert native.takes_natively(key, "mdav", group, "mode", {"max_part": 100})
    assert not native.takes_natively(key, "mdav", functools.partial(_dense, t=0.2), "mode", {})
