"""The claim engine (issue 34: a claim is data): :class:`syneval_nb.stats.Claim` records decided by
:func:`syneval_nb.stats.decide_claims`, checked against verdicts computed here by hand (scipy Pearson on expanded
resamples, numpy percentiles, p = (k + 1) / (B + 1), :func:`syneval_nb.stats.decide`, Holm written out)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import pearsonr

from syneval_nb import stats
from syneval_nb.stats import Claim, decide_claims

B, N_SEG, PER_SEG = 300, 30, 4


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    seg = np.repeat(np.arange(N_SEG), PER_SEG)
    human = rng.normal(size=len(seg))
    rows = {"A": human + rng.normal(scale=1.0, size=len(seg)),   # a good metric
            "B": human + rng.normal(scale=2.5, size=len(seg)),   # a weaker one
            "C": rng.normal(size=len(seg))}                      # noise
    f = human + rng.normal(scale=0.5, size=len(seg))             # a second human score (an "aspect")
    kw = dict(baseline="B", n_resamples=B, seed=0)
    return {"rows": rows, "human": human, "aspect": f, "seg": seg,
            "tables": {"h": stats.correlation_table(rows, human, seg, **kw),
                       "f": stats.correlation_table(rows, f, seg, **kw)}}


def _resampled_r(x, y, seg):
    """Pearson r of x and y in each of the table's resamples (stats.bootstrap_weights: source segments drawn
    with replacement), by scipy on the expanded rows."""
    w = np.vstack(list(stats.bootstrap_weights(len(x), B, 0, groups=seg)))
    out = []
    for counts in w.astype(int):
        idx = np.repeat(np.arange(len(x)), counts)
        out.append(pearsonr(x[idx], y[idx])[0])
    return np.array(out)


def _by_hand(d, estimate, n_units=N_SEG):
    lo, hi = np.percentile(d, [2.5, 97.5])
    p = (np.sum(d <= 0) + 1) / (len(d) + 1)
    return {"statistic": estimate, "ci": [lo, hi], "p": p,
            "verdict": stats.decide([lo, hi], p, 0.05, n_units=n_units)}


def _same(v, want):
    assert v["statistic"] == pytest.approx(want["statistic"], abs=1e-12)
    assert v["ci"] == pytest.approx(want["ci"], abs=1e-9)
    assert v["p"] == pytest.approx(want["p"], abs=1e-12)
    assert v["verdict"] == want["verdict"]


def test_beats_and_correlates_equal_a_bootstrap_computed_here(data):
    x, h, seg = data["rows"], data["human"], data["seg"]
    ra, rb = _resampled_r(x["A"], h, seg), _resampled_r(x["B"], h, seg)
    claims = [Claim("A beats B", "beats", "A", "B", on="h"), Claim("A correlates", "correlates", "A", on="h")]
    v = decide_claims(claims, data["tables"], holm=False)
    assert list(v) == ["A beats B", "A correlates"] and "p_holm" not in v["A beats B"]
    _same(v["A beats B"], _by_hand(ra - rb, pearsonr(x["A"], h)[0] - pearsonr(x["B"], h)[0]))
    _same(v["A correlates"], _by_hand(ra, pearsonr(x["A"], h)[0]))
    assert v["A beats B"]["verdict"] == "holds" and v["A beats B"]["test"] == "beats"
    # one engine, the verdicts module's functions: the same dict as calling them directly
    assert v["A beats B"] == stats.verdict_beats(data["tables"]["h"], "A", "B")


def test_contrasts_edge_and_loses_less(data):
    x, h, f, seg = data["rows"], data["human"], data["aspect"], data["seg"]
    r = {(m, k): _resampled_r(x[m], y, seg) for m in ("A", "B", "C") for k, y in (("h", h), ("f", f))}
    est = {(m, k): pearsonr(x[m], y)[0] for m in ("A", "B", "C") for k, y in (("h", h), ("f", f))}
    claims = [Claim("A's edge over B is larger on f than on h", "edge", "A", "B", on="f", versus="h",
                    labels=("f", "h")),
              Claim("A loses less than C from B", "loses less", "A", "B", on="h", than=("C", "B"))]
    v = decide_claims(claims, data["tables"], holm=False)
    edge = v["A's edge over B is larger on f than on h"]
    d = (r["A", "f"] - r["B", "f"]) - (r["A", "h"] - r["B", "h"])
    _same(edge, _by_hand(d, (est["A", "f"] - est["B", "f"]) - (est["A", "h"] - est["B", "h"])))
    assert edge["statistic_text"] == "[r(A) - r(B)] on f - [r(A) - r(B)] on h"
    # the edge needs A's own edge on f: that interval, computed here
    assert edge["requires"]["ci"] == pytest.approx(list(np.percentile(r["A", "f"] - r["B", "f"], [2.5, 97.5])),
                                                   abs=1e-9)
    d = (r["A", "h"] - r["B", "h"]) - (r["C", "h"] - r["B", "h"])
    _same(v["A loses less than C from B"], _by_hand(d, est["A", "h"] - est["C", "h"]))
    assert "requires" not in v["A loses less than C from B"] or v["A loses less than C from B"]["requires"] is None


def test_an_edge_in_the_claims_own_words(data):
    """``text``: chapter 02 writes its aspect contrast as a gap per metric; the same quantity, computed here."""
    x, h, f, seg = data["rows"], data["human"], data["aspect"], data["seg"]
    r = {(m, k): _resampled_r(x[m], y, seg) for m in ("A", "B") for k, y in (("h", h), ("f", f))}
    gap = lambda m: pearsonr(x[m], f)[0] - pearsonr(x[m], h)[0]  # noqa: E731
    text = "[r(A, f) - r(A, h)] - [r(B, f) - r(B, h)]"
    v = Claim("A tracks f better than h, more than B does", "edge", "A", "B", on="f", versus="h",
              text=text).decide(data["tables"])
    _same(v, _by_hand((r["A", "f"] - r["A", "h"]) - (r["B", "f"] - r["B", "h"]), gap("A") - gap("B")))
    assert v["statistic_text"] == text and text in v["rule"] and text in v["reason"]
    assert Claim("x", "edge", "A", "B", on="f", versus="h").decide(data["tables"])["statistic_text"] != text


def test_holm_over_the_primary_claims_by_hand(data):
    given = stats.verdict_from_samples("difference", "a premise", 0.2, np.linspace(-0.01, 0.4, B), 0.05, "rows",
                                       n_units=50)
    claims = [Claim("given", "given", on="premise", primary=True),
              Claim("A beats B", "beats", "A", "B", on="h", primary=True),
              Claim("A beats the placebo", "beats the placebo", "A", on="h", primary=True),
              Claim("C beats B", "beats", "C", "B", on="h")]
    tables = {**data["tables"], "premise": given}
    raw = decide_claims(claims, tables, holm=False)
    v = decide_claims(claims, tables)
    ps = np.array([raw[c.claim]["p"] for c in claims[:3]])
    order = np.argsort(ps)
    adj = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * ps[order]))
    want = dict(zip([claims[i].claim for i in order], adj))
    for c in claims[:3]:
        assert v[c.claim]["p_holm"] == pytest.approx(want[c.claim]) and v[c.claim]["family_size"] == 3
        req = raw[c.claim].get("requires")
        assert v[c.claim]["verdict"] == stats.decide(raw[c.claim]["ci"], want[c.claim], 0.05,
                                                     req["ci"] if req else None, raw[c.claim].get("n_units"))
    assert v["C beats B"]["verdict"] == "exploratory" and np.isnan(v["C beats B"]["p_holm"])
    assert "not one of the chapter's 3 primary claims" in v["C beats B"]["reason"]
    assert v["given"]["statistic"] == 0.2 and given.get("p_holm") is None  # the chapter's verdict is not changed
    # no primary claim declared: Holm over every claim above the cluster floor
    every = decide_claims([Claim(c.claim, c.test, c.metric, c.baseline, on=c.on) for c in claims], tables)
    assert {x["family_size"] for x in every.values()} == {4}


def test_a_claim_below_the_cluster_floor_is_exploratory():
    rng = np.random.default_rng(1)
    seg = np.repeat(np.arange(10), 5)  # 10 source segments, fewer than stats.MIN_UNITS
    h = rng.normal(size=50)
    t = stats.correlation_table({"A": h + rng.normal(size=50), "B": rng.normal(size=50)}, h, seg, n_resamples=100)
    v = decide_claims([Claim("A beats B", "beats", "A", "B", on="t", primary=True)], {"t": t})
    assert v["A beats B"]["verdict"] == "exploratory" and v["A beats B"]["n_units"] == 10


def test_declarations_are_checked(data):
    with pytest.raises(ValueError, match="unknown test"):
        Claim("x", "wins", "A", "B", on="h")
    with pytest.raises(ValueError, match="needs a baseline"):
        Claim("x", "beats", "A", on="h")
    with pytest.raises(ValueError, match="declared twice"):
        decide_claims([Claim("x", "correlates", "A", on="h")] * 2, data["tables"])
    with pytest.raises(KeyError, match="reads table 'nope'"):
        decide_claims([Claim("x", "correlates", "A", on="nope")], data["tables"])
    c = Claim("x", "correlates", "A", on="h")
    with pytest.raises(AttributeError):
        c.metric = "B"  # frozen: a declaration, not a state
