"""Study code of ``notebooks/04_dependency_metrics.ipynb``: HWCM, DSTM and DTKM (Liu & Gildea 2005) against BLEU.

The paper's worked example (:func:`worked_example`), the shared depth study
(:mod:`syneval_nb.studies.depth_study`) for the dependency families (:func:`run`) and the Table-7-like example
segment picked by a fixed rule (:func:`table7_example`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import lexical, syntactic
from syneval_nb.studies import depth_study
from syneval_nb.trees import heads
from syneval_nb.trees.ptb import read_ptb


__all__ = ["FAMILIES", "PEN_REF", "PEN_HYP", "worked_example", "run", "rank_gap", "table7_example", "results"]

FAMILIES = ("HWCM", "DSTM", "DTKM")
PEN_REF = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ red) (NN pen))))"
PEN_HYP = "(S (NP (PRP I)) (VP (VBP have) (NP (DT a) (JJ blue) (NN pen))))"


def worked_example(lam: float = 1.0) -> dict:
    """Section 2.1: the dependency tree of "I have a red pen", its 2-word chains, and HWCM/DSTM (D = 3) and DTKM of
    "I have a blue pen" against it (by hand: HWCM (0.8 + 0.75 + 0.5)/3, DSTM (0.8 + 0.5 + 0)/3)."""
    ref, hyp = read_ptb(PEN_REF), read_ptb(PEN_HYP)
    dep = heads.to_dependencies(ref)
    return {"dep_ref": dep, "two_word": [c for c in heads.headword_chains(dep, 2) if len(c) == 2],
            "hwcm": syntactic.hwcm(hyp, [ref], length=3), "dstm": syntactic.dstm(hyp, [ref], depth=3),
            "dtkm": syntactic.dtkm(hyp, [ref], lam=lam)}


def run(data_dir=None, sample=None, seed: int = 0, max_depth: int = 9, lam: float = 1.0, permute_human=None,
        n_resamples: int = 1000, alpha: float = 0.05, progress: bool = True) -> depth_study.DepthChapter:
    """:func:`syneval_nb.studies.depth_study.run_chapter` for HWCM, DSTM and DTKM; DTKM also at Moschitti's decay
    (``"DTKM λ=0.4"``, a named variant in the tables and the length diagnosis, without verdicts of its own: the
    chapter's verdict family is unchanged)."""
    return depth_study.run_chapter(FAMILIES, data_dir, sample, seed, max_depth, lam, permute_human, n_resamples,
                                   alpha, progress, kernel_verdicts=False)


def rank_gap(a: stats.ArrayLike, b: stats.ArrayLike, eligible: stats.ArrayLike | None = None,
             tiebreak: stats.ArrayLike | None = None) -> tuple[int, float, float]:
    """The item that metric ``a`` ranks highest relative to metric ``b`` (for examples like Liu & Gildea's Table 7:
    a hypothesis HWCM rates high and BLEU low).

    Percentile ranks are taken over all items (``pandas.Series.rank(pct=True)``: ties get their average rank).
    Among the ``eligible`` items (a boolean mask; all items when ``None`` or when none is eligible) the one with
    the largest ``pct_a - pct_b`` is chosen; ties go to the larger ``tiebreak`` value (e.g. the human score), then
    to the smaller index. Returns ``(index, pct_a, pct_b)``.
    """
    x, y = stats._vec(a, "a"), stats._vec(b, "b")
    if len(x) != len(y) or not len(x):
        raise ValueError(f"a and b need the same, non-zero length, got {len(x)} and {len(y)}")
    ok = np.ones(len(x), dtype=bool)
    if eligible is not None:
        e = np.asarray(eligible, dtype=bool)
        if e.shape != x.shape:
            raise ValueError(f"eligible has {e.size} entries for {len(x)} items")
        if e.any():
            ok = e
    tb = np.zeros(len(x)) if tiebreak is None else stats._vec(tiebreak, "tiebreak")
    if tb.shape != x.shape:
        raise ValueError(f"tiebreak has {tb.size} entries for {len(x)} items")
    pa, pb = pd.Series(x).rank(pct=True).to_numpy(), pd.Series(y).rank(pct=True).to_numpy()
    frame = pd.DataFrame({"gap": pa - pb, "tb": tb, "i": np.arange(len(x))})[ok]
    i = int(frame.sort_values(["gap", "tb", "i"], ascending=[False, False, True])["i"].iloc[0])
    return i, float(pa[i]), float(pb[i])


def table7_example(ch: depth_study.DepthChapter, order: int = 4, min_words: int = 10) -> dict:
    """The Table-7-like segment by a fixed rule (:func:`rank_gap`): among segments without any
    MQM Fluency error and with at least ``min_words`` hypothesis words, the largest gap between the HWCM-``order``
    percentile rank and the BLEU-``order`` one, ties broken by the lower MQM penalty. Returns the row, the HWCM
    result (with ``explain()``), BLEU, the percentiles and a display ``table``. (With ``permute_human`` the MQM
    columns are shuffled, so the pick changes: the example is about the metrics, not the humans.)"""
    lit = ch.literal
    f = lit.frame
    n_words = f["target"].str.split().str.len().to_numpy()
    i, pct_h, pct_b = rank_gap(lit.segment[("HWCM", order)], lit.segment[("BLEU", order)],
                               eligible=(f["mqm_fluency"].to_numpy() == 0) & (n_words >= min_words),
                               tiebreak=f["mqm"].to_numpy())
    row = f.iloc[i]
    hw = syntactic.hwcm(read_ptb(row["ptb"]), [read_ptb(row["ptb_reference"])], length=order)
    bleu = float(lexical.BLEU(max_ngram_order=order, smooth="epsilon").sentence_score(
        row["target"], [row["reference"]]).score)
    table = pd.DataFrame({"": ["system", "hypothesis", "reference", f"HWCM (D={order})", f"BLEU-{order}",
                               "HWCM percentile", "BLEU percentile", "MQM", "MQM Fluency"],
                          "value": [row["system"], row["target"], row["reference"], round(hw.score, 3),
                                    round(bleu, 3), round(pct_h, 3), round(pct_b, 3), row["mqm"],
                                    row["mqm_fluency"]]})
    return {"row": row, "hwcm": hw, "bleu": bleu, "hwcm_pct": float(pct_h), "bleu_pct": float(pct_b),
            "table": table}


def shared_chains(example: dict) -> pd.DataFrame:
    """The example's matched chains of length 2 and more (from HWCM's explanation)."""
    e = example["hwcm"].explain()
    return e[(e["depth"] >= 2) & e["matched"]]


def results(ch: depth_study.DepthChapter, example: dict, t7: dict) -> dict:
    """The results file: the worked example, :func:`syneval_nb.studies.depth_study.chapter_results`, the
    Table-7-like example, signatures."""
    out = {"worked_example_hwcm": example["hwcm"].score, "worked_example_dstm": example["dstm"].score,
           "worked_example_dtkm": example["dtkm"].score,
           "worked_example_two_word_chains": [" ".join(c) for c in example["two_word"]]}
    out.update(depth_study.chapter_results(ch))
    row = t7["row"]
    out["table7_example"] = {"system": str(row["system"]), "seg_id": int(row["seg_id"]), "hwcm": t7["hwcm"].score,
                             "bleu": t7["bleu"], "hwcm_pct": t7["hwcm_pct"], "bleu_pct": t7["bleu_pct"],
                             "mqm": float(row["mqm"])}
    md = ch.params["max_depth"]
    out["signatures"] = {"hwcm": syntactic.HWCM(md).signature(), "dstm": syntactic.DSTM(md).signature(),
                         "dtkm": syntactic.DTKM(ch.params["lam"]).signature(),
                         **{depth_study.kernel_name("dtkm", x): syntactic.DTKM(x).signature()
                            for x in ch.params["kernel_lams"] if x != ch.params["lam"]},
                         "bleu": lexical.BLEU(max_ngram_order=4, smooth="epsilon").signature()}
    return out
