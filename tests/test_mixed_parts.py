"""Partitioned runs (``max_part``) on the native mixed key (docs/scaling.md#partitioned-runs):
the parts are cut in the one-hot embedding's geometry from the codes, so the release is the
dense embedding's, k-anonymous over the whole key, without ever building the embedding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg as ma
from microagg._mixed import embedding
from microagg._mixed.workflow import release

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def _dense(*args: Any, **kwargs: Any) -> Any:
    """``microaggregate`` under another name: the mixed workflow then takes the embedding."""
    return ma.microaggregate(*args, **kwargs)


def _key(n: int, levels: list[int], seed: int, ties: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
    """Two numeric columns (with ``ties``, of few values), then nominal ones."""
    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {"x": rng.normal(size=n), "y": rng.lognormal(size=n)}
    if ties:
        values = {"x": values["x"].round(1), "y": rng.integers(0, 5, n).astype(float)}
    kinds = {"x": "numeric", "y": "numeric"}
    for j, L in enumerate(levels):
        values[f"c{j}"] = rng.integers(0, L, n).astype(str)
        kinds[f"c{j}"] = "nominal"
    return values, kinds


def _refuse_the_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("the embedding was built")

    monkeypatch.setattr("microagg._mixed.workflow.embed", refuse)


@pytest.mark.parametrize("levels", [[2], [3, 40], [150, 2, 7]])
@pytest.mark.parametrize("options", [{}, {"attribute_weights": {"c0": 3.0, "x": 0.5}},
                                     {"by": "strata", "weights": "weights", "n_jobs": 2}])
@pytest.mark.parametrize(("max_part", "ties"), [(8, True), (60, False), (400, False)])
def test_max_part_on_the_native_key_gives_the_embeddings_parts_and_groups(
    levels: list[int], options: dict[str, Any], max_part: int, ties: bool
) -> None:
    # Tie-heavy values decide the cuts alike (the core's property tests); MDAV inside a part
    # of more than 2k records may break its own exact distance ties by the last bit of
    # either computation, so tie-heavy parts stay at 2k here.
    n, k = 1200, 4
    values, kinds = _key(n, levels, seed=len(levels) + max_part, ties=ties)
    opts = dict(options, max_part=max_part)
    if opts.get("by") == "strata":
        rng = np.random.default_rng(2)
        opts["by"] = rng.integers(0, 3, n)
        opts["weights"] = rng.uniform(1, 5, n)
    dense_out, dense = release(values, kinds, k=k, group=_dense, **opts)
    with pytest.MonkeyPatch.context() as mp:
        _refuse_the_embedding(mp)
        out, res = release(values, kinds, k=k, **opts)
    np.testing.assert_array_equal(res.labels, dense.labels)
    assert res.sse == pytest.approx(dense.sse, rel=1e-9)
    for name in values:
        np.testing.assert_array_equal(out[name], dense_out[name])
    strata = [opts["by"]] if "by" in options else []
    classes = pd.DataFrame(out).groupby(strata + [pd.Series(out[c]) for c in values]).size()
    assert classes.min() >= k  # k-anonymous over the whole key
    _, whole = release(values, kinds, k=k, **{a: v for a, v in opts.items() if a != "max_part"})
    if max_part < n // 3:
        assert res.sse > whole.sse  # the cuts did separate records


def test_a_many_level_key_with_max_part_never_builds_the_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_the_embedding(monkeypatch)
    values, kinds = _key(5000, [3000, 5], seed=3)
    out, res = release(values, kinds, k=3, max_part=500)
    assert min(res.group_sizes) >= 3
    assert pd.DataFrame(out).groupby(list(values)).size().min() >= 3


def test_max_part_on_adult_is_within_one_percent_of_the_dense_recipe() -> None:
    df = pd.read_csv(SHARED / "datasets" / "adult.csv", skipinitialspace=True, na_values="?",
                     keep_default_na=False).dropna().iloc[:12000]
    numeric = ["age", "education-num", "hours-per-week"]
    nominal = ["sex", "race", "workclass", "native-country"]
    values = {c: df[c].to_numpy() for c in numeric + nominal}
    kinds = {c: "nominal" for c in nominal}
    _, res = release(values, kinds, k=5, max_part=1500)
    _, dense = release(values, kinds, k=5, max_part=1500, group=_dense)
    assert abs(res.sse / dense.sse - 1) < 0.01
    assert res.sst == pytest.approx(dense.sst, rel=1e-9)
    assert min(res.group_sizes) >= 5
