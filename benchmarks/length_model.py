"""How much of the human scores does length alone explain? The linear and the flexible length model of "beyond
length" (``stats.length_covariates(model=...)``), fitted to the segment-level human scores by least squares:

* in-sample r: the multiple correlation of the fit (what a partial correlation removes);
* out-of-fold r: 10-fold cross-validation grouped by source segment (no segment in two folds), the r of the
  out-of-fold predictions with the human scores (so extra terms earn their place only if they generalize);
* its 95% interval from 1,000 resamples of the source segments (percentile, predictions fixed), and the
  difference flexible - linear on the same resamples.

On TED zh-en (MQM z, the chapters' reference refB) and WMT21 newstest2021 zh-en (published MQM, reference A; no
rater ids, so raw MQM). WMT21 de-en has no segment-level human scores (system-level DA only), so it has no row.

    .venv/bin/python benchmarks/length_model.py [--data-dir DIR]

Results: ``benchmarks/results/issue35_length_model.txt``.
"""
from __future__ import annotations

import argparse

import numpy as np

from syneval_nb import data, stats
from syneval_nb.metrics import lexical
from syneval_nb.studies.common import load_ted


def _fit(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    a = np.column_stack([np.ones(len(X)), X])
    return a @ np.linalg.lstsq(a, y, rcond=None)[0]


def _out_of_fold(X: np.ndarray, y: np.ndarray, seg: np.ndarray, folds: int = 10, seed: int = 0) -> np.ndarray:
    uniq = np.unique(seg)
    fold = dict(zip(uniq, np.random.default_rng(seed).permutation(len(uniq)) % folds))
    f = np.array([fold[s] for s in seg])
    pred = np.empty(len(y))
    for k in range(folds):
        tr, te = f != k, f == k
        a = np.column_stack([np.ones(tr.sum()), X[tr]])
        pred[te] = np.column_stack([np.ones(te.sum()), X[te]]) @ np.linalg.lstsq(a, y[tr], rcond=None)[0]
    return pred


def rows(name: str, hyps, refs, y, seg) -> list[str]:
    hl = [len(lexical.tokenize(h)) for h in hyps]
    rl = [len(lexical.tokenize(r)) for r in refs]
    out, preds = [], {}
    for model in ("linear", "flexible"):
        cov = stats.length_covariates(hl, rl, model=model)
        X = np.column_stack(list(cov.values()))
        r_in = stats.pearson(_fit(X, y), y)
        pred = preds[model] = _out_of_fold(X, y, seg)
        b = stats.bootstrap_ci(pred, y, segments=seg, n_resamples=1000, seed=0)
        out.append(f"{name:<34} {model:<9} {len(cov):>2} terms  in-sample r {r_in:.3f}  out-of-fold r {b.estimate:.3f} "
                   f"[{b.low:.3f}, {b.high:.3f}]  ({len(y)} rows, {len(np.unique(seg))} source segments)")
    d = stats.paired_bootstrap(preds["flexible"], preds["linear"], y, segments=seg, n_resamples=1000, seed=0)
    out.append(f"{name:<34} flexible - linear, out-of-fold r: {d.delta.estimate:+.3f} [{d.delta.low:+.3f}, "
               f"{d.delta.high:+.3f}], one-sided {stats.format_p(d.p_better)} (same resamples)")
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    a = ap.parse_args(argv)
    ted = load_ted(a.data_dir)
    lines = rows("TED zh-en, MQM z (ref refB)", ted["target"], ted["reference"], ted["mqm_z"].to_numpy(float),
                 ted["seg_id"].to_numpy())
    news = data.load_newstest2021_zhen_mqm(a.data_dir)
    news = news[news["mqm"].notna()]
    lines += rows("newstest2021 zh-en, MQM (ref A)", news["target"], news["ref"], news["mqm"].to_numpy(float),
                  news["seg_id"].to_numpy())
    print("\n".join(lines))


if __name__ == "__main__":
    main()
