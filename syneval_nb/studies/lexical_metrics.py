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
    META_K,
    headline_verdicts,
    holm_chapter,
    meta_json,
    meta_table,
    verdict_contrast,
    verdicts_json,
)


__all__ = ["BASELINES", "worked_examples", "LexicalScores", "make_metrics", "score", "segment_tables",
           "segment_display", "system_table", "verdicts", "results"]


def worked_examples() -> pd.DataFrame:
    """Every metric's worked example: ``example, kit, by hand`` (by hand = derived by hand or printed in the
    paper; tests/test_lexical.py derives each)."""
    ws = dict(tokenizer="none")
    lg2 = lexical.BLEU(2, smooth="epsilon", lowercase=True)
    lg4 = lexical.BLEU(4, smooth="epsilon", lowercase=True)
    ex = {
        "BLEU-2 eps, 'I have the dog' vs 'I had a dog'": (lg2.sentence_score("I have the dog", ["I had a dog"]).score, np.sqrt(0.5e-3)),
        "BLEU-2 eps, 'A dog I had' vs 'I had a dog'": (lg2.sentence_score("A dog I had", ["I had a dog"]).score, np.sqrt(2 / 3)),
        "BLEU-4 eps, 'I have the dog'": (lg4.sentence_score("I have the dog", ["I had a dog"]).score, (0.5e-9) ** 0.25),
        "BLEU-4 eps, 'A dog I had'": (lg4.sentence_score("A dog I had", ["I had a dog"]).score, (2 / 3 * 1e-6) ** 0.25),
        "NIST-2, 'a b' vs 'a b a'": (lexical.NIST(2, **ws).sentence_score("a b", ["a b a"]).score, (np.log2(4.5) / 2 + 1) * 0.5),
        "WER, 'a b c d' vs 'a x c d'": (lexical.WER(**ws).sentence_score("a b c d", ["a x c d"]).score, 1 / 4),
        "PER, 'd c b a' vs 'a b c d'": (lexical.PER(**ws).sentence_score("d c b a", ["a b c d"]).score, 0.0),
        "F-measure, 'the the cat' vs 'the cat sat'": (lexical.FMeasure(**ws).sentence_score("the the cat", ["the cat sat"]).score, 2 / 3),
        "GTM e=2, 'a b c d e' vs 'a b c x d e'": (lexical.GTM(2, **ws).sentence_score("a b c d e", ["a b c x d e"]).score, 2 * np.sqrt(13) / 11),
        "ROUGE-S, 'police kill the gunman' (Lin & Och)": (lexical.RougeS(9, **ws).sentence_score("police kill the gunman", ["police killed the gunman"]).score, 0.5),
        "ROUGE-S, 'the gunman kill police' (Lin & Och)": (lexical.RougeS(9, **ws).sentence_score("the gunman kill police", ["police killed the gunman"]).score, 1 / 6),
        "METEOR, 'the president then spoke to the audience'": (lexical.MeteorExact(**ws).sentence_score("the president then spoke to the audience", ["the president spoke to the audience"]).score, 60 / 61 * 53 / 54),
        "TER, 'c d a b' vs 'a b c d' (one shift)": (lexical.TER().sentence_score("c d a b", ["a b c d"]).score, 0.25),
    }
    return pd.DataFrame([(k, float(v), float(e)) for k, (v, e) in ex.items()],
                        columns=["example", "kit", "by hand"]).set_index("example")


BASELINES = ("chrF", "BLEU-4")
PRIMARY = ("BLEU-4 beats chrF (MQM z, Pearson)",
           "BLEU-4 beats chrF beyond length (MQM z, partial r given the length model)",
           "METEOR beats chrF (MQM z, Pearson)",
           "METEOR beats chrF beyond length (MQM z, partial r given the length model)",
           "chrF correlates with MQM z", "chrF correlates with MQM z beyond length")
"""The chapter's primary claims, also its headline verdicts: Holm runs over these; the rest are exploratory."""
"""The baselines of every "beats" verdict, the headline one (chrF) first."""


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
    def verdict_metrics(self) -> list[str]:
        """The metrics the verdicts are about: the nine of the papers (BLEU as BLEU-4) and chrF."""
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


def segment_display(tables: dict) -> pd.DataFrame:
    """``{label: stacked table}`` -> one frame: r [interval] and the difference from chrF with its mark, per
    human score and table (e.g. Pearson, beyond length, within-segment)."""
    cols = {}
    for label, t in tables.items():
        for h, g in t.groupby("human", sort=False):
            g = g.set_index("metric")
            cols[(label, h, "r")] = g["r"]
            cols[(label, h, "interval")] = [f"[{a:.3f}, {b:.3f}]" for a, b in zip(g["low"], g["high"])]
            cols[(label, h, f"vs {BASELINES[0]}")] = ["" if not np.isfinite(d) else f"{d:+.3f}{m}"
                                                      for d, m in zip(g["delta"], g["mark"])]
    out = pd.DataFrame(cols)
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


def system_table(ls: LexicalScores, da: pd.Series, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05):
    """System level: each MT system's corpus score (error rates negated) against DA z (indexed by system), rows =
    systems resampled, Williams' test added (independent rows); the length controls are the systems' means; the
    null is a permutation test (``null="permutation"``), not a placebo row."""
    sysn = ls.frame["system"].to_numpy()
    s = ls.system.loc[da.index]
    rows = {m: (-s[m] if m in lexical.LOWER_IS_BETTER else s[m]).to_numpy(dtype=float) for m in s.columns}
    controls = {k: np.array([v[sysn == x].mean() for x in da.index]) for k, v in ls.controls.items()}
    return stats.correlation_table(rows, da.to_numpy(dtype=float), None, baseline=BASELINES[0], controls=controls,
                                   null="permutation", n_resamples=n_resamples, seed=seed, alpha=alpha,
                                   williams=True)


def verdicts(seg: pd.DataFrame, partial: pd.DataFrame, within: pd.DataFrame, aspects: pd.DataFrame,
             system=None) -> dict:
    """The chapter's verdicts (MQM z), Holm over all of them (one family, :func:`syneval_nb.studies.common.
    holm_chapter`). For each metric of the papers and chrF: "correlates" and "correlates beyond length" (partial r
    given the length model), "beats the placebo"; against each baseline of :data:`BASELINES` (chrF, then BLEU-4):
    "beats" (Pearson), "beats ... beyond length", "beats ... within source segments", at system level (WMT21
    de-en DA z, ref A) "beats" and "beats permuted human scores" (permutation test). Liu & Gildea's "n-gram
    overlap misses fluency" as a diagnostic: the metric's Accuracy-minus-Fluency gap against chrF's gap (every
    metric, chrF included, tracks Accuracy z better than Fluency z, so the plain gap is no evidence)."""
    v = {}
    names = [m for m in seg["metric"].unique() if m not in (stats.PLACEBO, *stats.LENGTH_ROWS.values())
             and not (m.startswith("BLEU-") and m != "BLEU-4")]
    for m in names:
        v[f"{m} correlates with MQM z"] = stats.verdict_correlates(seg, m, human="MQM z")
        v[f"{m} correlates with MQM z beyond length"] = stats.verdict_correlates(partial, m, human="MQM z")
        v[f"{m} beats the placebo (MQM z)"] = stats.verdict_beats_placebo(seg, m, human="MQM z")
        for base in BASELINES:
            if m == base:
                continue
            v[f"{m} beats {base} (MQM z, Pearson)"] = stats.verdict_beats(seg, m, base, human="MQM z")
            v[f"{m} beats {base} beyond length (MQM z, partial r given the length model)"] = stats.verdict_beats(
                partial, m, base, human="MQM z")
            v[f"{m} beats {base} within source segments (MQM z)"] = stats.verdict_beats(within, m, base,
                                                                                      human="MQM z")
            if system is not None:
                v[f"{m} beats {base} at system level (WMT21 de-en DA z, ref A)"] = stats.verdict_beats(system, m,
                                                                                                    base)
        if system is not None:
            v[f"{m} beats permuted human scores at system level (WMT21 de-en DA z, ref A)"] = \
                stats.verdict_beats_placebo(system, m)
        if m != BASELINES[0]:
            c = BASELINES[0]
            v[f"{m} tracks Accuracy better than Fluency, more than chrF does (z)"] = verdict_contrast(
                aspects, aspects, m, c, human_a="Accuracy z", human_b="Fluency z",
                text=f"[r({m}, Accuracy z) - r({m}, Fluency z)] - [r({c}, Accuracy z) - r({c}, Fluency z)]")
    return holm_chapter(v, primary=[c for c in PRIMARY if c in v])[0]


def meta(ls: LexicalScores, n_resamples: int = 1000, seed: int = 0) -> pd.DataFrame:
    """The WMT meta-evaluation beside Pearson (:func:`syneval_nb.studies.common.meta_table`) of the verdicts'
    metrics on MQM z: acc_eq, item-grouped r, SPA, and the permutation p of each against chrF."""
    return meta_table({m: ls.scores[m] for m in ls.verdict_metrics}, ls.frame, "mqm_z", BASELINES[0],
                      min(n_resamples, META_K), seed)


def results(worked: pd.DataFrame, ls: LexicalScores, seg, partial, within, aspects, deen_ls, system, v,
            meta_eval: pd.DataFrame | None = None) -> dict:
    """The results file (JSON-ready)."""
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
    }
