"""Meta-evaluation statistics: one protocol, plain functions over numpy arrays (mt-metrics-eval style).

Four layered files (each imports only from those before it) and one self-contained module; every name is
re-exported here, so ``from syneval_nb import stats; stats.correlation_table(...)`` is the way to call them:

* :mod:`~syneval_nb.stats.correlation`: the input checks, correlations (:func:`correlation`, ``method`` in
  :data:`METHODS`: pearson, spearman, kendall (tau-b), within, darr), :func:`system_level`, the WMT pair taus
  (:func:`wmt_darr_tau`, :func:`wmt12_tau`), :func:`partial_correlation`, and :func:`fisher_ci` and the Williams
  test, which assume independent rows (system level, or one row per source segment);
* :mod:`~syneval_nb.stats.resampling`: the paired percentile bootstrap over source segments
  (:func:`bootstrap_ci`, :func:`paired_bootstrap`, :func:`holm`) and the controls :func:`placebo` and
  :func:`permute_human`;
* :mod:`~syneval_nb.stats.tables`: :func:`correlation_table` (one table, the same columns everywhere, all metrics
  on the same resamples), :func:`correlation_tables`, :func:`system_table` (the one system-level table),
  :func:`table_row`, :func:`metric_name`, :func:`length_controls` and the control rows :data:`PLACEBO` and
  :data:`LENGTH`;
* :mod:`~syneval_nb.stats.verdicts`: verdicts computed from the numbers (:func:`verdict_beats`,
  :func:`verdict_correlates`, :func:`verdict_contrast`, :func:`verdict_sentence`);
* :mod:`~syneval_nb.stats.claims`: a chapter's claims as data (:class:`Claim`) and the one engine that decides
  them (:func:`decide_claims`);
* :mod:`~syneval_nb.stats.meta` (formerly ``syneval_nb.stats.meta``, not re-exported here: its ``METHODS``
  differ): WMT meta-evaluation with mt-metrics-eval's exact definitions (acc_eq, item-grouped correlation, SPA,
  permutation tests).

Conventions: ``metric`` and ``human`` are 1-D arrays of the same length, one value per scored item; higher is
better for both; non-finite values are an error, never silently dropped; ``segments`` labels the source segment
of each item. Variants are keyword switches with the plain form as default: ``clusters=`` resamples talks or
documents instead of source segments (neither: items), ``threshold=``/``metric_ties=`` select the ``darr`` pairs
and how a metric tie counts, ``permute_human(..., segments=)`` shuffles within segments only; ``groups=`` and
``statistic=`` are the former names of ``clusters=`` and ``method=``.
"""
from __future__ import annotations

from syneval_nb.stats import meta  # noqa: F401  (stats.meta)
from syneval_nb.stats.correlation import (
    METHODS,
    ArrayLike,
    as_vector,  # noqa: F401  (a helper, not in __all__: studies.dependency_metrics)
    average_ranks,
    better_worse_pairs,
    center_within,
    concordance_counts,
    correlation,
    fisher_ci,
    kendall_tau_b,
    partial_correlation,
    pearson,
    spearman,
    system_level,
    system_means,
    williams_from_scores,
    williams_test,
    within_segment,
    wmt12_tau,
    wmt_darr_tau,
)
from syneval_nb.stats.resampling import (
    N_NULL,
    BootstrapResult,
    PairedBootstrapResult,
    boot_matrix,  # noqa: F401  (a helper, not in __all__: tests/test_stats.py)
    bootstrap_ci,
    bootstrap_partial_samples,
    bootstrap_pearson_samples,
    bootstrap_spearman_samples,
    bootstrap_weights,
    holm,
    monte_carlo_p,
    paired_bootstrap,
    null_p,
    percentile_ci,
    permutation_distribution,
    permute_human,
    placebo,
    placebo_columns,
    placebo_distribution,
    residualize,
)
from syneval_nb.stats.tables import (
    LENGTH,
    LENGTH_GIVEN,
    LENGTH_ROWS,
    PLACEBO,
    TABLE_COLUMNS,
    TableBootstrap,
    correlation_table,
    correlation_tables,
    depth_baselines,
    length_controls,
    length_covariates,
    length_knots,
    length_rows,
    metric_name,
    system_table,
    table_row,
)
from syneval_nb.stats.verdicts import (
    unit_text,  # noqa: F401  (a helper, not in __all__: studies.discourse_kernels)
    MIN_UNITS,
    TESTS,
    decide,
    format_p,
    holm_verdicts,
    make_verdict,
    verdict_beats,
    verdict_beats_placebo,
    verdict_contrast,
    verdict_correlates,
    verdict_from_samples,
    verdict_sentence,
)
from syneval_nb.stats.claims import Claim, decide_claims

# the names users call; every other name imported above is a helper other modules reach as stats.X
__all__ = ["pearson", "spearman", "correlation", "fisher_ci", "williams_test", "METHODS", "system_level",
           "partial_correlation", "wmt12_tau", "wmt_darr_tau", "kendall_tau_b", "placebo", "permute_human",
           "placebo_columns", "bootstrap_ci", "paired_bootstrap", "holm", "monte_carlo_p", "LENGTH", "PLACEBO",
           "system_table", "table_row", "correlation_table", "correlation_tables", "metric_name", "length_controls",
           "decide", "verdict_sentence", "verdict_beats", "verdict_correlates", "verdict_contrast", "decide_claims",
           "Claim", "meta"]
