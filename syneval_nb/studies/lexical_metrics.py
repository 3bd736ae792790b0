"""Study code of ``notebooks/02_lexical_metrics.ipynb``: the lexical baselines (BLEU, NIST, WER, PER, F-measure,
GTM, ROUGE-S, METEOR-exact, TER) against expert MQM (TED zh-en, refB) and crowd DA (WMT21 de-en, ref A).

Error rates (WER, PER, TER) are negated before correlating, so every metric points the same way. Verdicts use
rater-normalized MQM (``MQM z``) and the same protocol as the other chapters (:mod:`syneval_nb.stats`): each
metric against BLEU, the placebo and the length control ``length`` = -|len diff|, and Liu & Gildea's argument
that n-gram overlap tracks fluency less well than adequacy as the paired difference r(Accuracy z) - r(Fluency z)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import lexical
from syneval_nb.studies.common import ASPECTS, HUMANS, verdicts_json
from syneval_nb.studies.depth_study import _combo_verdict


__all__ = ["worked_examples", "LexicalScores", "score", "segment_tables", "segment_display", "system_table",
           "verdicts", "results"]


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


@dataclass
class LexicalScores:
    """``frame`` (the rows), ``scores`` (oriented: error rates negated), ``length`` (-|len diff|),
    ``neg_ref_length``, ``system`` (corpus scores per system, raw orientation), ``signatures``, ``inexact``."""

    frame: pd.DataFrame
    scores: dict
    length: np.ndarray
    neg_ref_length: np.ndarray
    system: pd.DataFrame
    signatures: dict
    inexact: int


def score(frame: pd.DataFrame, ref_cols=("reference",), progress: bool = True, **metric_options) -> LexicalScores:
    """Score ``frame`` (``target``, ``system``, reference columns) with :func:`syneval_nb.lexical.make_metrics`
    (``metric_options``) through :func:`syneval_nb.lexical.evaluate`; the controls from 13a token counts."""
    metrics = lexical.make_metrics(**metric_options)
    refs = frame[list(ref_cols)].values.tolist()
    ev = lexical.evaluate(metrics, frame["target"].tolist(), refs, frame["system"].tolist(), progress)
    oriented = {m: (-ev.segment[m] if m in lexical.LOWER_IS_BETTER else ev.segment[m]).to_numpy(dtype=float)
                for m in ev.segment.columns}
    tok = metric_options.get("tokenizer", "13a")
    low = metric_options.get("lowercase", False)
    ref_lens = [[len(lexical.tokenize(r, tok, low)) for r in rs] for rs in refs]
    hyp_lens = [len(lexical.tokenize(h, tok, low)) for h in frame["target"]]
    length = stats.length_controls(hyp_lens, ref_lens)["neg_abs_len_diff"]
    return LexicalScores(frame, oriented, length, -np.array([np.mean(r) for r in ref_lens]), ev.system,
                         dict(ev.signatures), int(metrics["METEOR"].last_inexact))


def segment_tables(ls: LexicalScores, humans=None, method: str = "pearson", n_resamples: int = 1000, seed: int = 0,
                   alpha: float = 0.05) -> pd.DataFrame:
    """Every metric against BLEU (Holm over the table), with the controls ``length`` and ``-ref length`` and the
    placebo, per human score (default raw MQM and MQM z), resampling source segments."""
    humans = HUMANS if humans is None else humans
    return stats.correlation_tables(ls.scores, {h: ls.frame[c].to_numpy(dtype=float) for h, c in humans.items()},
                                    ls.frame["seg_id"].to_numpy(), baseline="BLEU", method=method,
                                    controls={stats.LENGTH: ls.length, "-ref length": ls.neg_ref_length},
                                    n_resamples=n_resamples, seed=seed, alpha=alpha)


def segment_display(tables: dict) -> pd.DataFrame:
    """``{label: stacked table}`` -> one frame: r [interval] and the difference from BLEU with its mark, per
    human score and table (e.g. Pearson, within-segment)."""
    cols = {}
    for label, t in tables.items():
        for h, g in t.groupby("human", sort=False):
            g = g.set_index("metric")
            cols[(label, h, "r")] = g["r"]
            cols[(label, h, "interval")] = [f"[{a:.3f}, {b:.3f}]" for a, b in zip(g["low"], g["high"])]
            cols[(label, h, "vs BLEU")] = ["" if not np.isfinite(d) else f"{d:+.3f}{m}"
                                           for d, m in zip(g["delta"], g["mark"])]
    out = pd.DataFrame(cols)
    out.columns = pd.MultiIndex.from_tuples(out.columns)
    return out


def system_table(ls: LexicalScores, da: pd.Series, n_resamples: int = 1000, seed: int = 0, alpha: float = 0.05):
    """System level: each MT system's corpus score (error rates negated) against DA z (indexed by system), rows =
    systems resampled, Williams' test added (independent rows); length control = the system's mean -|len diff|."""
    sysn = ls.frame["system"].to_numpy()
    s = ls.system.loc[da.index]
    rows = {m: (-s[m] if m in lexical.LOWER_IS_BETTER else s[m]).to_numpy(dtype=float) for m in s.columns}
    length = np.array([ls.length[sysn == x].mean() for x in da.index])
    return stats.correlation_table(rows, da.to_numpy(dtype=float), None, baseline="BLEU",
                                   controls={stats.LENGTH: length}, n_resamples=n_resamples, seed=seed, alpha=alpha,
                                   williams=True)


def verdicts(seg: pd.DataFrame, within: pd.DataFrame, aspects: pd.DataFrame, system=None) -> dict:
    """The chapter's verdicts (MQM z): each metric correlates with MQM z; each beats BLEU (Pearson and within
    segments); each tracks Accuracy z better than Fluency z (Liu & Gildea: n-gram overlap misses fluency); at
    system level (WMT21 de-en DA z, ref A) each beats BLEU."""
    v = {}
    b = aspects.attrs["bootstrap"]
    for m in [x for x in seg["metric"].unique() if x not in (stats.PLACEBO, stats.LENGTH, "-ref length")]:
        v[f"{m} correlates with MQM z"] = stats.verdict_correlates(seg, m, human="MQM z")
        if m != "BLEU":
            v[f"{m} beats BLEU (MQM z, Pearson)"] = stats.verdict_beats(seg, m, "BLEU", human="MQM z")
            v[f"{m} beats BLEU within source segments (MQM z)"] = stats.verdict_beats(within, m, "BLEU", human="MQM z")
            if system is not None:
                v[f"{m} beats BLEU at system level (WMT21 de-en DA z, ref A)"] = stats.verdict_beats(system, m, "BLEU")
        bf, ba = b["Fluency z"], b["Accuracy z"]
        v[f"{m} tracks Accuracy better than Fluency (z)"] = _combo_verdict(
            [(ba, m, 1), (bf, m, -1)], bf.alpha, f"r({m}, Accuracy z) - r({m}, Fluency z)", stats._unit_text(bf))
    return v


def results(worked: pd.DataFrame, ls: LexicalScores, seg, within, aspects, deen_ls, system, v) -> dict:
    """The results file (JSON-ready)."""
    def col(t, h):
        g = t[t["human"] == h]
        return {m: float(r) for m, r in zip(g["metric"], g["r"])}
    return {
        "worked_examples": worked["kit"].to_dict(),
        "ted": {"n_segments": int(len(ls.frame)), "n_systems": int(ls.frame["system"].nunique()),
                "reference": ls.frame.attrs.get("reference"),
                "pearson_mqm": col(seg, "MQM"), "pearson_mqm_z": col(seg, "MQM z"),
                "within_mqm_z": col(within, "MQM z"), "pearson_fluency_z": col(aspects, "Fluency z"),
                "pearson_accuracy_z": col(aspects, "Accuracy z"), "meteor_inexact_alignments": ls.inexact,
                "signatures": ls.signatures},
        "wmt21_deen": {"n_segments": int(len(deen_ls.frame)), "references": ["ref_A"],
                       "pearson_da": {m: float(r) for m, r in zip(system["metric"], system["r"])},
                       "corpus_bleu": deen_ls.system["BLEU"].to_dict()},
        "verdicts": verdicts_json(v),
    }
