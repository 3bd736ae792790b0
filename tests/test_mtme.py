"""The WMT metrics-task layout (google-research/mt-metrics-eval), in and out: ``data.load_mtme`` and
``syneval-nb score --mtme ... --write-mtme``, on a small layout built here from the shared TED zh-en data (its 15
systems, refB as the reference, MQM as ``human-scores/zh-en.mqm.seg.score``, the talks as documents) with the
shipped parses, so no Java runs."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import pearsonr

from syneval_nb import data, metrics
from syneval_nb.app import score as score_app

LP = "zh-en"


@pytest.fixture(scope="module")
def ted(shared_data) -> pd.DataFrame:
    return data.load_ted_zhen_mqm(shared_data / "ted-zhen-mqm").sort_values(["system", "seg_id"], ignore_index=True)


@pytest.fixture(scope="module")
def layout(ted, tmp_path_factory) -> tuple[Path, Path]:
    """``(test-set folder, parses folder)``: the TED set written in the metrics task's layout (human translations:
``ref`` is also a reference of the folder, ``refB`` the one scored against)."""
    root = tmp_path_factory.mktemp("mtme") / "ted21"
    parses = root.parent / "parses"
    for sub in ("sources", "references", "documents", "human-scores", f"system-outputs/{LP}"):
        (root / sub).mkdir(parents=True)
    parses.mkdir()
    first = ted[ted["system"] == "refB"]
    (root / "sources" / f"{LP}.txt").write_text("".join(s + "\n" for s in first["source"]), encoding="utf-8")
    (root / "references" / f"{LP}.refB.txt").write_text("".join(s + "\n" for s in first["refB"]), encoding="utf-8")
    # the other human translation is a reference of the folder too (and, as in the task's data, also a system)
    (root / "references" / f"{LP}.ref.txt").write_text("".join(s + "\n" for s in first["ref"]), encoding="utf-8")
    (parses / f"{LP}.refB.txt.ptb").write_text("".join(p + "\n" for p in first["ptb_refB"]), encoding="utf-8")
    (root / "documents" / f"{LP}.docs").write_text("".join(f"ted {d}\n" for d in first["doc"]), encoding="utf-8")
    mqm = []
    for system, g in ted.groupby("system", sort=True):
        assert g["seg_id"].tolist() == first["seg_id"].tolist()
        (root / "system-outputs" / LP / f"{system}.txt").write_text("".join(t + "\n" for t in g["target"]),
                                                                   encoding="utf-8")
        (parses / f"{system}.txt.ptb").write_text("".join(p + "\n" for p in g["ptb"]), encoding="utf-8")
        mqm += [f"{system}\t{'None' if math.isnan(v) else repr(float(v))}\n" for v in g["mqm"]]
    (root / "human-scores" / f"{LP}.mqm.seg.score").write_text("".join(mqm), encoding="utf-8")
    return root, parses


def test_load_mtme_gives_the_tidy_frame(ted, layout):
    root, _ = layout
    df = data.load_mtme(root, LP, refs="refB")
    systems = sorted(set(ted["system"]) - {"refB"})  # the reference used is not scored
    assert sorted(df["system"].unique()) == systems and len(df) == 14 * 529
    assert df.attrs["ref_names"] == ["refB"] and df.attrs["human_scores"] == ["mqm"]
    assert list(df.columns[:7]) == ["system", "seg_id", "domain", "doc", "source", "target", "ref_1"]
    expect = ted[ted["system"] != "refB"].reset_index(drop=True)
    assert df["target"].tolist() == expect["target"].tolist()
    assert df["ref_1"].tolist() == expect["refB"].tolist()
    assert df["doc"].tolist() == expect["doc"].tolist()
    np.testing.assert_array_equal(df["mqm"].to_numpy(), expect["mqm"].to_numpy())
    assert df.loc[df["system"] == "ref", "is_human"].all() and not df.loc[df["system"] == "SMU", "is_human"].any()
    assert df["seg_id"].tolist() == list(range(529)) * 14


def test_load_mtme_refuses_bad_layouts(layout, tmp_path):
    root, _ = layout
    with pytest.raises(data.MtmeFormatError, match="reference 'refA' is not in .*there: ref, refB"):
        data.load_mtme(root, LP, refs="refA")
    with pytest.raises(data.MtmeFormatError, match="no system outputs for de-en"):
        data.load_mtme(root, "de-en")
    bad = tmp_path / "bad.seg.score"
    bad.write_text("SMU 0.5\nSMU 1 2\n", encoding="utf-8")
    with pytest.raises(data.MtmeFormatError, match=r"bad.seg.score, line 2: expected 'SYSTEM SCORE'"):
        data.read_mtme_scores(bad)


def _read_back(path: Path) -> dict[str, list[float]]:
    """The metrics task's own reading of a score file (mt-metrics-eval ``data.ReadScoreFile``: ``line.split()``
    into exactly system and score), with its file-name parse (``NAME-REF.LEVEL.score``)."""
    name, level, ext = path.name.rsplit(".", maxsplit=2)
    assert ext == "score" and level in ("sys", "domain", "doc", "seg")
    basename, refs = name.rsplit("-", maxsplit=1)
    assert refs == "refB" and basename
    out: dict[str, list[float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        assert line.count("\t") == 1, line
        sysname, value = line.split()
        assert value != "None"
        out.setdefault(sysname, []).append(float(value))
    return out


def test_score_mtme_round_trip(ted, layout, tmp_path, capsys):
    root, parses = layout
    out = tmp_path / "metric-scores" / LP
    rc = score_app.cli(["--mtme", str(root), "--lp", LP, "--ref", "refB", "-m", "bleu,stm", "--parses", str(parses),
                        "--human-scores", "mqm", "--documents", "--write-mtme", str(out), "--format", "json",
                        "--n-bootstrap", "200", "-q"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    assert captured.err.splitlines() == [f"syneval-nb score: wrote 4 score files to {out}"]
    result = json.loads(captured.out)
    assert result["bootstrap"]["unit"] == "document" and result["n_segments"] == 529
    # "-m stm" compares systems with STM's brevity-penalty variant (issue 37)
    assert sorted(p.name for p in out.iterdir()) == ["BLEU-refB.seg.score", "BLEU-refB.sys.score",
                                                     "STM-BP-4-refB.seg.score", "STM-BP-4-refB.sys.score"]
    systems = sorted(set(ted["system"]) - {"refB"})
    seg = _read_back(out / "STM-BP-4-refB.seg.score")
    sys_ = _read_back(out / "STM-BP-4-refB.sys.score")
    assert list(seg) == systems and list(sys_) == systems  # every system but the reference, in file order
    assert all(len(v) == 529 for v in seg.values()) and all(len(v) == 1 for v in sys_.values())

    # the STM-BP-4 segment scores written equal the registry's STM-BP-4 on the same segments and the shipped parses
    stm = metrics.get("stm-bp-4")
    refb = ted[ted["system"] == "refB"]
    for system in ("SMU", "ref", "metricsystem3"):
        g = ted[ted["system"] == system]
        corpus = metrics.Corpus(g["target"].tolist(), [[r] for r in refb["refB"]], hyp_ptb=g["ptb"].tolist(),
                                ref_ptb=[[p] for p in refb["ptb_refB"]])
        expect = stm.sentence_scores(corpus)
        assert not np.isnan(expect).any()
        assert seg[system] == expect.tolist()
        assert sys_[system] == [stm.corpus_score(corpus).score]
        bleu = metrics.get("bleu").corpus_score(g["target"].tolist(), [[r] for r in refb["refB"]]).score
        assert _read_back(out / "BLEU-refB.sys.score")[system] == [bleu]

    # the kit's figures through this path equal those from the notebooks' loader (load_ted_zhen_mqm)
    mt = ted[ted["system"] != "refB"]
    stm_all = np.concatenate([seg[s] for s in systems])
    ok = ~np.isnan(mt["mqm"].to_numpy())
    r_seg = pearsonr(stm_all[ok], mt["mqm"].to_numpy()[ok])[0]
    assert result["human"]["STM-BP-4"]["seg_pearson"] == pytest.approx(r_seg, abs=1e-12)
    assert result["human"]["STM-BP-4"]["n_seg"] == int(ok.sum()) == 14 * 529
    # its 95% interval, 200 resamples of whole talks (--documents), recomputed here: the kit's draws (numpy's
    # default_rng(seed 0), 100 resamples a chunk), each resample written out row by row for scipy's pearsonr
    units = np.unique(mt["doc"].to_numpy()[ok], return_inverse=True)[1].reshape(-1)
    rng, k = np.random.default_rng(0), int(units.max()) + 1
    draws = np.vstack([rng.integers(0, k, size=(100, k)) for _ in range(2)])
    rs = [pearsonr(np.repeat(stm_all[ok], c[units]), np.repeat(mt["mqm"].to_numpy()[ok], c[units]))[0]
          for c in (np.bincount(d, minlength=k) for d in draws)]
    assert result["human"]["STM-BP-4"]["seg_ci"] == pytest.approx(list(np.nanquantile(rs, [0.025, 0.975])),
                                                                  abs=1e-9)
    assert [round(v, 4) for v in result["human"]["STM-BP-4"]["seg_ci"]] == [0.1495, 0.1932]
    sys_mqm = mt.groupby("system")["mqm"].mean().loc[systems].to_numpy()
    r_sys = pearsonr([sys_[s][0] for s in systems], sys_mqm)[0]
    assert result["human"]["STM-BP-4"]["sys_pearson"] == pytest.approx(r_sys, abs=1e-12)
    assert round(r_seg, 4) == round(float(result["human"]["STM-BP-4"]["seg_pearson"]), 4)


def test_score_mtme_bad_input_is_one_line(layout, tmp_path, capsys):
    root, parses = layout
    cases = [
        (["--mtme", str(root), "-m", "bleu"], "--mtme needs --lp"),
        (["--mtme", str(root), "--lp", LP, "--ref", "refZ", "-m", "bleu"], "reference 'refZ' is not in"),
        (["-r", "a.txt", "-i", "b.txt", "--write-mtme", str(tmp_path / "o")], "--write-mtme needs --mtme"),
        (["--mtme", str(root), "--lp", LP, "-m", "bleu", "--human-scores", "da"], "--human-scores da: neither"),
        (["-m", "bleu"], "give -r (references) and -i (systems), or --mtme DIR --lp LP"),
    ]
    for argv, msg in cases:
        assert score_app.cli(argv + ["-q"]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and msg in err, err


def test_write_mtme_scores_format(tmp_path):
    p = data.write_mtme_scores(tmp_path / "X-refA.seg.score", {"sysA": [0.5, 1.0], "sysB": [0.25, 0.0]})
    assert p.read_text(encoding="utf-8") == "sysA\t0.5\nsysA\t1.0\nsysB\t0.25\nsysB\t0.0\n"
    assert data.read_mtme_scores(p) == {"sysA": [0.5, 1.0], "sysB": [0.25, 0.0]}
    with pytest.raises(data.MtmeFormatError, match="a missing score"):
        data.write_mtme_scores(tmp_path / "Y-refA.seg.score", {"sysA": [float("nan")]})
    with pytest.raises(data.MtmeFormatError, match="white space"):
        data.write_mtme_scores(tmp_path / "Y-refA.sys.score", {"sys A": [1.0]})
