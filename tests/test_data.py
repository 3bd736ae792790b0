"""Loaders: MQM against the published averages, WMT21 name mapping, downloads from a file:// mirror, own files."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
from scipy import stats as sps

from syneval_nb import data, paths


@pytest.fixture(scope="module")
def ted(shared_data: Path) -> pd.DataFrame:
    return data.load_ted_zhen_mqm(shared_data)


@pytest.fixture(scope="module")
def wmt(shared_data: Path) -> data.Wmt21DeEn:
    return data.load_wmt21_deen(shared_data)


# ---------------------------------------------------------------- MQM

def test_mqm_weights_by_hand():
    assert data.mqm_weight("Accuracy/Mistranslation", "Major") == 5
    assert data.mqm_weight("Fluency/Punctuation", "Major") == 5
    assert data.mqm_weight("Fluency/Punctuation", "Minor") == 0.1
    assert data.mqm_weight("Fluency/Grammar", "Minor") == 1
    assert data.mqm_weight("Non-translation!", "Major") == 25
    assert data.mqm_weight("No-error", "No-error") == 0
    with pytest.raises(ValueError, match="severity"):
        data.mqm_weight("Fluency/Grammar", "Critical")


def test_ted_shape_and_humans(ted):
    assert len(ted) == 15 * 529 == 7935
    assert ted.groupby("system").size().eq(529).all()
    assert sorted(ted.loc[ted.is_human, "system"].unique()) == ["ref", "refB"]
    assert ted["n_raters"].eq(1).all()  # one rater per (system, segment) in this set (README)
    for col in ["system", "doc", "seg_id", "source", "target", "mqm", "mqm_fluency", "mqm_accuracy", "n_raters",
                "is_human", "ref", "refB", "ptb", "ptb_ref", "ptb_refB", "rst_row"]:
        assert col in ted.columns
    # the ref/refB columns are the human rows' targets of the same segment
    r = ted[ted.system == "refB"].set_index("seg_id")["target"]
    assert (ted["refB"] == ted["seg_id"].map(r)).all()


def test_mqm_equals_published_on_every_segment(ted):
    scored = ted.dropna(subset=["mqm_published"])
    assert len(scored) == 7935  # 12645 published rows, 4710 of them 'None' (not annotated)
    np.testing.assert_allclose(scored["mqm"], scored["mqm_published"], atol=1e-9)


def test_mqm_system_means_match_readme(ted):
    means = -ted.groupby("system")["mqm"].mean()
    assert means["refB"] == pytest.approx(0.42, abs=0.005)  # README: ref.B 0.42, rank 1
    assert means["ref"] == pytest.approx(5.52, abs=0.005)  # README: ref.A 5.52, rank 15
    mt = means.drop(["ref", "refB"])
    assert len(mt) == 13 and mt.min() == pytest.approx(1.65, abs=0.005) and mt.max() == pytest.approx(2.99, abs=0.005)


def test_mqm_parts_by_hand(ted, shared_data):
    # Borderline seg 84 has four error rows, one rater (mqm_ted_zhen.tsv): Style/Awkward Major, Fluency/Grammar
    # Major, Style/Awkward Major, Accuracy/Mistranslation Major -> total 4 x 5 = 20, fluency 5, fluency+style 15,
    # accuracy 5 (negated: higher is better). The published average is also -20.0.
    e = pd.read_csv(shared_data / data.TED_ZHEN / "mqm_ted_zhen.tsv", sep="\t", quoting=3, dtype=str)
    rows = e[(e.system == "Borderline") & (e.seg_id == "84")]
    assert sorted(zip(rows.category, rows.severity)) == sorted([
        ("Style/Awkward", "Major"), ("Fluency/Grammar", "Major"), ("Style/Awkward", "Major"),
        ("Accuracy/Mistranslation", "Major")])
    row = ted[(ted.system == "Borderline") & (ted.seg_id == 84)].iloc[0]
    assert (row.mqm, row.mqm_fluency, row.mqm_fluency_style, row.mqm_accuracy) == (-20.0, -5.0, -15.0, -5.0)
    assert row.n_raters == 1 and row.n_errors == 4 and row.mqm_published == -20.0


def test_rater_normalized_mqm_matches_an_independent_groupby(ted, shared_data):
    """mqm_z / mqm_fluency_z / mqm_accuracy_z recomputed here from the raw error file: per (system, segment,
    rater) negated weight sums, standardized within each rater over all rows it scored (numpy, ddof=1), averaged
    over the segment's raters."""
    e = pd.read_csv(shared_data / data.TED_ZHEN / "mqm_ted_zhen.tsv", sep="\t", quoting=3, dtype=str)
    e["w"] = [data.mqm_weight(c, v) for c, v in zip(e.category, e.severity)]
    cat = e.category.str.lower()
    e["flu"] = e.w.where(cat.str.startswith("fluency/"), 0.0)
    e["acc"] = e.w.where(cat.str.startswith("accuracy/"), 0.0)
    e["seg_id"] = e.seg_id.astype(int)
    per = -e.groupby(["system", "seg_id", "rater"])[["w", "flu", "acc"]].sum()
    z = per.copy()
    raters = per.index.get_level_values("rater")
    n_systems = per.reset_index().groupby("rater")["system"].nunique()
    alone = set(n_systems[n_systems == 1].index)
    assert alone == {"rater8"}  # rater8 scored refB only (177 segments): its z is on the other raters' pooled scale
    pooled = per[~raters.isin(alone)].to_numpy()
    for rater in raters.unique():
        sel = raters == rater
        block = per[sel].to_numpy()
        ref = pooled if rater in alone else block
        z.loc[sel] = (block - ref.mean(axis=0)) / ref.std(axis=0, ddof=1)
    want = z.groupby(level=["system", "seg_id"]).mean()
    got = ted.set_index(["system", "seg_id"]).loc[want.index]
    np.testing.assert_allclose(got.mqm_z, want.w, atol=1e-12)
    np.testing.assert_allclose(got.mqm_fluency_z, want.flu, atol=1e-12)
    np.testing.assert_allclose(got.mqm_accuracy_z, want.acc, atol=1e-12)
    assert len(want) == 7935 and (ted.n_raters == 1).all() and ted.rater.nunique() == 9
    # the rater confound of issue 14: rater means far apart, and the rater mean correlates with MQM
    means = ted.groupby("rater").mqm.mean()
    assert (round(means.min(), 3), means.idxmin(), round(means.max(), 3)) == (-5.239, "rater3", -0.255)
    assert (ted.rater == "rater3").sum() == 2090
    r_mean = sps.pearsonr(ted.groupby("rater").mqm.transform("mean"), ted.mqm)[0]
    assert round(r_mean, 3) == 0.470
    # after normalization every rater but the confounded rater8 has mean 0 (one rater per row here)
    np.testing.assert_allclose(ted[ted.rater != "rater8"].groupby("rater").mqm_z.mean(), 0, atol=1e-12)
    assert ted[ted.rater == "rater8"].mqm_z.mean() == pytest.approx(0.5485, abs=1e-4)  # measured


def test_single_system_raters_on_ted(ted):
    """rater8 scored only refB: 177 segments; every other rater scored several systems."""
    alone = data.single_system_raters(ted)
    assert alone.to_dict() == {"rater8": "refB"}
    assert ((ted.rater == "rater8") & (ted.system == "refB")).sum() == (ted.rater == "rater8").sum() == 177
    with pytest.raises(ValueError, match="missing \\['rater'\\]"):
        data.single_system_raters(ted.drop(columns="rater"))


def test_single_system_rater_does_not_erase_the_system_difference(ted):
    """Within rater8 alone refB's z minus the MT mean would be about 0 on its segments (-0.008) although raw MQM
    puts refB 2.0 points above MT there; on the pooled scale its advantage stays (measured +0.540, against +0.313
    on the segments other raters scored). No MT row is scored by rater8, so no MT row's z depends on the rule."""
    h = ted[ted.system == "refB"].set_index("seg_id")
    mt = ted[~ted.is_human].groupby("seg_id")[["mqm", "mqm_z"]].mean().loc[h.index]
    on8 = (h.rater == "rater8").to_numpy()
    assert (h.mqm - mt.mqm)[on8].mean() == pytest.approx(2.008, abs=1e-3)
    assert (h.mqm_z - mt.mqm_z)[on8].mean() == pytest.approx(0.5403, abs=1e-4)
    assert (h.mqm_z - mt.mqm_z)[~on8].mean() == pytest.approx(0.3130, abs=1e-4)
    assert not (ted[~ted.is_human].rater == "rater8").any()
    # the named variant "every rater" (the plain within-rater z): rater8's rows differ, every other row is equal
    every = data.load_ted_zhen_mqm(rater_offsets="every rater")
    changed = (every.mqm_z != ted.mqm_z).to_numpy()
    assert set(ted.rater[changed]) == {"rater8"} and changed.sum() == 177
    e = every[every.system == "refB"].set_index("seg_id")
    e_mt = every[~every.is_human].groupby("seg_id").mqm_z.mean().loc[e.index]
    assert (e.mqm_z - e_mt)[on8].mean() == pytest.approx(-0.0083, abs=1e-4)
    with pytest.raises(ValueError, match="rater_offsets must be one of"):
        data.mqm_scores(pd.DataFrame(columns=["system", "seg_id", "rater", "category", "severity", "weight"]),
                        rater_offsets="pooled")


def test_rater_normalized_mqm_by_hand():
    """Two raters. A scores (s1, 0) Accuracy Major (-5), (s1, 1) no error (0), (s2, 0) Fluency Minor (-1): mean
    -2, sd sqrt((9 + 4 + 1) / 2) = sqrt(7). B scores (s1, 0) Fluency Minor (-1) and (s2, 1) no error (0): mean
    -0.5, sd sqrt(0.5). (s1, 0) has both raters: mqm (-5 - 1) / 2 = -3, mqm_z = (-3/sqrt(7) - 0.5/sqrt(0.5)) / 2.
    Fluency: A's scores 0, 0, -1 (mean -1/3, sd 1/sqrt(3)); B's -1, 0 -> (s1, 0): (sqrt(3)/3 - sqrt(0.5)) / 2.
    Accuracy: B's scores 0, 0 do not vary: z = 0."""
    rows = [("s1", 0, "A", "Accuracy/Mistranslation", "Major"), ("s1", 1, "A", "No-error", "No-error"),
            ("s2", 0, "A", "Fluency/Grammar", "Minor"), ("s1", 0, "B", "Fluency/Spelling", "Minor"),
            ("s2", 1, "B", "No-error", "No-error")]
    e = pd.DataFrame(rows, columns=["system", "seg_id", "rater", "category", "severity"])
    e["weight"] = [data.mqm_weight(c, v) for c, v in zip(e.category, e.severity)]
    m = data.mqm_scores(e).set_index(["system", "seg_id"])
    r = m.loc[("s1", 0)]
    assert r.rater == "A,B" and r.n_raters == 2 and r.mqm == -3.0
    assert r.mqm_z == pytest.approx((-3 / math.sqrt(7) - 0.5 / math.sqrt(0.5)) / 2)
    assert r.mqm_fluency_z == pytest.approx((math.sqrt(3) / 3 - math.sqrt(0.5)) / 2)
    a_acc = np.array([-5.0, 0.0, 0.0])  # A's accuracy scores: mean -5/3, sd sqrt(25/3)
    assert r.mqm_accuracy_z == pytest.approx(((-5 + 5 / 3) / math.sqrt(25 / 3) + 0.0) / 2)
    assert m.loc[("s1", 1)].mqm_z == pytest.approx(2 / math.sqrt(7)) and m.loc[("s1", 1)].rater == "A"
    assert m.loc[("s2", 1)].mqm_z == pytest.approx(0.5 / math.sqrt(0.5)) and m.loc[("s2", 1)].rater == "B"
    assert m.loc[("s2", 1)].mqm_accuracy_z == 0.0
    assert a_acc.std(ddof=1) == pytest.approx(math.sqrt(25 / 3))


def test_single_system_rater_on_the_pooled_scale():
    """A scores s1 and s2 (-4, 0, -2, 0: mean -1.5, sd sqrt(11/3)); C scores s2 only (-1 and 0). C's offset is
    confounded with s2, so C's rows use A's scale: z = (-1 + 1.5) / sqrt(11/3) and 1.5 / sqrt(11/3), not +-0.707.
    A's z is what it would be without C."""
    rows = [("s1", 0, "A", "Accuracy/Mistranslation", "Minor"), ("s1", 0, "A", "Accuracy/Omission", "Minor"),
            ("s1", 0, "A", "Fluency/Grammar", "Minor"), ("s1", 0, "A", "Fluency/Spelling", "Minor"),
            ("s1", 1, "A", "No-error", "No-error"), ("s2", 0, "A", "Fluency/Grammar", "Minor"),
            ("s2", 0, "A", "Accuracy/Addition", "Minor"), ("s2", 1, "A", "No-error", "No-error"),
            ("s2", 2, "C", "Fluency/Grammar", "Minor"), ("s2", 3, "C", "No-error", "No-error")]
    e = pd.DataFrame(rows, columns=["system", "seg_id", "rater", "category", "severity"])
    e["weight"] = [data.mqm_weight(c, v) for c, v in zip(e.category, e.severity)]
    assert data.single_system_raters(e).to_dict() == {"C": "s2"}
    m = data.mqm_scores(e).set_index(["system", "seg_id"])
    sd = math.sqrt(11 / 3)
    assert np.array([-4.0, 0.0, -2.0, 0.0]).std(ddof=1) == pytest.approx(sd)
    assert m.loc[("s2", 2)].mqm_z == pytest.approx(0.5 / sd) and m.loc[("s2", 3)].mqm_z == pytest.approx(1.5 / sd)
    assert m.loc[("s1", 0)].mqm_z == pytest.approx(-2.5 / sd)
    alone = data.mqm_scores(e[e.rater == "A"]).set_index(["system", "seg_id"])
    np.testing.assert_allclose(m.loc[alone.index].mqm_z, alone.mqm_z, atol=1e-12)
    # every rater confounded (one system each): the pooled scale of all rows
    only = data.mqm_scores(e[e.system == "s2"].assign(rater="C")).set_index(["system", "seg_id"])
    assert only.mqm_z.mean() == pytest.approx(0.0, abs=1e-12)


def _leaves(ptb: str) -> list[str]:
    return re.findall(r"\(([^()\s]+) ([^()\s]+)\)", ptb)


def test_ted_parses_are_aligned(ted):
    # first word of the target equals the first leaf of its parse (PTB escapes aside) on nearly every row
    ok = 0
    for tgt, ptb in zip(ted["target"], ted["ptb"]):
        first = _leaves(ptb)[0][1]
        ok += tgt.split()[0].startswith(first.replace("``", '"')[:1])
    assert ok / len(ted) > 0.97


# ---------------------------------------------------------------- WMT21

def test_wmt21_segments(wmt):
    s = wmt.segments
    assert len(s) == 19 * 1000 and s["system"].nunique() == 19
    assert set(s["system"]) == set(data.WMT21_SYSTEMS)
    assert s["seg_id"].min() == 0 and s["seg_id"].max() == 999
    for col in ["system", "seg_id", "source", "target", "ref_A", "ref_B", "ptb", "ptb_ref_A", "ptb_ref_B"]:
        assert col in s.columns
    first = s[(s.system == "UEdin") & (s.seg_id == 0)].iloc[0]
    assert first.ptb_ref_A.startswith("(ROOT (S (NP (NNP Biker))")
    assert first.ref_A.startswith("Biker reacts lightning fast")


def test_wmt21_names_map(wmt):
    assert data.wmt21_system_name("Nemo.7") == "NVIDIA-NeMo"
    assert data.wmt21_system_name("UEdin.9") == "UEdin"
    assert data.wmt21_system_name("VolcTrans-GLAT.10") == "VolcTrans-GLAT"
    assert data.wmt21_system_name("HUMAN.0") == "ref-B"
    da = wmt.system_da
    assert set(da.loc[~da.is_human, "system"]) == set(data.WMT21_SYSTEMS)
    assert set(wmt.seg_da_unaligned["system"]) == set(data.WMT21_SYSTEMS) | {"ref-B"}
    assert set(wmt.comet["system"]) == set(data.WMT21_SYSTEMS) | {"ref-A", "ref-B"}


def test_comet_anchor(wmt):
    # shared README: against DA z over the 19 MT systems, COMET (ref-A) has Pearson 0.361
    m = wmt.system_da.merge(wmt.comet, on="system")
    m = m[~m.is_human]
    assert len(m) == 19
    assert sps.pearsonr(m.comet_ref_A, m.da_z)[0] == pytest.approx(0.361, abs=0.0005)


def test_human_is_not_the_displayed_reference(shared_data):
    # evidence for HUMAN = ref-B: the REF quality-control items (displayed reference as candidate) score high,
    # HUMAN's ordinary items score like an average MT system.
    d = pd.read_csv(shared_data / "wmt21-deen" / "humaneval" / "ad-deen-good-stnd.csv", sep=r"\s+")
    ref_z = d.loc[d.type == "REF", "score"].mean()
    human_z = d.loc[(d.type == "SYSTEM") & d.sys_id.str.startswith("HUMAN"), "score"].mean()
    assert ref_z == pytest.approx(0.812, abs=0.001)
    assert human_z == pytest.approx(-0.068, abs=0.001)


def test_segment_da_does_not_follow_lines(wmt):
    """Reproduce the README's warning: with SID = line + 1, sentence chrF does not order systems like DA."""
    seg = wmt.seg_da_unaligned
    seg = seg[seg.system != "ref-B"]
    s = wmt.segments
    text = dict(zip(zip(s.system, s.seg_id), zip(s.target, s.ref_A)))
    taus = []
    for sid, g in seg[seg.sid <= 150].groupby("sid"):
        if len(g) < 8:
            continue
        chrf = [sacrebleu.sentence_chrf(text[sy, sid - 1][0], [text[sy, sid - 1][1]]).score for sy in g.system]
        t = sps.kendalltau(chrf, g.da_raw)[0]
        if np.isfinite(t):
            taus.append(t)
    assert len(taus) > 100
    assert abs(np.mean(taus)) < 0.06  # a real alignment gives clearly positive values (~0.2-0.3)
    assert "unaligned" in wmt.seg_da_warning


# ---------------------------------------------------------------- downloads

def _mirror(shared_data: Path, root: Path) -> str:
    """A file:// mirror laid out like {base}/{repo}/raw/{commit}/{remote path}, from the shared copy. The whole
    newstest2021 zh-en texts, which the shared copy does not hold, are rebuilt: its 650 lines at their
    ``wmt_seg_id``, a placeholder on every other of the 1948 lines."""
    for name, files in data.SOURCES.items():
        src_dir = shared_data / name
        for rf in files:
            dest = root / rf.repo / "raw" / rf.commit / rf.remote
            dest.parent.mkdir(parents=True, exist_ok=True)
            if (src_dir / rf.local).is_file():
                dest.symlink_to(src_dir / rf.local)
                continue
            seg = pd.read_csv(src_dir / "segments.tsv", sep="\t", quoting=3, dtype=str, keep_default_na=False)
            stem = rf.local.split(".hyp.")[-1][:-3] if ".hyp." in rf.local else "ref-A"
            kept = list(seg["source"]) if rf.local.endswith(".zh") else data.read_lines(src_dir / f"{stem}.en")
            lines = [f"not rated {i}" for i in range(1, 1949)]
            for i, t in zip(seg["wmt_seg_id"].astype(int), kept):
                lines[i - 1] = t
            dest.write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    return root.as_uri()


def test_download_from_mirror(shared_data, tmp_path):
    base = _mirror(shared_data, tmp_path / "mirror")
    for name in data.SOURCES:
        got = data.download_dataset(name, tmp_path / "dl", base_url=base)
        for rf in data.SOURCES[name]:
            if not rf.local.startswith("raw/"):  # (newstest2021 zh-en's whole texts: not in the shared copy)
                assert (got / rf.local).read_bytes() == (shared_data / name / rf.local).read_bytes()
    # the derived texts.tsv has the same rows as the shared one (the parses' alignment)
    a = pd.read_csv(tmp_path / "dl" / "ted-zhen-mqm" / "texts.tsv", sep="\t", quoting=3, dtype=str)
    b = pd.read_csv(shared_data / "ted-zhen-mqm" / "texts.tsv", sep="\t", quoting=3, dtype=str)
    pd.testing.assert_frame_equal(a, b)
    with pytest.raises(OSError, match="could not download"):
        data.download_dataset("wmt21-deen", tmp_path / "dl2", base_url=(tmp_path / "nowhere").as_uri())
    with pytest.raises(ValueError, match="unknown data set"):
        data.download_dataset("wmt99", tmp_path)


def test_download_tries_alternate_names(shared_data, tmp_path):
    """The MQM repository also names the error file mqm-ted_zhen.tsv: a mirror with only that name still works."""
    base = _mirror(shared_data, tmp_path / "mirror")
    rf = next(f for f in data.SOURCES["ted-zhen-mqm"] if f.local == "mqm_ted_zhen.tsv")
    primary = tmp_path / "mirror" / rf.repo / "raw" / rf.commit / rf.remote
    primary.rename(primary.with_name("mqm-ted_zhen.tsv"))
    got = data.download_dataset("ted-zhen-mqm", tmp_path / "dl", base_url=base)
    assert (got / "mqm_ted_zhen.tsv").read_bytes() == (shared_data / "ted-zhen-mqm" / "mqm_ted_zhen.tsv").read_bytes()


def test_folder_none_downloads_into_cache(shared_data, tmp_path, monkeypatch):
    base = _mirror(shared_data, tmp_path / "mirror")
    monkeypatch.setattr(paths, "shared_data_dir", lambda: None)
    monkeypatch.delenv("SYNEVAL_NB_DATA", raising=False)
    monkeypatch.setenv("SYNEVAL_NB_CACHE", str(tmp_path / "cache"))
    ted = data.load_ted_zhen_mqm(base_url=base)
    assert (tmp_path / "cache" / "data" / "ted-zhen-mqm" / "mqm_ted_zhen.tsv").is_file()
    assert len(ted) == 7935 and ted["ptb"].isna().all()  # no parses in the public repositories
    w = data.load_wmt21_deen(base_url=base)
    assert len(w.segments) == 19000 and w.segments["ptb"].isna().all()


def test_parse_jobs(shared_data, tmp_path):
    base = _mirror(shared_data, tmp_path / "mirror")
    data.download_dataset("ted-zhen-mqm", tmp_path / "dl", base_url=base)
    [(src, dest)] = data.parse_jobs("ted-zhen-mqm", tmp_path / "dl")
    lines = data.read_lines(src)
    assert len(lines) == 7935 and dest.name == "texts.tsv.ptb" and not dest.exists()
    ted = data.load_ted_zhen_mqm(tmp_path / "dl")
    assert lines[:3] == ted["target"].tolist()[:3]  # row i of the input is rst_row/ptb row i
    jobs = data.parse_jobs("wmt21-deen", shared_data)
    assert len(jobs) == 21 and all(s.is_file() and d.is_file() for s, d in jobs)  # the shared copy has them all


def test_configured_folder_missing_files(tmp_path):
    (tmp_path / "wmt21-deen").mkdir()
    with pytest.raises(FileNotFoundError, match="lacks"):
        data.load_wmt21_deen(tmp_path)


# ---------------------------------------------------------------- own files

def test_load_text_set(tmp_path):
    (tmp_path / "sysA.txt").write_text("a b c\nd e\n", encoding="utf-8")
    (tmp_path / "sysB.txt").write_text("a b\nd e f\n", encoding="utf-8")
    (tmp_path / "ref1.txt").write_text("a b c\nd e f\n", encoding="utf-8")
    (tmp_path / "ref2.txt").write_text("a c\nd f\n", encoding="utf-8")
    (tmp_path / "scores.tsv").write_text("system\tseg_id\thuman\nsysA.txt\t0\t0.5\nsysB.txt\t1\t0.9\n", encoding="utf-8")
    df = data.load_text_set([tmp_path / "sysA.txt", tmp_path / "sysB.txt"], [tmp_path / "ref1.txt", tmp_path / "ref2.txt"],
                            scores=tmp_path / "scores.tsv")
    assert list(df["system"]) == ["sysA.txt", "sysA.txt", "sysB.txt", "sysB.txt"]
    assert df.loc[3, "refs"] == ("d e f", "d f")
    assert df.loc[0, "human"] == 0.5 and np.isnan(df.loc[1, "human"]) and df.loc[3, "human"] == 0.9

    (tmp_path / "short.txt").write_text("only one\n", encoding="utf-8")
    with pytest.raises(ValueError, match="short.txt has 1 lines"):
        data.load_text_set({"x": tmp_path / "short.txt"}, tmp_path / "ref1.txt")
    with pytest.raises(ValueError, match="ref2.txt has 1 lines"):
        (tmp_path / "ref2.txt").write_text("a c\n", encoding="utf-8")
        data.load_text_set(tmp_path / "sysA.txt", [tmp_path / "ref1.txt", tmp_path / "ref2.txt"])
    (tmp_path / "noseg.tsv").write_text("system\thuman\nsysA\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="seg_id"):
        data.load_text_set(tmp_path / "sysA.txt", tmp_path / "ref1.txt", scores=tmp_path / "noseg.tsv")
    (tmp_path / "nosys.tsv").write_text("seg_id\thuman\n0\t1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="'system' column"):
        data.load_text_set([tmp_path / "sysA.txt", tmp_path / "sysB.txt"], tmp_path / "ref1.txt",
                           scores=tmp_path / "nosys.tsv")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="empty"):
        data.load_text_set(tmp_path / "sysA.txt", tmp_path / "empty.txt")


def _text_set(tmp_path, scores: str):
    (tmp_path / "sysA.txt").write_text("a b c\nd e\nf g\n", encoding="utf-8")
    (tmp_path / "ref1.txt").write_text("a b c\nd e f\nf\n", encoding="utf-8")
    (tmp_path / "scores.tsv").write_text(scores, encoding="utf-8")
    return data.load_text_set(tmp_path / "sysA.txt", tmp_path / "ref1.txt", scores=tmp_path / "scores.tsv")


@pytest.mark.parametrize("scores, message", [
    # issue 13: a non-numeric score went through silently (an object column of strings)
    ("seg_id\thuman\n0\t0.5\n1\tgood\n",
     "scores.tsv: column 'human', row 2 (line 3 of the file): 'good' is not a number"),
    ("seg_id\thuman\tda\n0\t0.5\t12\n1\t0.7\t1,5\n",
     "scores.tsv: column 'da', row 2 (line 3 of the file): '1,5' is not a number"),
    ("seg_id\thuman\n0\t0.5\n1\tinf\n", "column 'human', row 2 (line 3 of the file): 'inf' is not a finite number"),
    # ... and so did a seg_id that is not a line number
    ("seg_id\thuman\n0\t0.5\n1.5\t0.7\n",
     "column 'seg_id', row 2 (line 3 of the file): '1.5' is not a whole number; seg_id is a 0-based line number"),
    ("seg_id\thuman\n0\t0.5\none\t0.7\n", "column 'seg_id', row 2 (line 3 of the file): 'one' is not a number"),
    ("seg_id\thuman\n0\t0.5\n\t0.7\n", "column 'seg_id', row 2 (line 3 of the file) is empty"),
    ("seg_id\ttarget\n0\t0.5\n", "score column 'target' has the name of a column of the text frame"),
    ("seg_id\thuman\n0\t0.5\n7\t0.7\n", "seg_id 7 (row 2) is outside the files' 0..2"),
])
def test_load_text_set_refuses_bad_score_cells(tmp_path, scores, message):
    with pytest.raises(ValueError) as e:
        _text_set(tmp_path, scores)
    assert message in str(e.value)


def test_load_text_set_score_cells(tmp_path):
    """Empty cells are missing scores; ``2.0`` is line 2; numbers are read as written (float64)."""
    df = _text_set(tmp_path, "seg_id\thuman\tda\n0\t0.5\t\n2.0\t-1e-3\t70\n")
    assert df["human"].dtype == np.float64 and df["da"].dtype == np.float64
    assert df["human"].tolist()[0] == 0.5 and math.isnan(df["human"].tolist()[1]) and df["human"].tolist()[2] == -0.001
    assert math.isnan(df["da"].tolist()[0]) and math.isnan(df["da"].tolist()[1]) and df["da"].tolist()[2] == 70.0


def test_sample_segments_draws_whole_segments():
    ids = np.repeat(np.array([7, 3, 9, 1, 5]), 3)  # 5 source segments x 3 systems
    frame = pd.DataFrame({"seg_id": ids, "system": ["a", "b", "c"] * 5})
    got = data.sample_segment_ids(ids, 2, seed=4)
    # the draw written out: default_rng(4).choice over the sorted unique ids [1, 3, 5, 7, 9]
    expect = np.sort(np.random.default_rng(4).choice(np.array([1, 3, 5, 7, 9]), size=2, replace=False))
    assert got.tolist() == expect.tolist() and len(set(got)) == 2
    sub = data.sample_segments(frame, 2, seed=4)
    assert len(sub) == 6 and set(sub["seg_id"]) == set(got) and sub.index.tolist() == list(range(6))
    assert data.sample_segment_ids(ids, None).tolist() == [1, 3, 5, 7, 9] == data.sample_segment_ids(ids, 99).tolist()
    with pytest.raises(ValueError, match="positive"):
        data.sample_segment_ids(ids, 0)
