"""Exact MDAV on a mixed key without its one-hot embedding (docs/algorithms.md#mixed-keys):
the same partition as the dense embedding where exact arithmetic decides, SSE within 1% of
the dense recipe's on tie-heavy Adult, and a many-level key the embedding would refuse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import microagg as ma
from microagg._mixed import embedding, native
from microagg._mixed.workflow import release

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def _dense(*args: Any, **kwargs: Any) -> Any:
    """``microaggregate`` under another name: the mixed workflow then takes the embedding."""
    return ma.microaggregate(*args, **kwargs)


def _key(n: int, levels: list[int], seed: int) -> tuple[dict[str, Any], dict[str, str]]:
    rng = np.random.default_rng(seed)
    values: dict[str, Any] = {"x": rng.normal(size=n), "y": rng.lognormal(size=n)}
    kinds = {"x": "numeric", "y": "numeric"}
    for j, L in enumerate(levels):
        values[f"c{j}"] = rng.integers(0, L, n).astype(str)
        kinds[f"c{j}"] = "nominal"
    return values, kinds


@pytest.mark.parametrize("levels", [[2], [3, 40], [150, 2, 7]])
@pytest.mark.parametrize("options", [{}, {"attribute_weights": {"c0": 2.0, "x": 0.5}},
                                     {"by": "strata", "weights": "weights"}])
def test_the_native_key_gives_the_embedding_partition(levels: list[int], options: dict[str, Any]) -> None:
    n = 1500
    values, kinds = _key(n, levels, seed=len(levels))
    rng = np.random.default_rng(1)
    opts = dict(options)
    if opts.get("by") == "strata":
        opts["by"] = rng.integers(0, 3, n)
        opts["weights"] = rng.uniform(1, 5, n)
    out, res = release(values, kinds, k=4, **opts)
    dense_out, dense = release(values, kinds, k=4, group=_dense, **opts)
    np.testing.assert_array_equal(res.labels, dense.labels)
    assert res.sse == pytest.approx(dense.sse, rel=1e-9)
    assert res.sst == pytest.approx(dense.sst, rel=1e-9)
    for name in values:
        np.testing.assert_array_equal(out[name], dense_out[name])


def test_sse_on_adult_is_within_one_percent_of_the_dense_recipe() -> None:
    # Adult repeats many records: exact distance ties, which the two computations' last-bit
    # rounding may break differently; the partitions' quality must agree.
    df = pd.read_csv(SHARED / "datasets" / "adult.csv", skipinitialspace=True, na_values="?",
                     keep_default_na=False).dropna()
    numeric = ["age", "education-num", "hours-per-week", "capital-gain"]
    nominal = ["sex", "race", "marital-status", "workclass"]
    values = {c: df[c].to_numpy() for c in numeric + nominal}
    kinds = {c: "nominal" for c in nominal}
    _, res = release(values, kinds, k=5)
    _, dense = release(values, kinds, k=5, group=_dense)
    assert abs(res.sse / dense.sse - 1) < 0.01
    assert res.sst == pytest.approx(dense.sst, rel=1e-9)


def test_a_many_level_key_never_builds_the_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("the embedding was built")

    monkeypatch.setattr(embedding, "embed", refuse)
    monkeypatch.setattr("microagg._mixed.workflow.embed", refuse)
    values, kinds = _key(4000, [3000, 5], seed=3)
    out, res = release(values, kinds, k=3)
    assert min(res.group_sizes) >= 3
    rows = pd.DataFrame(out).groupby(res.labels).nunique()
    assert (rows == 1).all().all()  # every row of a group agrees on the whole key


def test_progress_counts_every_record_of_a_native_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("microagg._mixed.workflow.embed", lambda *_: pytest.fail("the embedding was built"))
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300), "c": rng.choice(list("xyzw"), 300)})
    progress = ma.Progress()
    ma.anonymize(df, k=5, progress=progress)
    assert progress.assigned == 300


def test_other_methods_keep_the_embedding_and_name_the_native_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    assert native.NATIVE_METHODS == ("mdav",)
    monkeypatch.setattr(embedding, "_MAX_BYTES", 1000)
    values, kinds = _key(200, [50], seed=4)
    with pytest.raises(ValueError, match="without its embedding \\(mdav"):
        release(values, kinds, k=3, method="md")
    release(values, kinds, k=3, method="mdav")
