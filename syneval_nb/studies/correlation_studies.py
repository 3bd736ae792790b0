"""Study code of ``notebooks/08_correlation_studies.ipynb``: Liu & Gildea (2005) redone on expert MQM and WMT21 DA.

All five syntactic families through the shared depth study (:mod:`syneval_nb.studies.depth_study`), plus what
only this chapter shows: the per-system tables (the paper correlates within each system), the stability claim
(syntactic metrics lose less than BLEU from depth 1 to the maximum), TED system level, the WMT21 de-en reference
variants (B, A+B next to the chapters' ref A) and the COMET anchor."""
from __future__ import annotations

import pandas as pd
from syneval_nb import stats
from syneval_nb.metrics import syntactic
from syneval_nb.metrics.syntactic import PRIMARY_DEPTH
from syneval_nb.studies import common, depth_study, raters


__all__ = ["FAMILIES", "claims", "run", "results"]

FAMILIES = ("STM", "HWCM", "DSTM", "TKM", "DTKM")


class Chapter08:
    """The depth chapter (``ch``) plus this chapter's own tables; ``verdicts``: the depth chapter's and this
    chapter's own (:func:`claims`), Holm over the chapter."""

    def __init__(self, ch, per_system, ted_system, deen_variants, comet, verdicts, raters=None):
        self.ch, self.per_system, self.ted_system = ch, per_system, ted_system
        self.deen_variants, self.comet, self.verdicts, self.raters = deen_variants, comet, verdicts, raters


PRIMARY_FAMILIES = ("STM", "HWCM", "DSTM")
"""The chapter's primary claims: each family's depth claim "F loses less than BLEU from depth 1 to D" and its
beyond-length twin (Holm runs over these six; every other verdict is exploratory)."""


def stability_claim(family: str, max_depth: int, beyond_length: bool = False) -> str:
    """The claim "``family`` loses less than BLEU from depth 1 to ``max_depth``", raw or beyond length."""
    how = " beyond length (MQM z, literal mean, partial r given the length model)" if beyond_length else \
        " (MQM z, literal mean)"
    return f"{family} loses less than BLEU from depth 1 to {max_depth}{how}"


def claims(families, kernel_variants=(), max_depth: int = 9) -> list[stats.Claim]:
    """This chapter's own claims, beside the depth chapter's (:func:`syneval_nb.studies.depth_study.claims`), on
    the tables ``curves``, ``curves beyond length`` (MQM z, literal mean) and ``TED system`` (:func:`run`). For each
    non-kernel family F: "F loses less than BLEU from depth 1 to ``max_depth``" (test ``loses less``: [r(F-D) -
    r(F-1)] - [r(BLEU-D) - r(BLEU-1)] > 0) and its beyond-length twin, primary for :data:`PRIMARY_FAMILIES`; for
    each family at PRIMARY_DEPTH, each kernel and each of ``kernel_variants``, at TED system level "beats" each
    baseline and "beats permuted human scores". Every other claim is exploratory."""
    n, D, where = stats.metric_name, max_depth, "TED zh-en, mean MQM z, 13 systems"
    out = [stats.Claim(stability_claim(f, D, b), "loses less", n(f, D), n(f, 1), than=(n("BLEU", D), n("BLEU", 1)),
                       on="curves beyond length" if b else "curves", human="MQM z", primary=f in PRIMARY_FAMILIES)
           for f in families if f not in depth_study.KERNELS for b in (False, True)]
    rows = [n(f, None if f in depth_study.KERNELS else PRIMARY_DEPTH) for f in families]
    for m in rows + list(kernel_variants):
        out += [stats.Claim(f"{m} beats {base} at system level ({where})", "beats", m, base, on="TED system")
                for base in depth_study.BASELINES]
        out.append(stats.Claim(f"{m} beats permuted human scores at system level ({where})", "beats the placebo", m,
                               on="TED system"))
    return out


def run(data_dir=None, sample=None, seed: int = 0, max_depth: int = 9, families=FAMILIES, lam: float = 1.0,
        permute_human=None, n_resamples: int = 1000, alpha: float = 0.05, progress: bool = True) -> Chapter08:
    """Everything the chapter shows (see the module docstring)."""
    ch = depth_study.run_chapter(families, data_dir, sample, seed, max_depth, lam, permute_human, n_resamples,
                                 alpha, progress, holm=False)
    kw = dict(n_resamples=n_resamples, seed=seed, alpha=alpha)
    per_system = {h: depth_study.within_system_table(ch.literal, col, **kw)
                  for h, col in {"MQM z": "mqm_z", "Fluency z": "mqm_fluency_z"}.items()}
    lit, ted_mqm = ch.literal, ch.literal.frame.groupby("system")["mqm_z"].mean()  # TED system level: refB, MQM z
    ted_sys = stats.system_table(**depth_study.system_scores(lit, ted_mqm), **kw)
    variants = deen_reference_variants(ch, max_depth, lam, progress, **kw)
    comet = comet_anchor(ch)
    head = stats.system_table(**depth_study.system_scores(lit, ted_mqm, [PRIMARY_DEPTH]), **kw)
    tables = {"curves": ch.curves["literal mean"], "TED system": head,
              "curves beyond length": depth_study.curve_tables(lit, {"MQM z": "mqm_z"}, beyond_length=True, **kw)}
    own = claims(ch.families, [stats.metric_name(k) for k in lit.kernel_variants], max_depth)
    primary = [c for c in own if c.primary]
    # Holm over the chapter (the depth chapter's claims and these), primary: the depth claims and their twins
    ch.verdicts, ch.variants, mine = common.holm_chapter(ch.verdicts, ch.variants,
                                                         stats.decide_claims(own, tables, holm=False),
                                                         primary=[c.claim for c in primary])
    # the primary claims within source segments, on all pairs and on same-rater pairs (issue 35)
    keys = {(f, d) for f in ["BLEU", *(f for f in PRIMARY_FAMILIES if f in ch.families)] for d in (1, max_depth)}
    recheck = {c.claim: (lambda t, c=c: c.decide({c.on: t}), c.on == "curves beyond length") for c in primary}
    rc = raters.same_rater_recheck({k: lit.segment[k] for k in sorted(keys)}, lit.frame, recheck,
                                       depth_study.length_given(lit), **kw) if primary else None
    return Chapter08(ch, per_system, ted_sys, variants, comet, {**ch.verdicts, **mine}, rc)


def deen_reference_variants(ch, max_depth: int, lam: float, progress: bool = True, **kw) -> pd.DataFrame:
    """System-level r with DA z for references A (the chapters' choice), B and A+B, per metric (columns).
    B is the DA system ``HUMAN``: scoring against it measures closeness to one of the rated translations."""
    out = {"A": ch.system_curves.set_index("metric")["r"]}
    segs = ch.deen.segments
    for name, refs in {"B": ("ref_B",), "A+B": ("ref_A", "ref_B")}.items():
        dd = depth_study.score(segs, ch.families, max_depth, lam, False, refs, progress)
        out[name] = stats.system_table(**depth_study.system_scores(dd, ch.deen.da), **kw).set_index("metric")["r"]
    return pd.DataFrame(out)


def comet_anchor(ch) -> dict:
    """Pearson r of the published COMET system scores (refs A and B) with DA z over the 19 MT systems (DA as
    the chapter uses it, so shuffled with ``permute_human``)."""
    c = ch.deen.comet.set_index("system").loc[ch.deen.da.index]
    return {r: stats.pearson(c[f"comet_ref_{r}"], ch.deen.da) for r in "AB"}


def results(c8: Chapter08, worked: dict) -> dict:
    """The results file: worked examples, the depth study, per-system r, system level, anchor and verdicts."""
    ch = c8.ch
    out = {"worked": worked}
    out.update(depth_study.chapter_results(ch))
    out["verdicts"] = common.verdicts_json(c8.verdicts)
    md = ch.params["max_depth"]
    out["headline_verdicts"] = common.headline_verdicts(
        c8.verdicts, *(stability_claim(f, md, b) for f in PRIMARY_FAMILIES for b in (False, True)))
    ted = ch.ted
    pairs = {th: len(stats.better_worse_pairs(ted["mqm"].to_numpy(), ted["seg_id"].to_numpy(), th)[0])
             for th in (0, 1, 5)}
    out["ted"] = {"n_segments": int(ted["seg_id"].nunique()), "n_rows": int(len(ted)),
                  "n_systems": int(ted["system"].nunique()), "mqm_pairs": pairs}
    out["per_system"] = {h: {f"{s}|{m}": float(r) for s, m, r in zip(t["system"], t["metric"], t["r"])}
                         for h, t in c8.per_system.items()}
    out["ted_system_r"] = {m: float(r) for m, r in zip(c8.ted_system["metric"], c8.ted_system["r"])}
    out["deen_system_r_by_reference"] = {k: {m: float(x) for m, x in v.items()} for k, v in c8.deen_variants.items()}
    out["comet_anchor"] = c8.comet
    alloc = {k: x.to_dict("index") if isinstance(x, pd.DataFrame) else x for k, x in raters.rater_allocation(ch.ted).items()}
    out["raters"] = {"allocation": alloc, "same_rater_recheck": common.verdicts_json(c8.raters or {})}
    lam = ch.params["lam"]
    kern = {"tkm": syntactic.TKM, "dtkm": syntactic.DTKM}
    out["signatures"] = {**{f: kern[f](lam).signature() for f in kern if f.upper() in ch.families},
                         **{depth_study.kernel_name(f, x): kern[f](x).signature() for f in kern
                            if f.upper() in ch.families for x in ch.params["kernel_lams"] if x != lam}}
    return out
