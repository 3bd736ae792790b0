"""Study code of ``notebooks/02_lexical_metrics.ipynb``: the lexical baselines (BLEU, NIST, WER, PER, F-measure,
GTM, ROUGE-S, METEOR-exact, TER) against expert MQM (TED zh-en, refB) and crowd DA (WMT21 de-en, ref A).

Error rates (WER, PER, TER) are negated before correlating, so every metric points the same way. The tables show
BLEU-1..4 and chrF (the headline baseline). Verdicts use rater-normalized MQM (``MQM z``) and the protocol of every
chapter (:mod:`syneval_nb.stats.verdicts`): each metric against chrF and BLEU-4 (plain and beyond length: partial r
given the length model), against the placebo distribution, at system level against permuted DA; Holm over the
chapter's primary claims (the rest exploratory); and Liu & Gildea's argument that n-gram overlap tracks
fluency less well than adequacy as a diagnostic against chrF's own Accuracy-minus-Fluency gap."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import chrf, lexical
from syneval_nb.metrics.base import score_rows
from syneval_nb.studies.common import (
    ASPECTS,
    HUMANS,
    headline_verdicts,
    meta_json,
    verdicts_json,
)
from syneval_nb.studies.raters import rater_allocation


__all__ = ["make_metrics", "score", "segment_tables", "system_scores", "tables", "claims", "results"]


BASELINES = ("chrF", "BLEU-4")
"""The baselines of every "beats" claim, the headline one (chrF) first."""
PRIMARY = ("BLEU-4 beats chrF (MQM z, Pearson)",
           "BLEU-4 beats chrF beyond length (MQM z, partial r given the length model)",
           "METEOR beats chrF (MQM z, Pearson)",
           "METEOR beats chrF beyond length (MQM z, partial r given the length model)",
           "chrF correlates with MQM z", "chrF correlates with MQM z beyond length")
"""The chapter's primary claims, also its headline verdicts: Holm runs over these; the rest are exploratory."""


@dataclass
class LexicalScores:
    """``frame`` (the rows), ``scores`` (oriented: error rates negated; BLEU-1..4, the other eight metrics of the
    papers and chrF), ``controls`` (the four length-only rows, :func:`syneval_nb.stats.length_rows`), ``given``
    (the covariates of "beyond length", :func:`syneval_nb.stats.length_covariates`), ``system`` (corpus scores
    per system, raw orientation), ``signatures``, ``inexact``."""

    frame: pd.DataFrame
    scores: dict
    controls: dict
    given: dict
    system: pd.DataFrame
    signatures: dict
    inexact: int

    @property
    def claim_metrics(self) -> list[str]:
        """The metrics the claims are about: the nine of the papers (BLEU as BLEU-4) and chrF."""
        return [m for m in self.scores if not (m.startswith("BLEU-") and m != "BLEU-4")]


def make_metrics(bleu_max_n: int = 4, bleu_smooth: str = "epsilon", tokenizer: str = "13a", lowercase: bool = False,
                 **options) -> dict:
    """The chapter's metrics, configured as the papers use them: BLEU-1..``bleu_max_n`` (the table shows every
    order) with Liu & Gildea's epsilon smoothing by default, NIST-5, WER, PER, F-measure, GTM e = 2, ROUGE-S window 9,
    METEOR exact, TER, and chrF (the headline baseline, sacrebleu's CHRF). One tokenizer/case for all of them except
    TER, which keeps sacrebleu's TER preprocessing unless ``ter_tokenizer``/``ter_lowercase`` are given."""
    unknown = set(options) - {"nist_max_n", "gtm_exponent", "rouge_window", "ter_tokenizer", "ter_lowercase"}
    if unknown:
        raise TypeError(f"unknown metric options {sorted(unknown)}")
    tl = dict(tokenizer=tokenizer, lowercase=lowercase)
    ter_low = options.get("ter_lowercase")
    return {**{f"BLEU-{n}": lexical.BLEU(n, smooth=bleu_smooth, **tl) for n in range(1, bleu_max_n + 1)},
            "NIST": lexical.NIST(options.get("nist_max_n", 5), **tl), "WER": lexical.WER(**tl),
            "PER": lexical.PER(**tl), "F-measure": lexical.FMeasure(**tl),
            "GTM": lexical.GTM(options.get("gtm_exponent", 2.0), **tl),
            "ROUGE-S": lexical.RougeS(options.get("rouge_window", 9), **tl), "METEOR": lexical.MeteorExact(**tl),
            "TER": lexical.TER(tokenizer=options.get("ter_tokenizer") or "none",
                               lowercase=True if ter_low is None else ter_low),
            "chrF": chrf.CHRF()}


def score(frame: pd.DataFrame, ref_cols=("reference",), progress: bool = True, **metric_options) -> LexicalScores:
    """Score ``frame`` (``target``, ``system``, reference columns) with :func:`make_metrics` (``metric_options``)
    through :func:`syneval_nb.metrics.score_rows` (error rates negated); the length controls and covariates from
    13a token counts."""
    metrics = make_metrics(**metric_options)
    refs = frame[list(ref_cols)].values.tolist()
    segment, system, stats_by = score_rows(metrics, frame["target"].tolist(), refs, frame["system"].tolist(),
                                           progress=progress)
    oriented = {k: (segment[k] if m.higher_is_better else -segment[k]).to_numpy(dtype=float)
                for k, m in metrics.items()}
    tok = metric_options.get("tokenizer", "13a")
    low = metric_options.get("lowercase", False)
    ref_lens = [[len(lexical.tokenize(r, tok, low)) for r in rs] for rs in refs]
    hyp_lens = [len(lexical.tokenize(h, tok, low)) for h in frame["target"]]
    return LexicalScores(frame, oriented, stats.length_rows(hyp_lens, ref_lens),
                         stats.length_covariates(hyp_lens, ref_lens), system,
                         {k: m.signature() for k, m in metrics.items()},
                         int(sum(st[:, 4].sum() for st in stats_by["METEOR"].values())))


def segment_tables(ls: LexicalScores, humans=None, method: str = "pearson", n_resamples: int = 1000, seed: int = 0,
                   alpha: float = 0.05, beyond_length: bool = False) -> pd.DataFrame:
    """Every metric against chrF (marks: Holm within the table), with the four length controls and the placebo
    distribution, per human score (default raw MQM and MQM z), resampling source segments; ``beyond_length``:
    the partial r given the length model (:func:`syneval_nb.stats.length_covariates`), on the same resamples."""
    humans = HUMANS if humans is None else humans
    return stats.correlation_tables(ls.scores, {h: ls.frame[c].to_numpy(dtype=float) for h, c in humans.items()},
                                    ls.frame["seg_id"].to_numpy(), baseline=BASELINES[0], method=method,
                                    controls=ls.controls, n_resamples=n_resamples, seed=seed, alpha=alpha,
                                    given=ls.given if beyond_length else None)


def system_scores(ls: LexicalScores, da: pd.Series) -> dict:
    """The arguments of the system-level table (:func:`syneval_nb.stats.system_table`: the systems resampled,
    Williams' test, permuted DA as the null) for the systems of ``da`` (DA z indexed by system, in its order):
    ``scores`` each MT system's corpus score (error rates negated), ``human`` DA z, ``controls`` the systems'
    mean length controls, ``baseline`` chrF. Use: ``stats.system_table(**system_scores(ls, da), n_resamples=...)``."""
    sysn = ls.frame["system"].to_numpy()
    s = ls.system.loc[da.index]
    rows = {m: (-s[m] if m in lexical.LOWER_IS_BETTER else s[m]).to_numpy(dtype=float) for m in s.columns}
    controls = {k: np.array([v[sysn == x].mean() for x in da.index]) for k, v in ls.controls.items()}
    return {"scores": rows, "human": da.to_numpy(dtype=float), "controls": controls, "baseline": BASELINES[0]}


def tables(seg: pd.DataFrame, partial: pd.DataFrame, within: pd.DataFrame, aspects: pd.DataFrame,
           system=None) -> dict:
    """The tables the :func:`claims` read: MQM z Pearson (``seg``), beyond length (``partial``), within source
    segments (``within``), Accuracy z and Fluency z (the two halves of ``aspects``) and the system level."""
    halves = aspects.attrs["bootstrap"]
    return {"MQM z": seg, "beyond length": partial, "within": within, "Accuracy z": halves["Accuracy z"],
            "Fluency z": halves["Fluency z"], **({} if system is None else {"system": system})}


def claims(metrics, system: bool = True) -> list[stats.Claim]:
    """The chapter's claims on :func:`tables` (:func:`syneval_nb.stats.decide_claims`, Holm over :data:`PRIMARY`).
    Per metric (:attr:`LexicalScores.claim_metrics`): "correlates" with MQM z (raw, beyond length), "beats the
    placebo"; "beats" each other baseline of :data:`BASELINES` (Pearson, beyond length, within source segments,
    with ``system`` at system level) and "beats permuted human scores"; Liu & Gildea's "n-gram overlap misses
    fluency" as a diagnostic: its Accuracy-minus-Fluency gap against chrF's (every metric has such a gap)."""
    out: list[stats.Claim] = []
    where = "at system level (WMT21 de-en DA z, ref A)"

    def add(claim, test, m, base=None, on="MQM z", **kw):
        human = "MQM z" if on in ("MQM z", "beyond length", "within") else None
        out.append(stats.Claim(claim, test, m, base, on=on, human=human, primary=claim in PRIMARY, **kw))

    c = BASELINES[0]
    for m in metrics:
        add(f"{m} correlates with MQM z", "correlates", m)
        add(f"{m} correlates with MQM z beyond length", "correlates", m, on="beyond length")
        add(f"{m} beats the placebo (MQM z)", "beats the placebo", m)
        for base in (b for b in BASELINES if b != m):
            add(f"{m} beats {base} (MQM z, Pearson)", "beats", m, base)
            add(f"{m} beats {base} beyond length (MQM z, partial r given the length model)", "beats", m, base,
                "beyond length")
            add(f"{m} beats {base} within source segments (MQM z)", "beats", m, base, "within")
            if system:
                add(f"{m} beats {base} {where}", "beats", m, base, "system")
        if system:
            add(f"{m} beats permuted human scores {where}", "beats the placebo", m, on="system")
        if m != c:  # decided on Accuracy z against Fluency z, so its "requires" reads the edge "on Accuracy"
            add(f"{m} tracks Accuracy better than Fluency, more than chrF does (z)", "edge", m, c, "Accuracy z",
                versus="Fluency z", labels=("Accuracy", "Fluency"),
                text=f"[r({m}, Accuracy z) - r({m}, Fluency z)] - [r({c}, Accuracy z) - r({c}, Fluency z)]")
    return out


def results(worked: pd.DataFrame, ls: LexicalScores, seg, partial, within, aspects, deen_ls, system, v,
            meta_eval: pd.DataFrame | None = None, recheck=None) -> dict:
    """The results file (JSON-ready); ``raters``: the TED rows' allocation and ``recheck`` (same-rater pairs)."""
    def col(t, h):
        g = t[t["human"] == h]
        return {m: float(r) for m, r in zip(g["metric"], g["r"])}
    return {
        "worked_examples": worked["kit"].to_dict(),
        "ted": {"n_segments": int(len(ls.frame)), "n_systems": int(ls.frame["system"].nunique()),
                "reference": ls.frame.attrs.get("reference"),
                "pearson_mqm": col(seg, "MQM"), "pearson_mqm_z": col(seg, "MQM z"),
                "partial_mqm_z": col(partial, "MQM z"),
                "within_mqm_z": col(within, "MQM z"), "pearson_fluency_z": col(aspects, "Fluency z"),
                "pearson_accuracy_z": col(aspects, "Accuracy z"), "meteor_inexact_alignments": ls.inexact,
                "signatures": ls.signatures},
        "wmt21_deen": {"n_segments": int(len(deen_ls.frame)), "references": ["ref_A"],
                       "pearson_da": {m: float(r) for m, r in zip(system["metric"], system["r"])},
                       "corpus_bleu": deen_ls.system["BLEU-4"].to_dict()},
        "meta_evaluation": None if meta_eval is None else meta_json(meta_eval),
        "verdicts": verdicts_json(v),
        "headline_verdicts": headline_verdicts(v, *PRIMARY),
        "raters": {"allocation": {k: x.to_dict("index") if isinstance(x, pd.DataFrame) else x
                                  for k, x in rater_allocation(ls.frame).items()},
                   "same_rater_recheck": None if recheck is None else verdicts_json(recheck)},
    }
