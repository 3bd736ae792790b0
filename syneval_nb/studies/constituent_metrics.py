"""Study code of ``notebooks/03_constituent_metrics.ipynb``: STM and TKM (Liu & Gildea 2005) against BLEU.

The paper's worked example (:func:`worked_example`) and the shared depth study
(:mod:`syneval_nb.studies.depth_study`) for the constituent families STM and TKM (:func:`run`)."""
from __future__ import annotations
from syneval_nb.metrics import lexical, syntactic
from syneval_nb.studies import depth_study
from syneval_nb.trees.ptb import read_ptb


__all__ = ["FAMILIES", "worked_example", "run", "results"]

FAMILIES = ("STM", "TKM")
_FIG2_HYP = "(S (NP (PRON I)) (VP (V have) (NP (PRON it))))"
_FIG2_REF = "(S (NP (PRON I)) (VP (V have) (NP (ART a) (ADJ red) (N pen))))"


def worked_example(lam: float = 1.0) -> dict:
    """The paper's section-2 example, "I have it" against "I have a red pen", D = 3: ``{"hyp", "ref", "stm",
    "tkm"}`` (trees and metric results; STM fractions 6/7, 3/4, 1/2, STM = 0.702)."""
    hyp, ref = read_ptb(_FIG2_HYP), read_ptb(_FIG2_REF)
    return {"hyp": hyp, "ref": ref, "stm": syntactic.stm(hyp, [ref], depth=3),
            "tkm": syntactic.tkm(hyp, [ref], lam=lam)}


def run(data_dir=None, sample=None, seed: int = 0, max_depth: int = 9, lam: float = 1.0, permute_human=None,
        n_resamples: int = 1000, alpha: float = 0.05, progress: bool = True) -> depth_study.DepthChapter:
    """:func:`syneval_nb.studies.depth_study.run_chapter` for STM and TKM; TKM also at Moschitti's decay (``"TKM
    λ=0.4"``, the named variant: its own rows and verdicts, and the length diagnosis ``ch.length``)."""
    return depth_study.run_chapter(FAMILIES, data_dir, sample, seed, max_depth, lam, permute_human, n_resamples,
                                   alpha, progress)


def results(ch: depth_study.DepthChapter, example: dict) -> dict:
    """The results file: the worked example, :func:`syneval_nb.studies.depth_study.chapter_results`, signatures."""

    out = {"worked_example_stm": example["stm"].score, "worked_example_fractions": list(example["stm"].fractions),
           "worked_example_tkm": example["tkm"].score}
    out.update(depth_study.chapter_results(ch))
    out["signatures"] = {"stm": syntactic.STM(ch.params["max_depth"]).signature(),
                         "tkm": syntactic.TKM(ch.params["lam"]).signature(),
                         **{depth_study.kernel_name("tkm", x): syntactic.TKM(x).signature()
                            for x in ch.params["kernel_lams"] if x != ch.params["lam"]},
                         "bleu": lexical.BLEU(max_ngram_order=4, smooth="epsilon").signature()}
    return out
