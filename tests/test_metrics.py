"""syneval_nb.metrics: one face for every family, checked against each family module's own scores on real data
(the first 50 WMT21 de-en segments of UEdin with both references, the shipped Stanford parses and RST trees)."""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from syneval_nb import metrics
from syneval_nb.metrics import lexical
from syneval_nb.metrics import syntactic
from syneval_nb.metrics import discourse
from syneval_nb.trees import rst
from syneval_nb.textio import read_lines
from syneval_nb.trees import read_ptb_lines

N = 50
SYSTEM = "newstest2021.de-en.hyp.UEdin.en"


@pytest.fixture(scope="module")
def real(deen_dir):
    ptb, rst_dir = deen_dir / "parses" / "stanford-pcfg-3.3.1", deen_dir / "parses" / "feng-hirst-0.1.4"
    refs_files = [f"newstest2021.de-en.ref.{k}.en" for k in "AB"]
    hyps = read_lines(deen_dir / "system-outputs" / SYSTEM)[:N]
    streams = [read_lines(deen_dir / f)[:N] for f in refs_files]
    hyp_ptb = read_lines(ptb / f"{SYSTEM}.ptb")[:N]
    ref_ptb = [read_lines(ptb / f"{f}.ptb")[:N] for f in refs_files]
    hyp_rst = rst.load_rst_jsonl(rst_dir / f"{SYSTEM}.jsonl")[:N]
    ref_rst = [rst.load_rst_jsonl(rst_dir / f"{f}.jsonl")[:N] for f in refs_files]
    corpus = metrics.Corpus(hyps, streams, hyp_ptb=hyp_ptb, ref_ptb=ref_ptb, hyp_rst=hyp_rst, ref_rst=ref_rst,
                            ref_layout="streams", cache=False)  # (the @spacy variants parse here, uncached)
    refs = [list(t) for t in zip(*streams)]
    trees_h = read_ptb_lines(hyp_ptb)
    trees_r = [list(t) for t in zip(*[read_ptb_lines(r) for r in ref_ptb])]
    rst_r = [list(t) for t in zip(*ref_rst)]
    return dict(corpus=corpus, hyps=hyps, refs=refs, trees_h=trees_h, trees_r=trees_r, hyp_rst=hyp_rst,
                rst_r=rst_r)


@pytest.fixture(scope="module")
def learned_model(real):
    """A tiny Kulesza-Shieber model trained on the first 30 segments (reference B = human, the system = machine)."""
    from syneval_nb.metrics.learned import FeatureConfig, LearnedMetric, feature_frame

    hyps, refs = real["hyps"][:30], real["refs"][:30]
    X = feature_frame(hyps + [r[1] for r in refs], [[r[0]] for r in refs] * 2, FeatureConfig(), progress=False)
    return LearnedMetric().fit(X, [0] * 30 + [1] * 30)


def given_objects(m, real: dict) -> tuple[list, list]:
    """The corpus as the objects the metric reads, chosen by its ``inputs`` (no test edit for a new metric):
    strings for ``"text"``, nltk trees for ``"ptb"``, spaCy's dependency trees for ``"dep"``, RST trees for
    ``"rst"``."""
    kind = m.inputs[0]
    if kind == "dep" and "dep_h" not in real:
        from syneval_nb.parsers.frontend import parse

        real["dep_h"] = parse(real["hyps"], backend="spacy", cache=False)
        real["dep_r"] = [list(t) for t in zip(*[parse(list(s), backend="spacy", cache=False)
                                                 for s in zip(*real["refs"])])]
    keys = {"text": ("hyps", "refs"), "ptb": ("trees_h", "trees_r"), "dep": ("dep_h", "dep_r"),
            "rst": ("hyp_rst", "rst_r")}[kind]
    return real[keys[0]], real[keys[1]]


def _bp_oracle(name: str, real: dict, learned_model) -> float:
    """The plain family times sacrebleu's own brevity penalty (TKM-BP: issue 37)."""
    from sacrebleu.metrics.bleu import BLEU as SacreBLEU

    plain = metrics.get(name[:-3]).corpus_score(real["trees_h"], real["trees_r"]).score
    c = [len(t.leaves()) for t in real["trees_h"]]
    r = [min((len(x.leaves()) for x in rs if x is not None), key=lambda x, h=h: (abs(x - h), x))
         for h, rs in zip(c, real["trees_r"])]
    return plain * SacreBLEU.compute_bleu([1] * 4, [1] * 4, sum(c), sum(r)).bp


def _learned_oracle(name: str, real: dict, learned_model) -> float:
    """The model's own features, then the mean."""
    from syneval_nb.metrics.learned import FeatureConfig, feature_frame

    X = feature_frame(real["hyps"], real["refs"], FeatureConfig(), progress=False)
    return float(np.mean(learned_model.score_features(X)))


def _chrf_oracle(name: str, real: dict, learned_model) -> float:
    """sacrebleu itself (0-100, its reference streams)."""
    from sacrebleu.metrics import CHRF as SacreCHRF

    streams = [list(t) for t in zip(*real["refs"])]
    return SacreCHRF(word_order=2 if name == "chrF++" else 0).corpus_score(real["hyps"], streams).score / 100


ORACLES = {"chrF": _chrf_oracle, "chrF++": _chrf_oracle, "Learned": _learned_oracle,
           **{n: _bp_oracle for n in ("STM-BP", "DSTM-BP", "HWCM-BP", "TKM-BP", "DTKM-BP")}}
"""Independent checks some metrics have beyond the registry-wide ones (optional: a new metric needs none)."""

@functools.lru_cache(maxsize=1)
def ridge_model():
    """A tiny ridge metric on BLEU and chrF (and the length model), fitted to made-up scores of six segments."""
    from syneval_nb.metrics.learned import fit_ridge, ridge_frame

    hyps = ["the cat sat on the mat", "a dog ran", "the cat is on a mat", "dogs run fast", "a cat sat", "the mat"]
    refs = [["the cat sat on the mat"]] * 3 + [["the dog runs fast"]] * 3
    ms = [metrics.get("bleu"), metrics.get("chrf")]
    X = ridge_frame(metrics.Corpus(hyps, refs, ref_layout="segments"), ms)
    return fit_ridge(X.assign(h=[0.0, -3.0, -1.0, -2.0, -4.0, -5.0]), "h", ms)


OPTIONS = {"Learned": lambda learned_model: {"model": learned_model}, "Ridge": lambda _: {"model": ridge_model()}}
"""Options a registered metric cannot be built without (a trained model); every other metric: its defaults."""


def _get(name, learned_model):
    return metrics.get(name, **OPTIONS.get(name, lambda _: {})(learned_model))


def check_corpus_score(name: str, real: dict, learned_model=None) -> None:
    """The registry-wide checks of one registered metric's corpus score: on the :class:`Corpus` (parse strings)
    equal to the same metric given the objects it reads, its signature, its counts."""
    m = _get(name, learned_model)
    got = m.corpus_score(real["corpus"])
    assert got.name == m.name
    assert got.n == N and got.n_missing == 0
    fresh = _get(name, learned_model)
    assert got.score == pytest.approx(fresh.corpus_score(*given_objects(fresh, real)).score, abs=1e-12)
    if name in ORACLES:
        assert got.score == pytest.approx(ORACLES[name](name, real, learned_model), abs=1e-12)
    assert got.signature == m.signature() and got.signature.startswith(m.name + "|")
    assert got.signature.endswith("|version:syneval-nb-0.1.0") and "nrefs:2" in got.signature
    assert isinstance(m.higher_is_better, bool)


def check_sentence_scores(name: str, real: dict, learned_model=None) -> None:
    """The registry-wide check of one registered metric's sentence scores: the batch equals one segment at a time
    (NIST: its information weights come from all references scored together, so against lexical.NIST)."""
    m = _get(name, learned_model)
    batch = m.sentence_scores(real["corpus"])
    c = real["corpus"]
    if name == "NIST":
        np.testing.assert_allclose(batch, lexical.NIST().sentence_scores(c.hyps, c.refs), rtol=0, atol=1e-12)
        for i in range(0, N, 7):
            assert m.sentence_score(c.hyps[i], c.refs[i]).score == pytest.approx(
                lexical.NIST().sentence_score(c.hyps[i], c.refs[i]).score, abs=1e-12)
        return
    for i in range(0, N, 7):
        seg = metrics.Segment(c.hyps[i], c.refs[i], hyp_ptb=c.hyp_ptb[i], ref_ptb=c.ref_ptb[i],
                              hyp_rst=c.hyp_rst[i], ref_rst=c.ref_rst[i])
        assert m.sentence_score(seg).score == pytest.approx(batch[i], abs=1e-12), i


@pytest.mark.parametrize("name", metrics.names())
def test_corpus_score_equals_family(name, real, learned_model):
    check_corpus_score(name, real, learned_model)


@pytest.mark.parametrize("name", metrics.names())
def test_sentence_scores_equal_sentence_score(name, real, learned_model):
    check_sentence_scores(name, real, learned_model)


def test_a_new_metric_is_one_file_and_one_registry_line(real, monkeypatch):
    """tests/toy_metric.py (unigram recall, not shipped) registered with one line passes every registry-wide
    check above, with no test edit; the registration is undone after the test."""
    from syneval_nb.metrics import registry
    from toy_metric import UnigramRecall, unigram_recall_by_hand

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    monkeypatch.setattr(registry, "_ALIASES", dict(registry._ALIASES))
    registry.register("Unigram-Recall", UnigramRecall, aliases=("unigram recall",))  # the one registry line
    assert "Unigram-Recall" in metrics.names() and metrics.canonical_name("unigram_recall") == "Unigram-Recall"
    check_corpus_score("Unigram-Recall", real)
    check_sentence_scores("Unigram-Recall", real)
    got = metrics.get("unigram recall").corpus_score(real["corpus"])
    assert got.score == pytest.approx(unigram_recall_by_hand(real["hyps"], real["refs"]), abs=1e-12)
    assert got.signature.startswith("Unigram-Recall|case:mixed|nrefs:2|")


def test_the_toy_metric_is_not_shipped():
    assert "Unigram-Recall" not in metrics.names()
    with pytest.raises(metrics.UnknownMetricError):
        metrics.get("unigram recall")


def test_sentence_scores_against_family_sentence_functions(real):
    """Batch values equal the family's sentence-level functions (STM-4 and BLEU per segment)."""
    stm = metrics.get("STM-4").sentence_scores(real["corpus"])
    bleu = metrics.get("bleu").sentence_scores(real["corpus"])
    for i in range(N):
        assert stm[i] == pytest.approx(syntactic.stm(real["trees_h"][i], real["trees_r"][i]).score, abs=1e-12)
        assert bleu[i] == pytest.approx(lexical.BLEU().sentence_score(real["hyps"][i], real["refs"][i]).score,
                                        abs=1e-12)


def test_sentence_result_explains_and_draws(real):
    c = real["corpus"]
    seg = metrics.Segment(c.hyps[0], c.refs[0], hyp_ptb=c.hyp_ptb[0], ref_ptb=c.ref_ptb[0])
    s = metrics.get("STM-4").sentence_score(seg)
    ex = s.explain()
    assert list(ex.columns) == ["depth", "item", "count", "ref_max", "clipped", "matched"]
    # score = mean over depths of clipped/total (effective order or not, all 4 depths exist here)
    frac = ex.groupby("depth").apply(lambda g: g["clipped"].sum() / g["count"].sum(), include_groups=False)
    assert s.score == pytest.approx(frac.mean(), abs=1e-12)
    assert s.draw(2) is not None


def _depth_mean_by_hand(m, t, eff, eps):
    """Liu & Gildea's mean over depths, from the definition: the fraction matches/totals of each depth (0 for an
    empty depth; left out with effective order), a zero fraction replaced by epsilon when one is given."""
    ps = [a / b if b else 0.0 for a, b in zip(m, t) if b or not eff]
    ps = [eps if (p == 0.0 and eps is not None) else p for p in ps]
    return sum(ps) / len(ps) if ps else math.nan


def test_depth_mean_equals_the_definition_by_hand():
    """The one depth mean (metrics.depth_scores), its scalar form (syntactic.depth_score) and the prefix table of
    score_corpus's m_1..m_D columns (syntactic.prefix_scores), against the definition written out by hand."""
    rng = np.random.default_rng(0)
    T = rng.integers(0, 4, size=(200, 5))
    M = np.minimum(rng.integers(0, 4, size=(200, 5)), T)
    for eff in (True, False):
        for eps in (None, 1e-3):
            want = [_depth_mean_by_hand(m, t, eff, eps) for m, t in zip(M, T)]
            np.testing.assert_allclose(metrics.depth_scores(M, T, eff, eps), want, rtol=0, atol=1e-15)
            np.testing.assert_allclose([syntactic.depth_score(m, t, eff, eps) for m, t in zip(M, T)], want,
                                       rtol=0, atol=1e-15)
            table = syntactic.prefix_scores(M, T, eff, eps)
            for d in range(1, 6):
                np.testing.assert_allclose(table[:, d - 1], [_depth_mean_by_hand(m[:d], t[:d], eff, eps)
                                                             for m, t in zip(M, T)], rtol=0, atol=1e-15)
    assert math.isnan(syntactic.depth_score([0, 0], [0, 0], True, None))
    assert syntactic.depth_score([1, 0], [2, 0], False, 1e-3) == pytest.approx((0.5 + 1e-3) / 2, abs=1e-15)


def test_family_defaults_are_taken(real):
    """No default is hard-coded: the registry's objects carry the family constructors' defaults."""
    stm = metrics.get("stm")
    ref = syntactic.STM()
    assert (stm.depth, stm.effective_order) == (ref.depth, ref.effective_order)
    assert metrics.get("hwcm").epsilon == syntactic.HWCM().epsilon
    assert metrics.get("bleu").signature() == lexical.BLEU().signature()
    assert metrics.get("hwcm", depth=2, effective_order=False).effective_order is False


@pytest.mark.parametrize("spec,want", [
    ("bleu", "BLEU"), ("BLEU", "BLEU"), ("ter", "TER"), ("meteor", "METEOR"), ("f_measure", "F-measure"),
    ("rouge-s", "ROUGE-S"), ("stm_4", "STM-4"), ("STM-4", "STM-4"), (("STM", 4), "STM-4"), ("stm9", "STM-9"),
    ("hwcm", f"HWCM-{syntactic.DEFAULT_DEPTH}"), ("HWCM-2", "HWCM-2"), ("dstm_3", "DSTM-3"), ("tkm", "TKM"),
    ("DTKM", "DTKM"), ("dr", "DR"), ("dr_lex", "DR-lex"), ("DR-LEX", "DR-lex"), ("ks04", "Learned"),
])
def test_registry_resolves_every_spelling(spec, want):
    assert metrics.canonical_name(spec) == want


def test_get_with_depth_option():
    assert metrics.get("hwcm", depth=4).name == "HWCM-4" == metrics.get("HWCM-4").name
    assert metrics.get("stm", depth=7).name == "STM-7"
    with pytest.raises(metrics.UnknownMetricError, match="depth 4 but depth=5"):
        metrics.get("STM-4", depth=5)


@pytest.mark.parametrize("bad", ["blue", "stm-x", "tkm_3", "", ("BLEU", 4)])
def test_bad_names_list_valid_names(bad):
    with pytest.raises(metrics.UnknownMetricError) as e:
        metrics.get(bad)
    msg = str(e.value)
    assert "BLEU" in msg and ("STM" in msg)


def test_unknown_name_message():
    with pytest.raises(metrics.UnknownMetricError, match=r"unknown metric 'blue'; valid names: BLEU, NIST, .*"
                                                         r"STM\[-D\].*DR-lex"):
        metrics.get("blue")


def test_wrong_reference_layout_refused(real):
    hyps, refs = real["hyps"], real["refs"]
    streams = [list(s) for s in zip(*refs)]  # sacrebleu's layout: 2 streams of 50
    with pytest.raises(metrics.ReferenceLayoutError, match="refs has 2 entries for 50 segments.*sacrebleu's layout"):
        metrics.get("bleu").corpus_score(hyps, streams)
    a = metrics.get("bleu").corpus_score(hyps, streams, ref_layout="streams").score
    b = metrics.get("bleu").corpus_score(hyps, refs).score
    assert a == b
    with pytest.raises(metrics.ReferenceLayoutError, match="one entry per segment"):
        metrics.get("bleu").corpus_score(hyps, [s[:10] for s in streams], ref_layout="streams")


def test_bleu_equals_sacrebleu(real):
    import sacrebleu

    streams = [list(s) for s in zip(*real["refs"])]
    want = sacrebleu.corpus_bleu(real["hyps"], streams).score
    assert metrics.get("bleu").corpus_score(real["hyps"], streams, ref_layout="streams").score * 100 == \
        pytest.approx(want, abs=1e-9)


def test_unparsed_hypothesis_counts_with_the_worst_value(real):
    """Issue 24: an unparsed hypothesis stays in the corpus score, as no match out of its number of tokens at every
    depth (sentence score 0), so making a line unparseable cannot raise a system's score."""
    c = real["corpus"]
    hp = list(c.hyp_ptb)
    hp[3] = "(())"
    c2 = metrics.Corpus(c.hyps, c.refs, hyp_ptb=hp, ref_ptb=c.ref_ptb)
    stm = metrics.get("STM-4")
    s = stm.corpus_score(c2)
    assert s.n_missing == 0 and s.n == N
    keep = [i for i in range(N) if i != 3]
    rest = stm.segment_stats([real["trees_h"][i] for i in keep], [real["trees_r"][i] for i in keep]).sum(axis=0)
    n_tok = len(c.hyps[3].split())
    assert n_tok > 0
    by_hand = np.mean([rest[d] / (rest[4 + d] + n_tok) for d in range(4)])  # the paper's mean of 4 precisions
    assert s.score == pytest.approx(by_hand, abs=1e-12)
    assert s.score < stm.corpus_score(c).score
    assert stm.sentence_scores(c2)[3] == 0.0
    metrics.prepare([c2], ("ptb",))  # parses present: nothing to parse, failures recorded
    assert c2.failures[("ptb", "hyp")] == [3]


def test_learned_needs_a_model():
    with pytest.raises(ValueError, match="needs a trained model"):
        metrics.get("learned")
    with pytest.raises(ValueError, match="needs a trained model: get\\('Ridge', model=path or RidgeMetric\\)"):
        metrics.get("ridge")
    with pytest.raises(ValueError, match="a Ridge model, not Learned"):
        metrics.get("learned", model=ridge_model())


# -- the registry behind combine's base metrics and the learned metric's syntactic features ---------------------


@pytest.fixture(scope="module")
def ted_small(shared_data):
    """TED zh-en, the first 6 source segments of the first 2 MT systems (12 rows), refB and its parse; row 1's
    hypothesis parse removed (an unparsed sentence)."""
    from syneval_nb.data import load_ted_zhen_mqm

    ted = load_ted_zhen_mqm()
    mt = ted[~ted["is_human"]]
    f = mt[mt["seg_id"].isin(sorted(mt["seg_id"].unique())[:6])]
    f = f[f["system"].isin(sorted(f["system"].unique())[:2])].reset_index(drop=True)
    ptb = f["ptb"].tolist()
    ptb[1] = None
    return dict(frame=f, ptb=ptb, refs=[[r] for r in f["refB"]], ptb_refs=[[p] for p in f["ptb_refB"]])


def test_combine_base_scores_through_the_registry_equal_the_former_path(ted_small):
    """combine.base_scores builds every base metric with metrics.get: segment and per-system corpus scores equal
    the former path (syntactic.score_corpus once per system; the lexical classes with default options, each system
    alone) to 1e-12, with the same NaN for the unparsed row; values measured before the change pinned."""
    import warnings

    from syneval_nb.metrics import combine
    f, ptb, refs, prefs = ted_small["frame"], ted_small["ptb"], ted_small["refs"], ted_small["ptb_refs"]
    systems = f["system"].tolist()
    seg, corpus = combine.base_scores(f["target"].tolist(), refs, ptb, prefs, systems=systems, progress=False)
    assert list(seg.columns) == list(combine.BASE_METRICS)
    # issue 24: the unparsed row counts with the worst values (HWCM: epsilon)
    assert seg[["STM", "HWCM", "TKM"]].isna().sum().tolist() == [0, 0, 0]
    assert seg.loc[1, ["STM", "HWCM", "TKM"]].tolist() == [0.0, syntactic.EPSILON, 0.0]
    for s, idx in f.groupby("system").indices.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no segment is left out: nothing to warn about
            old = syntactic.score_corpus([ptb[i] for i in idx], [prefs[i] for i in idx], ("stm", "hwcm", "tkm"), 4,
                                         progress=False, hyp_texts=[f["target"][i] for i in idx])
        for col, name in (("stm_4", "STM"), ("hwcm_4", "HWCM"), ("tkm", "TKM")):
            np.testing.assert_allclose(seg[name].to_numpy()[idx], old[col].to_numpy(float), rtol=0, atol=1e-12)
            assert corpus.loc[s, name] == pytest.approx(old.attrs["corpus"][col], abs=1e-12)
    groups = f.groupby("system").indices
    for name, fresh in {"BLEU": lexical.BLEU(), "NIST": lexical.NIST(), "TER": lexical.TER(),
                        "ROUGE-S": lexical.RougeS(), "METEOR-ex": lexical.MeteorExact(), "GTM": lexical.GTM()}.items():
        # fresh objects of the lexical classes with default options, each system scored alone
        for s, idx in groups.items():
            h, r = [f["target"][i] for i in idx], [refs[i] for i in idx]
            np.testing.assert_allclose(seg[name].to_numpy()[idx], fresh.sentence_scores(h, r), rtol=0, atol=1e-12)
            assert corpus.loc[s, name] == pytest.approx(fresh.corpus_score(h, r).score, abs=1e-12)
    # measured with the former path before the change
    # Borderline holds the unparsed row 1: its corpus STM-4 was 0.5329352608839792 with the row left out; now the
    # row adds its tokens as unmatched items at every depth, by hand from the other rows' summed statistics
    idx = f.groupby("system").indices["Borderline"]
    assert 1 in idx
    sub = [i for i in idx if i != 1]
    rest = syntactic.STM(4).segment_stats(metrics.Corpus(
        [f["target"][i] for i in sub], [refs[i] for i in sub], hyp_ptb=[ptb[i] for i in sub],
        ref_ptb=[prefs[i] for i in sub])).sum(axis=0)
    n_tok = len(f["target"][1].split())
    assert corpus.loc["Borderline", "STM"] == pytest.approx(np.mean([rest[d] / (rest[4 + d] + n_tok)
                                                                     for d in range(4)]), abs=1e-12)
    assert corpus.loc["Borderline", "STM"] == pytest.approx(0.43216807648169403, abs=1e-12)
    assert corpus.loc["DIDI-NLP", "HWCM"] == pytest.approx(0.5300051983746784, abs=1e-12)
    assert corpus.loc["DIDI-NLP", "TKM"] == pytest.approx(0.033231103701347214, abs=1e-12)
    assert seg.loc[0, "HWCM"] == pytest.approx(0.3301171529619805, abs=1e-12)
    assert not combine.higher_is_better("TER") and combine.higher_is_better("STM")
    assert combine.BASE_METRICS["STM"].kind == "ptb" and combine.BASE_METRICS["GTM"].kind == "text"


def test_learned_syntactic_features_through_the_registry_equal_the_former_path(ted_small):
    """learned.syntactic_frame takes STM/HWCM/TKM from the registry (one STM-D / HWCM-D pass, depths 1..D from its
    statistics): equal to syntactic.score_corpus's columns to 1e-12; values measured before the change pinned."""
    from syneval_nb.metrics import learned
    f, prefs = ted_small["frame"], ted_small["ptb_refs"]
    got = learned.syntactic_frame(f["ptb"].tolist(), prefs, depth=3)
    assert list(got.columns) == learned.syntactic_feature_names(3)
    old = syntactic.score_corpus(f["ptb"].tolist(), prefs, ("stm", "hwcm", "tkm"), 3, progress=False)
    np.testing.assert_allclose(got.to_numpy(), old[list(got.columns)].to_numpy(float), rtol=0, atol=1e-12)
    assert got.iloc[0].to_dict() == pytest.approx(
        {"stm_1": 0.8166666666666667, "stm_2": 0.6916666666666667, "stm_3": 0.5563492063492063, "hwcm_1": 0.7,
         "hwcm_2": 0.5224137931034483, "hwcm_3": 0.4123784261715296, "tkm": 2.262108070847038e-09}, abs=1e-12)
    # issue 24: the unparsed hypothesis (row 1) gets the worst values, not an error
    got = learned.syntactic_frame(ted_small["ptb"], prefs, depth=3)
    assert got.iloc[1].to_dict() == {"stm_1": 0.0, "stm_2": 0.0, "stm_3": 0.0, "hwcm_1": syntactic.EPSILON,
                                     "hwcm_2": syntactic.EPSILON, "hwcm_3": syntactic.EPSILON, "tkm": 0.0}
    bad_ref = [list(r) for r in prefs]
    bad_ref[2] = [None]
    with pytest.raises(ValueError, match="1 hypotheses have no syntactic features.*first at row 2"):
        learned.syntactic_frame(f["ptb"].tolist(), bad_ref, depth=3)
