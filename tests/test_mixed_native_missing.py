"""Missing cells on the native mixed key (docs/workflow.md#missing-values): a missing nominal
cell is grouped at its most probable level (never a one-hot block), a missing number at its
EM completion; the release is k-anonymous over the whole key and scored on observed cells."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg as ma
from microagg._mixed.workflow import release


def _dense(*args: Any, **kwargs: Any) -> Any:
    """``microaggregate`` under another name: the mixed workflow then takes the embedding."""
    return ma.microaggregate(*args, **kwargs)


def _holed(n: int, seed: int) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """A key whose nominal `region` follows `x` (three bands), with 10% of region, 5% of
    `job` and 5% of `y` missing; and the truth."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    region = np.array(["north", "middle", "south"], dtype=object)[np.digitize(x, [-0.5, 0.5])]
    truth = {"x": x, "y": rng.lognormal(size=n), "region": region,
             "job": rng.choice(np.array(["a", "b", "c", "d"], dtype=object), n)}
    values = {c: v.copy() for c, v in truth.items()}
    values["region"][rng.random(n) < 0.10] = None
    values["job"][rng.random(n) < 0.05] = None
    values["y"][rng.random(n) < 0.05] = np.nan
    return values, {"region": "nominal", "job": "nominal"}, truth


@pytest.fixture()
def no_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("the embedding was built")

    monkeypatch.setattr("microagg._mixed.workflow.embed", refuse)


@pytest.mark.parametrize("options", [{}, {"max_part": 150, "n_jobs": 2}, {"weights": "w", "by": "s"}])
def test_fill_runs_natively_and_is_k_anonymous_over_the_whole_key(no_embedding: None, options: dict[str, Any]) -> None:
    n, k = 900, 4
    values, kinds, _ = _holed(n, seed=1)
    rng = np.random.default_rng(5)
    opts = {a: (rng.uniform(1, 3, n) if v == "w" else rng.integers(0, 2, n) if v == "s" else v) for a, v in options.items()}
    out, res = release(values, kinds, k=k, missing="fill", **opts)
    frame = pd.DataFrame(out)
    assert frame.notna().all().all()
    keys = ([pd.Series(opts["by"])] if "by" in opts else []) + [frame[c] for c in values]
    assert frame.groupby(keys).size().min() >= k
    assert res.n_filled == sum(int(pd.isna(pd.Series(v)).sum()) for v in values.values())


def test_keep_leaves_the_missing_cells_and_stays_k_anonymous(no_embedding: None) -> None:
    values, kinds, _ = _holed(600, seed=2)
    out, res = release(values, kinds, k=3, missing="keep")
    frame = pd.DataFrame(out)
    for c, v in values.items():
        np.testing.assert_array_equal(frame[c].isna().to_numpy(), pd.isna(pd.Series(v)).to_numpy())
    assert ma.is_k_anonymous(frame, 3, columns=list(values))
    assert min(res.group_sizes) >= 3


def test_a_missing_level_is_grouped_with_the_records_of_its_probable_level() -> None:
    # region follows x: a record whose region is hidden is released with its true region
    # far more often than the most frequent region alone would give.
    values, kinds, truth = _holed(3000, seed=3)
    out, _ = release(values, kinds, k=5, missing="fill")
    hidden = pd.isna(pd.Series(values["region"])).to_numpy()
    hits = float((out["region"][hidden] == truth["region"][hidden]).mean())
    majority = pd.Series(truth["region"]).value_counts(normalize=True).iloc[0]
    assert hits > majority + 0.2


def test_sse_and_sst_count_the_observed_cells_as_the_dense_path_does() -> None:
    values, kinds, _ = _holed(800, seed=4)
    _, res = release(values, kinds, k=4, missing="fill")
    _, dense = release(values, kinds, k=4, missing="fill", group=_dense)
    assert res.sst == pytest.approx(dense.sst, rel=1e-9)
    assert 0 < res.information_loss < 1
    # a key without missing cells is scored as before
    complete = {c: v for c, v in _holed(800, seed=4)[2].items()}
    _, whole = release(complete, kinds, k=4)
    _, whole_dense = release(complete, kinds, k=4, group=_dense)
    assert whole.sst == pytest.approx(whole_dense.sst, rel=1e-9)


def test_a_missing_code_without_a_missing_mode_is_refused() -> None:
    values, kinds, _ = _holed(100, seed=5)
    with pytest.raises(ValueError, match="missing cells in the key: .*region"):
        release(values, kinds, k=3)
