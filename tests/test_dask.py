"""The Dask engine (docs/scaling.md#the-dask-engine) on a real distributed.LocalCluster with two
worker processes.

The parts the distributed planner finds are compared with a direct NumPy reference of the
cut rule (full sort by (value, row id) of the highest-variance attribute), and the released
frame with that reference grouped part by part.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pandas as pd
import pytest

if os.environ.get("CI"):
    import dask.dataframe  # noqa: F401  (CI installs the extra: never skip there)
dd = pytest.importorskip("dask.dataframe", reason="dask is not installed (pip install 'microagg[dask]')")
distributed = pytest.importorskip("distributed", reason="distributed is not installed (pip install 'microagg[dask]')")

import dask  # noqa: E402

import microagg._dask.plan as plan_module  # noqa: E402
import microagg._dask.release as release_module  # noqa: E402
from microagg._dask.tree import Spec  # noqa: E402
import microagg.dask as mdask  # noqa: E402
from microagg._dask.part import group_part  # noqa: E402
from microagg._scale import shared_scale  # noqa: E402
from conftest import reference_parts  # noqa: E402

QI = ["a", "b", "c"]


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """One LocalCluster (2 worker processes) for the module."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def frame(n: int, seed: int = 0, missing: bool = False) -> pd.DataFrame:
    """Small integer columns (many exact ties), one continuous column, a string stratum
    column and a non-QI column; an index that is not 0..n-1."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 6, n).astype(np.float64),
            "b": rng.integers(0, 3, n),
            "c": rng.normal(size=n).round(1),
            "region": rng.choice(["north", "south", "west"], n, p=[0.5, 0.3, 0.2]),
            "note": [f"r{i}" for i in range(n)],
        },
        index=pd.Index(np.arange(n) * 3 + 7, name="key"),
    )
    if missing:
        df.loc[df.index[rng.random(n) < 0.1], "a"] = np.nan
    return df


def dask_parts(ddf: Any, max_part: int, by: list[str], allow_missing: bool = False) -> list[np.ndarray]:
    """The parts of the distributed planner (run from this process), as row-id lists."""
    spec = Spec(QI, by, 3, max_part, True, allow_missing)
    plan = plan_module.plan_cuts(plan_module.FrameRef(ddf[QI + by]), spec)
    meta = ddf._meta.assign(**{c: np.zeros(0, np.int64) for c in (release_module.ROW, release_module.PART, release_module.KEY)})
    tagged = ddf.map_partitions(tag_partition, plan, spec, meta=meta, partition_info=True).compute()
    rows, parts = tagged[release_module.ROW].to_numpy(), tagged[release_module.PART].to_numpy()
    return [np.sort(rows[parts == q]) for q in range(len(plan.part_sizes))]


def tag_partition(part: pd.DataFrame, plan: Any, spec: Any, partition_info: Any = None) -> pd.DataFrame:
    return release_module.tag(part, plan, spec, partition_info["number"] if partition_info else 0)


def same_parts(found: list[np.ndarray], expected: list[np.ndarray]) -> bool:
    return len(found) == len(expected) and all(np.array_equal(f, e) for f, e in zip(found, expected))


@pytest.mark.parametrize("max_part,by", [(40, []), (250, ["region"]), (7, ["region"])])
def test_planner_parts_equal_the_reference(client: Any, monkeypatch: pytest.MonkeyPatch, max_part: int, by: list[str]) -> None:
    # Tiny selection constants force many bracketing rounds on every cut.
    monkeypatch.setattr(plan_module, "PULL", 16)
    monkeypatch.setattr(plan_module, "PIVOTS", 4)
    monkeypatch.setattr(plan_module, "SAMPLES", 12)
    df = frame(3000, seed=max_part)
    strata = df["region"].to_numpy() if by else np.zeros(len(df))
    expected = reference_parts(df[QI].to_numpy(np.float64), max_part, strata)
    found = dask_parts(dd.from_pandas(df, npartitions=5), max_part, by)
    assert all(len(p) <= max_part for p in found)
    assert same_parts(found, expected)


def test_planner_puts_missing_values_last(client: Any) -> None:
    df = frame(2000, seed=3, missing=True)
    expected = reference_parts(df[QI].to_numpy(np.float64), 100)
    assert same_parts(dask_parts(dd.from_pandas(df, npartitions=3), 100, [], allow_missing=True), expected)


def reference_release(df: pd.DataFrame, k: int, max_part: int, by: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(group of each row, released values): the reference parts grouped one by one."""
    x = df[QI].to_numpy(np.float64)
    strata = df[by[0]].to_numpy() if by else np.zeros(len(df))
    sd = shared_scale(x.std(axis=0))
    labels, released = np.empty(len(df), np.int64), np.empty_like(x)
    offset = 0
    for part in reference_parts(x, max_part, strata):
        labels[part], released[part] = group_part(x[part], k, "mdav", scale=sd, label_offset=offset)
        offset += len(part)
    return labels, released


def groups_of(labels: np.ndarray) -> set[frozenset[int]]:
    return {frozenset(np.flatnonzero(labels == g).tolist()) for g in np.unique(labels)}


@pytest.mark.parametrize("by", [[], ["region"]])
def test_release_equals_the_reference_and_keeps_the_rest(client: Any, by: list[str]) -> None:
    k, max_part = 4, 600
    df = frame(20_000, seed=1)  # > PULL records per stratum: the bracketing rounds run
    ddf = dd.from_pandas(df, npartitions=6)
    out = mdask.anonymize(ddf, k, QI, by=by or None, max_part=max_part, group_column="group").compute()
    assert len(out) == len(df) and out.index.is_unique
    out = out.loc[df.index]  # the index came through: back in the input's row order
    assert out.index.name == "key"
    pd.testing.assert_series_equal(out["note"], df["note"], check_dtype=False)
    pd.testing.assert_series_equal(out["region"], df["region"], check_dtype=False)
    labels, released = reference_release(df, k, max_part, by)
    assert groups_of(out["group"].to_numpy()) == groups_of(labels)
    np.testing.assert_allclose(out[QI].to_numpy(), released, rtol=1e-12, atol=1e-12)
    assert out.groupby("group").size().min() >= k
    assert out.groupby(by + QI).size().min() >= k  # every released combination, within strata


@pytest.mark.parametrize("by", [[], ["region"]])
def test_release_equals_the_local_pipeline(client: Any, by: list[str]) -> None:
    import microagg as ma

    df = frame(20_000, seed=4)
    options: dict[str, Any] = {"by": by} if by else {}
    local = ma.anonymize(df, 4, QI, max_part=600, **options)
    out = mdask.anonymize(dd.from_pandas(df, npartitions=5), 4, QI, max_part=600, **options).compute()
    np.testing.assert_allclose(out.loc[df.index, QI].to_numpy(), local[QI].to_numpy(), rtol=1e-12, atol=1e-12)


def test_small_strata_merge_equals_the_local_pipeline(client: Any) -> None:
    import microagg as ma

    k, max_part = 4, 300
    df = frame(3000, seed=8)
    # Three undersized strata: two of 1 record (the lower code merges first), one of 3.
    df.loc[df.index[[5, 900]], "region"] = ["tiny", "wee"]
    df.loc[df.index[[10, 11, 12]], "region"] = "small"
    df.loc[df.index[[10, 11, 12]], "a"] = [40.0, 41.0, 42.0]  # far out: nearest to no large stratum in particular
    local = ma.microaggregate(df[QI].to_numpy(np.float64), k, by=df["region"], small_strata="merge", max_part=max_part)
    assert len(local.merges) == 3
    ddf = dd.from_pandas(df, npartitions=4)
    out = mdask.anonymize(ddf, k, QI, by="region", small_strata="merge", max_part=max_part, group_column="g").compute()
    out = out.loc[df.index]
    np.testing.assert_array_equal(out["g"].to_numpy(), local.labels)  # the same ids, 0..G-1
    expected = ma.anonymize(df, k, QI, by="region", small_strata="merge", max_part=max_part)
    np.testing.assert_allclose(out[QI].to_numpy(), expected[QI].to_numpy(), rtol=1e-12, atol=1e-12)
    pd.testing.assert_series_equal(out["region"], expected["region"], check_dtype=False)  # relabelled, as locally
    merged = {m.stratum: m.into for m in local.merges}
    assert (out["region"] != df["region"]).sum() == 5 and not out["region"].isin(list(merged)).any()
    assert ma.is_k_anonymous(out[QI].to_numpy(), k, by=out["region"])
    kept = mdask.anonymize(ddf, k, QI, by="region", small_strata="merge", max_part=max_part, relabel=False).compute()
    pd.testing.assert_series_equal(kept.loc[df.index, "region"], df["region"], check_dtype=False)
    assert out.groupby("g").size().min() >= k
    with pytest.raises(ValueError, match="small_strata"):
        mdask.anonymize(ddf, k, QI, by="region", small_strata="nearest")
    with pytest.raises(ValueError, match="small_strata='merge'"):
        mdask.anonymize(ddf, k, QI, by="region", max_part=max_part).compute()


def test_merge_rule_ties_go_to_the_lowest_code() -> None:
    from microagg._dask.strata import merge_small

    # Strata 1 and 3 are undersized and equally small: 1 goes first, to the nearer of 0 and
    # 2 (equally near: the lower code, 0); then 3 joins 2, nearer than 0's merged centroid.
    sizes = np.array([5, 1, 5, 1])
    centroids = np.array([[0.0], [1.0], [2.0], [10.0]])
    after, merges, into = merge_small(sizes, centroids, 3)
    assert merges == [(1, 0, 1), (3, 2, 1)]
    assert after.tolist() == [6, 0, 6, 0] and into.tolist() == [0, 0, 2, 2]


@pytest.mark.parametrize("method", ["mdav", "mondrian-v"])
def test_group_ids_are_the_local_labels(client: Any, method: str) -> None:
    import microagg as ma

    df = frame(6000, seed=9)
    local = ma.microaggregate(df[QI].to_numpy(np.float64), 3, method, by=df["region"], max_part=400)
    out = mdask.anonymize(dd.from_pandas(df, npartitions=4), 3, QI, method, by="region", max_part=400, group_column="g")
    got = out.compute().loc[df.index, "g"].to_numpy()
    if method != "mdav":  # fewer groups than size // k: ids wait for every part
        assert len(np.unique(local.labels)) < len(df) // 3
    np.testing.assert_array_equal(got, local.labels)  # ... and the ids are still 0..G-1, as locally
    assert np.array_equal(np.unique(got), np.arange(got.max() + 1))


def test_a_missing_stratum_label_is_a_stratum(client: Any) -> None:
    df = frame(3000, seed=6)
    df.loc[df.index[::7], "region"] = None
    out = mdask.anonymize(dd.from_pandas(df, npartitions=3), 3, QI, by="region", max_part=200, group_column="g").compute()
    assert out.groupby("g")["region"].nunique(dropna=False).max() == 1
    assert out["region"].isna().sum() == df["region"].isna().sum() > 0
    assert out.groupby("g").size().min() >= 3


def test_parquet_in_and_out(client: Any, tmp_path: Path) -> None:
    df = frame(5000, seed=2)
    dd.from_pandas(df, npartitions=4).to_parquet(tmp_path / "in")
    out = mdask.anonymize(dd.read_parquet(tmp_path / "in"), 3, QI, by="region", max_part=500)
    out.to_parquet(tmp_path / "out")
    back = dd.read_parquet(tmp_path / "out").compute().loc[df.index]
    assert list(back.columns) == list(df.columns)
    pd.testing.assert_series_equal(back["note"], df["note"], check_dtype=False)
    assert back.groupby(["region", *QI]).size().min() >= 3
    assert not np.allclose(back[QI].to_numpy(), df[QI].to_numpy())


def test_nothing_runs_until_computed(client: Any, tmp_path: Path) -> None:
    log = tmp_path / "reads.log"

    def touch(part: pd.DataFrame) -> pd.DataFrame:
        with open(log, "a") as f:  # the workers are other processes: leave a trace on disk
            f.write(f"{len(part)}\n")
        return part

    df = frame(3000)
    ddf = dd.from_pandas(df, npartitions=3).map_partitions(touch, meta=df.head(0))
    out = mdask.anonymize(ddf, 3, QI, max_part=300)
    assert isinstance(out, dd.DataFrame) and not log.exists()
    assert len(out.compute()) == 3000 and log.exists()


def test_bad_arguments(client: Any) -> None:
    ddf = dd.from_pandas(frame(300), npartitions=2)
    with pytest.raises(ValueError, match="max_part"):
        mdask.anonymize(ddf, 5, QI, max_part=9)
    with pytest.raises(ValueError, match="k must be at least 2"):
        mdask.anonymize(ddf, 1, QI)
    with pytest.raises(ValueError, match="unknown column.*nope"):
        mdask.anonymize(ddf, 3, ["a", "nope"])
    with pytest.raises(ValueError, match="by: unknown column"):
        mdask.anonymize(ddf, 3, QI, by="nope")
    days = ddf.assign(day=dd.to_datetime(ddf["a"], unit="D"))
    with pytest.raises(TypeError, match="column 'day' has dtype .*neither numeric nor categorical"):
        mdask.anonymize(days, 3, ["a", "day"])
    with pytest.raises(TypeError, match="dask.dataframe.DataFrame"):
        mdask.anonymize(frame(300), 3, QI)
    with pytest.raises(ValueError, match="method"):
        mdask.anonymize(ddf, 3, QI, method="nope")
    with pytest.raises(ValueError, match="aggregation"):
        mdask.anonymize(ddf, 3, QI, aggregation="mode")
    small = frame(300).assign(region=["tiny"] + ["big"] * 299)
    with pytest.raises(ValueError, match="tiny.*1"):
        mdask.anonymize(dd.from_pandas(small, npartitions=2), 3, QI, by="region").compute()
    with pytest.raises(ValueError, match="missing"):
        mdask.anonymize(dd.from_pandas(frame(300, missing=True), npartitions=2), 3, QI).compute()


def test_microagg_does_not_import_dask() -> None:
    code = "import sys, microagg; bad = [m for m in ('dask', 'distributed') if m in sys.modules]; assert not bad, bad"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_dask_engine(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from microagg.cli import main

    df = frame(4000, seed=5)
    dd.from_pandas(df, npartitions=3).to_parquet(tmp_path / "big.parquet")
    argv = ["anonymize", str(tmp_path / "big.parquet"), "-k", "3", "--engine", "dask",
            "--scheduler", client.scheduler.address, "--columns", "a,b,c", "--by", "region", "--max-part", "300"]
    assert main(argv) == 0
    back = dd.read_parquet(tmp_path / "big_k3.parquet").compute().loc[df.index]
    pd.testing.assert_series_equal(back["note"], df["note"], check_dtype=False)
    assert back.groupby(["region", *QI]).size().min() >= 3
    assert main(argv) == 2 and "exists" in capsys.readouterr().err  # never overwrites
    assert main([*argv, "--overwrite"]) == 0  # unless asked, and then with the new release complete
    assert main([*argv, "--overwrite", "-o", str(tmp_path / "big.parquet")]) == 2
    assert "the input is never overwritten" in capsys.readouterr().err
    assert main([*argv[:6], "--max-part", "4", "-o", str(tmp_path / "x")]) == 2
    assert "--max-part" in capsys.readouterr().err
    # --small-strata merge reaches the Dask engine (a stratum of 2 records, k = 3)
    small = df.assign(region=["tiny"] * 2 + list(df["region"][2:]))
    dd.from_pandas(small, npartitions=3).to_parquet(tmp_path / "small.parquet")
    merged = ["anonymize", str(tmp_path / "small.parquet"), *argv[2:], "-o", str(tmp_path / "m.parquet")]
    assert main(merged) == 2 and "--small-strata merge" in capsys.readouterr().err
    assert main([*merged, "--small-strata", "merge"]) == 0
    released = dd.read_parquet(tmp_path / "m.parquet").compute()["region"]
    assert not released.eq("tiny").any() and set(released) == set(df["region"][2:])  # relabelled
    # the local engine with the same --max-part releases the same values
    local = tmp_path / "local.parquet"
    assert main([*argv[:4], *argv[8:], "-o", str(local)]) == 0
    got = pd.read_parquet(local).set_index(df.index)
    np.testing.assert_allclose(got[QI].to_numpy(), back[QI].to_numpy(), rtol=1e-12, atol=1e-12)


def test_output_keeps_the_input_order_index_and_divisions(client: Any) -> None:
    df = frame(5000, seed=11)
    ddf = dd.from_pandas(df, npartitions=5)
    out = mdask.anonymize(ddf, 3, QI, by="region", max_part=300)
    assert out.divisions == ddf.divisions  # known before anything runs
    got = out.compute()
    pd.testing.assert_index_equal(got.index, df.index)
    pd.testing.assert_series_equal(got["note"], df["note"], check_dtype=False)
    for i in range(ddf.npartitions):  # each record in its input partition
        pd.testing.assert_index_equal(out.partitions[i].compute().index, ddf.partitions[i].compute().index)
    # keep_order=False: rows come grouped by part; the index still restores the order.
    grouped = mdask.anonymize(ddf, 3, QI, by="region", max_part=300, keep_order=False).compute()
    assert not grouped.index.equals(df.index)
    pd.testing.assert_frame_equal(grouped.loc[df.index], got)


@pytest.mark.parametrize("options", [{}, {"weights": "w", "aggregation": "median"}, {"missing": "fill"}])
def test_summary_reports_the_information_loss(client: Any, options: dict[str, Any]) -> None:
    import microagg as ma

    df = frame(4000, seed=12, missing="missing" in options)
    df["w"] = np.random.default_rng(13).uniform(0, 3, len(df)) * 1e300  # huge weights: sums stay finite
    out, summary = mdask.anonymize(dd.from_pandas(df, npartitions=4), 3, QI, max_part=250, summary=True, **options)
    got, report = dask.compute(out, summary)
    assert report.columns == tuple(QI) and report.n_records == len(df)
    # SSE / SST over the observed cells, in sd units, weighted, SST around the weighted means.
    x, released = df[QI].to_numpy(np.float64), got[QI].to_numpy(np.float64)
    w = (df["w"].to_numpy() / 1e300 if "weights" in options else np.ones(len(df)))[:, None] * ~np.isnan(x)
    x0 = np.nan_to_num(x)
    sd = np.nanstd(x, axis=0)
    mean = (w * x0).sum(axis=0) / w.sum(axis=0)
    sse = (w * np.nan_to_num((x - released) / sd) ** 2).sum()
    sst = (w * np.nan_to_num((x - mean) / sd) ** 2).sum()
    assert report.information_loss == pytest.approx(sse / sst, rel=1e-9)
    assert 0 < report.information_loss < 1
    if "missing" not in options:  # same groups as one machine: the same loss
        weights = {"weights": df["w"].to_numpy()} if "weights" in options else {}
        local = ma.microaggregate(x, 3, max_part=250, **{**options, **weights})
        assert report.n_groups == local.n_groups
        assert report.information_loss == pytest.approx(local.information_loss, rel=1e-9)


def test_readme_example_runs(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parent.parent / "examples" / "dask_anonymize.py"
    done = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "20000 records, smallest class 5" in done.stdout
    released = pd.read_parquet(tmp_path / "census_k5")
    assert released.groupby(["region", "age", "income"]).size().min() >= 5


def write_parquet(df: pd.DataFrame, path: Path, files: int, row_group_size: int) -> None:
    """``df`` as ``files`` Parquet files under ``path`` (one file: ``path`` itself)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    chunks = np.array_split(np.arange(len(df)), files)
    if files == 1:
        pq.write_table(pa.Table.from_pandas(df), path, row_group_size=row_group_size)
        return
    path.mkdir()
    for i, rows in enumerate(chunks):
        pq.write_table(pa.Table.from_pandas(df.iloc[rows]), path / f"part.{i}.parquet", row_group_size=row_group_size)


def test_cli_dask_splits_a_large_file_and_prints_the_information_loss(
    client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from microagg._cli import dask as _cli_dask
    from microagg.cli import main

    monkeypatch.setattr(_cli_dask, "PARTITION_BYTES", 1)  # every row group is large enough
    df = frame(3000, seed=14)
    write_parquet(df, tmp_path / "one.parquet", files=1, row_group_size=500)
    argv = ["anonymize", str(tmp_path / "one.parquet"), "-k", "3", "--engine", "dask", "--scheduler",
            client.scheduler.address, "--columns", "a,b,c", "--max-part", "300", "-o", str(tmp_path / "out")]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "6 partitions" in printed  # one a row group, not one for the file
    local = ma_microaggregate(df, 3, 300)
    assert f"{local.n_groups} groups, information loss {100 * local.information_loss:.4f}%" in printed
    assert "3000 records, columns a, b, c" in printed
    back = pd.read_parquet(tmp_path / "out")
    np.testing.assert_allclose(back[QI].to_numpy(), local.aggregated, rtol=1e-12)  # in the input's order


def ma_microaggregate(df: pd.DataFrame, k: int, max_part: int) -> Any:
    import microagg as ma

    return ma.microaggregate(df[QI].to_numpy(np.float64), k, max_part=max_part)


@pytest.mark.parametrize("damage", ["not parquet", "truncated data"])
def test_cli_dask_names_the_unreadable_part(client: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    from microagg.cli import main

    write_parquet(frame(3000, seed=15), tmp_path / "in", files=3, row_group_size=200)
    bad = tmp_path / "in" / "part.1.parquet"
    data = bad.read_bytes()
    if damage == "not parquet":
        bad.write_bytes(b"age,income\n1,2\n")
    else:  # the footer intact, a data page overwritten: only reading the data finds it
        middle = len(data) // 2
        bad.write_bytes(data[:middle] + bytes(200) + data[middle + 200 :])
    argv = ["anonymize", str(tmp_path / "in"), "-k", "3", "--engine", "dask", "--scheduler",
            client.scheduler.address, "--columns", "a,b,c", "--max-part", "300", "-o", str(tmp_path / "out")]
    assert main(argv) == 2
    assert str(bad) in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_cli_dask_keeps_dask_logs_out_of_stderr_unless_verbose(tmp_path: Path) -> None:
    df = frame(2000, seed=16)
    dd.from_pandas(df, npartitions=2).to_parquet(tmp_path / "in")
    run = [sys.executable, "-m", "microagg", "anonymize", str(tmp_path / "in"), "-k", "3", "--engine", "dask",
           "--columns", "a,b,c", "--max-part", "200"]
    quiet = subprocess.run([*run, "-o", str(tmp_path / "q")], capture_output=True, text=True, timeout=600)
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == "" and "information loss" in quiet.stdout
    loud = subprocess.run([*run, "-v", "-o", str(tmp_path / "v")], capture_output=True, text=True, timeout=600)
    assert loud.returncode == 0, loud.stderr
    assert "distributed" in loud.stderr
