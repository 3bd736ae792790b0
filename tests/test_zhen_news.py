"""newstest2021 zh-en with expert MQM (``syneval_nb.data.load_newstest2021_zhen_mqm``) on the shared copy
(``../shared/data/newstest2021-zhen-mqm``), its download path and its parse jobs."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from syneval_nb import data
from syneval_nb.textio import read_lines
from test_data import _mirror


@pytest.fixture(scope="module")
def news(shared_data):
    return data.load_newstest2021_zhen_mqm(shared_data)


def test_rows_systems_and_columns(news):
    assert len(news) == 8 * 650 == 5200
    assert sorted(news["system"].unique()) == ["Borderline", "DIDI-NLP", "Facebook-AI", "IIE-MT", "MiSS",
                                               "NiuTrans", "Online-W", "SMU"]
    assert list(news.columns) == ["system", "seg_id", "wmt_seg_id", "source", "target", "mqm", "is_human", "ref",
                                  "ptb", "ptb_ref"]
    assert (news.groupby("system")["seg_id"].agg(["min", "max", "nunique"]) == [0, 649, 650]).all().all()
    assert not news["is_human"].any() and news["mqm"].notna().all()
    assert news["wmt_seg_id"].min() == 91 and news["wmt_seg_id"].max() <= 1948
    # no rater and no document columns: the data have none
    assert not {"rater", "mqm_z", "doc", "doc_id"} & set(news.columns)


def test_known_segments(news):
    """The published averages of the first segment (newstest line 91), higher is better (TED's sign)."""
    first = news[news["seg_id"] == 0].set_index("system")
    assert first.loc["Borderline", "mqm"] == -5.0 and first.loc["Online-W", "mqm"] == -2.0
    assert first.loc["Online-W", "source"] == "张继科林小宅组队力挺有肌少年-新华网"
    assert first.loc["Online-W", "ref"].startswith("Zhang Jike and Lin Xiaozhai Form a Team")
    assert first.loc["Online-W", "target"].startswith("Zhang Jike Lin Xiaozai team")
    assert news["mqm"].max() == 0.0 and news["mqm"].min() == -25.0
    assert news.groupby("system")["mqm"].mean()["NiuTrans"] == pytest.approx(-4.632923, abs=1e-6)  # the best


def test_every_line_has_a_parse_but_three(news, shared_data):
    """Online-W's two empty lines (173, 460) and NiuTrans line 499 have no parse, as the folder's README says."""
    ptb = shared_data / data.NEWS_ZHEN / data.PTB_DIR
    failed = {f.name: sum(ln.strip() == "(())" for ln in read_lines(f)) for f in sorted(ptb.glob("*.ptb"))}
    assert sum(failed.values()) == 3 and failed["Online-W.en.ptb"] == 2 and failed["NiuTrans.en.ptb"] == 1
    assert news["ptb"].isna().sum() == 3 and news["ptb_ref"].notna().all()
    missing = news.loc[news["ptb"].isna(), ["system", "seg_id"]].values.tolist()
    assert missing == [["NiuTrans", 498], ["Online-W", 172], ["Online-W", 459]]
    assert news.loc[news["ptb"].isna() & (news["system"] == "Online-W"), "target"].tolist() == ["", ""]


def test_parse_jobs(shared_data):
    jobs = data.parse_jobs(data.NEWS_ZHEN, shared_data)
    assert len(jobs) == 9 and all(s.is_file() and d.is_file() for s, d in jobs)
    assert {s.name for s, _ in jobs} == {"ref-A.en", *(f"{s}.en" for s in data.NEWS_ZHEN_SYSTEMS)}
    assert all(d.name == s.name + ".ptb" for s, d in jobs)


def test_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        data.load_newstest2021_zhen_mqm(tmp_path / "nowhere")
    (tmp_path / data.NEWS_ZHEN).mkdir()
    with pytest.raises(FileNotFoundError, match=r"lacks 11 file\(s\) of newstest2021-zhen-mqm"):
        data.load_newstest2021_zhen_mqm(tmp_path)


def test_download_derives_the_shared_files(shared_data, tmp_path):
    """From the public files (a file:// mirror), the 650 segments rated for all 8 systems are found and written
    byte for byte as in the shared copy; the loader then reads them (no parses: ptb is None)."""
    base = _mirror(shared_data, tmp_path / "mirror")
    got = data.download_dataset(data.NEWS_ZHEN, tmp_path / "dl", base_url=base)
    for f in ["segments.tsv", "ref-A.en", *(f"{s}.en" for s in data.NEWS_ZHEN_SYSTEMS)]:
        assert (got / f).read_bytes() == (shared_data / data.NEWS_ZHEN / f).read_bytes(), f
    df = data.load_newstest2021_zhen_mqm(tmp_path / "dl")
    ref = data.load_newstest2021_zhen_mqm(shared_data)
    assert df["ptb"].isna().all()
    pd.testing.assert_frame_equal(df.drop(columns=["ptb", "ptb_ref"]), ref.drop(columns=["ptb", "ptb_ref"]))
    assert np.array_equal(df["mqm"], ref["mqm"])
