"""What a group releases for a categorical attribute (weighted mode, lower weighted median,
medoid), against brute-force references written per group in plain Python."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from microagg._mixed.release import medoid_rows, weighted_median, weighted_mode


def _case(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    n = draw(st.integers(1, 40))
    n_groups = draw(st.integers(1, n))
    groups = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n, max_size=n)), dtype=np.int64)
    groups[:n_groups] = np.arange(n_groups)  # every group has a member
    codes = np.array(draw(st.lists(st.integers(-1, 4), min_size=n, max_size=n)), dtype=np.int64)
    weights = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)), dtype=np.float64)
    return codes, groups, n_groups, weights


case = st.composite(_case)


def _members(codes: np.ndarray, groups: np.ndarray, weights: np.ndarray, g: int) -> list[tuple[int, float]]:
    """(level, weight) of the group's observed members; weight 1 each if they sum to 0."""
    pairs = [(int(c), float(w)) for c, w, gg in zip(codes, weights, groups) if gg == g and c >= 0]
    if sum(w for _, w in pairs) == 0:
        pairs = [(c, 1.0) for c, _ in pairs]
    return pairs


def _mode_reference(pairs: list[tuple[int, float]]) -> int:
    if not pairs:
        return -1
    total: dict[int, float] = {}
    for c, w in pairs:
        total[c] = total.get(c, 0.0) + w
    best = max(total.values())
    return min(c for c, t in total.items() if t == best)


def _median_reference(pairs: list[tuple[int, float]]) -> int:
    if not pairs:
        return -1
    half = sum(w for _, w in pairs) / 2
    for level in sorted({c for c, _ in pairs}):
        if sum(w for c, w in pairs if c <= level) >= half:
            return level
    raise AssertionError("unreachable")


@settings(max_examples=300, deadline=None)
@given(case(), st.booleans())
def test_weighted_mode_and_median_match_the_definitions(data: tuple, weighted: bool) -> None:
    codes, groups, n_groups, weights = data
    w = weights if weighted else np.ones_like(weights)
    mode = weighted_mode(codes, groups, n_groups, weights if weighted else None)
    median = weighted_median(codes, groups, n_groups, weights if weighted else None)
    for g in range(n_groups):
        pairs = _members(codes, groups, w, g)
        assert mode[g] == _mode_reference(pairs), g
        assert median[g] == _median_reference(pairs), g


def test_ties_go_to_the_first_level_and_the_lower_median() -> None:
    groups = np.zeros(4, dtype=np.int64)
    codes = np.array([3, 1, 3, 1])
    assert weighted_mode(codes, groups, 1)[0] == 1
    assert weighted_median(codes, groups, 1)[0] == 1
    assert weighted_median(codes, groups, 1, np.array([1.0, 1.0, 1.0, 0.5]))[0] == 3


@settings(max_examples=200, deadline=None)
@given(case(), st.integers(0, 2**32 - 1))
def test_medoid_is_the_candidate_nearest_the_centroid(data: tuple, seed: int) -> None:
    _, groups, n_groups, weights = data
    rng = np.random.default_rng(seed)
    n = groups.shape[0]
    z = rng.integers(0, 3, (n, 3)).astype(np.float64)  # small integers: ties happen
    z[rng.random((n, 3)) < 0.2] = np.nan
    candidates = rng.random(n) < 0.6
    rows = medoid_rows(z, groups, n_groups, weights, candidates)
    for g in range(n_groups):
        members = [i for i in range(n) if groups[i] == g]
        w = weights[members] if weights[members].sum() > 0 else np.ones(len(members))
        zz = z[members]
        seen = ~np.isnan(zz)
        with np.errstate(invalid="ignore"):
            centroid = np.nansum(np.where(seen, zz, 0) * w[:, None], axis=0) / (seen * w[:, None]).sum(axis=0)
        pool = [i for i in members if candidates[i]] or members
        distance = {i: float(np.nansum((z[i] - centroid) ** 2)) for i in pool}
        chosen = int(rows[g])
        assert chosen in pool, g
        assert distance[chosen] <= min(distance.values()) + 1e-9, g
        assert all(distance[i] > distance[chosen] - 1e-9 for i in pool if i < chosen), g  # ties: lowest row
