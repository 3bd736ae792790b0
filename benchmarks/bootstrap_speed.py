"""Speed target: a 1,000-resample paired bootstrap of Pearson over 19,000 segments in a few seconds.

Run: ``.venv/bin/python benchmarks/bootstrap_speed.py`` (prints seconds per configuration).
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


if __name__ == "__main__":
    main()
