"""Speed target: a 1,000-resample paired bootstrap of Pearson over 19,000 segments in a few seconds; the
vectorised bootstrap Spearman (:func:`syneval_nb.stats.bootstrap_spearman_samples`) at least 10 times faster than
scipy's ``spearmanr`` on each resample, on a system-level table (19 systems, 1,000 resamples).

Run: ``.venv/bin/python benchmarks/bootstrap_speed.py`` (prints seconds per configuration, and the ratio).
"""
from __future__ import annotations

import time

import numpy as np

from syneval_nb import stats


def main(n: int = 19_000, resamples: int = 1_000) -> None:
    rng = np.random.default_rng(0)
    human = rng.normal(size=n)
    a = human + rng.normal(size=n)
    b = human + 1.2 * rng.normal(size=n)
    many = human + rng.normal(size=(30, n))
    groups = np.repeat(np.arange(n // 19), 19)

    cases = {
        "bootstrap_ci, 1 metric": lambda: stats.bootstrap_ci(a, human, n_resamples=resamples),
        "paired_bootstrap, 2 metrics": lambda: stats.paired_bootstrap(a, b, human, n_resamples=resamples),
        "paired_bootstrap, grouped by segment (1000 groups)":
            lambda: stats.paired_bootstrap(a, b, human, n_resamples=resamples, groups=groups),
        "bootstrap_pearson_samples, 30 metrics at once":
            lambda: stats.bootstrap_pearson_samples(many, human, n_resamples=resamples),
        "kendall_tau_b, one call": lambda: stats.kendall_tau_b(np.round(a), np.round(human * 3)),
    }
    print(f"n = {n:,} segments, {resamples:,} resamples")
    for name, fn in cases.items():
        t0 = time.perf_counter()
        fn()
        print(f"{name:55s} {time.perf_counter() - t0:6.2f} s")
    spearman_ratio(resamples)


def spearman_ratio(resamples: int = 1_000, n_systems: int = 19, n_metrics: int = 10) -> float:
    """Seconds of the former per-resample path (scipy's spearmanr on each resample written out) over the
    vectorised one, on the same resamples, with the same values (checked)."""
    rng = np.random.default_rng(1)
    human = rng.normal(size=n_systems)
    metrics = human + rng.normal(size=(n_metrics, n_systems))
    t0 = time.perf_counter()
    fast = stats.bootstrap_spearman_samples(metrics, human, n_resamples=resamples)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    slow = []
    for w in stats.bootstrap_weights(n_systems, resamples):
        for row in w:
            idx = np.repeat(np.arange(n_systems), row.astype(int))
            slow.append([stats.spearman(m[idx], human[idx]) for m in metrics])
    t_slow = time.perf_counter() - t0
    np.testing.assert_allclose(fast, np.array(slow), rtol=0, atol=1e-12)
    print(f"bootstrap Spearman, {n_systems} systems x {n_metrics} metrics: per resample {t_slow:.2f} s, "
          f"vectorised {t_fast:.3f} s, ratio {t_slow / t_fast:.0f}x (target >= 10x)")
    return t_slow / t_fast


if __name__ == "__main__":
    main()
