"""Issue 33, done when: the README's ``report`` command, with its defaults, on a test set of at least 10 systems
with lines over 150 tokens (multi-sentence lines and a single long sentence) and human scores, writes its HTML,
ranks the systems by the human scores and marks the metrics' claims where the humans disagree.

The set is built from the shipped TED zh-en data (not copied into the repository): 10 MT systems and refB as the
reference; each line joins two segments (two sentences), one line joins fourteen (a multi-sentence line of over 150
tokens) and one line is ``LONG_200``, a correct single sentence of 200 tokens (shared by every system and the
reference, so it is parsed once); the human score of a line is the mean MQM z of its segments. The per-sentence
parses of the shipped data are put into a fresh parse cache under the kit's own key (sentence mode parses each
sentence alone, so a joined line is found sentence by sentence); only the long sentence is parsed, by the Stanford
parser with its defaults (max_length 200, -Xmx2g): the one slow end-to-end parse of a 200-token sentence in the
suite (issue 33: the default limit and heap parse it, which the former limit of 150 refused)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from syneval_nb import data as D
from syneval_nb.metrics.lexical import tokenize
from syneval_nb.parsers.cache import ParseCache
from syneval_nb.parsers.sentences import split_sentences
from syneval_nb.parsers.stanford import DEFAULT_MAX_LENGTH, StanfordParser
from syneval_nb.trees.ptb import read_ptb_flat

pytestmark = pytest.mark.skipif(shutil.which("java") is None, reason="the long sentence needs the Stanford parser")

LONG_200 = (  # 200 PTB tokens: clauses of the WMT21 references joined by ", and" (one correct sentence)
    'The protests in Israel against head of government Netanjahu become more frequent, and he crashed into the back '
    'of the car, and the city would develop in totally different ways, different from what they forecast in city hall'
    ' and from what is said by economics, and the race in Brandenburg will be the start of a very busy schedule, and '
    'the planned sea drone is designed for destroying costal targets, and the right-back aborted a practice game in '
    'the Munich foul weather and left the field on a golf cart, and the race schedule of the current Formula 1 season'
    ' becomes clearer, and the traditional season start in Australia in March had been cancelled on short notice due '
    'to the impending Corona crisis, and a GIF, an animated picture originated from the short clip that finally '
    'became one of the most frequently used images for Trump opponents, and he learned his first guitar chords at '
    'eleven, and a spokesperson for the Ministry of Justice said to the newspaper, that the need for legal '
    'alterations shall first be sensibly reviewed following a decision from the court today.')


def _build(tmp_path, n_systems: int = 10, n_pairs: int = 22):
    t = D.load_ted_zhen_mqm()
    t = t[~t["is_human"]]
    systems = sorted(t["system"].unique())[:n_systems]
    t = t[t["system"].isin(systems)]
    wide = t.pivot(index="seg_id", columns="system", values="target")
    # segments that are one sentence for every system and the reference, and have a parse everywhere
    ref = t.groupby("seg_id")["refB"].first()
    ok = [i for i in wide.index
          if all(split_sentences(x) == [x] for x in [*wide.loc[i], ref[i]])
          and t[(t["seg_id"] == i)]["ptb"].map(lambda p: p.strip() not in ("", "(())")).all()
          and t[(t["seg_id"] == i)]["ptb_refB"].iloc[0].strip() not in ("", "(())")
          and all(x.rstrip()[-1:] in ".!?" for x in [*wide.loc[i], ref[i]])]
    ok = sorted(ok)
    groups = [ok[2 * k: 2 * k + 2] for k in range(n_pairs)]
    long_multi = ok[2 * n_pairs: 2 * n_pairs + 14]
    groups.append(long_multi)
    long_one = LONG_200  # one sentence of over 150 tokens (the former limit), at the default limit of 200
    assert 150 < len(tokenize(long_one)) <= 200 and split_sentences(long_one) == [long_one]
    cache = ParseCache(tmp_path / "cache.sqlite")
    key = StanfordParser(max_length=DEFAULT_MAX_LENGTH).backend_key
    items = {}
    for _, r in t[t["seg_id"].isin([i for g in groups for i in g])].iterrows():
        items[r["target"]] = r["ptb"]
        items[r["refB"]] = r["ptb_refB"]
    cache.put_many(key, items.items())
    cache.close()
    files = []
    for s in systems:
        lines = [" ".join(wide.loc[i, s] for i in g) for g in groups] + [long_one]
        f = tmp_path / f"{s}.txt"
        f.write_text("\n".join(lines) + "\n", encoding="utf-8")
        files.append(str(f))
    (tmp_path / "refB.txt").write_text("\n".join([" ".join(ref[i] for i in g) for g in groups] + [long_one]) + "\n",
                                       encoding="utf-8")
    z = t.set_index(["system", "seg_id"])["mqm_z"]
    rows = ["system\tseg_id\tscore"] + [f"{s}\t{k}\t{float(np.mean([z[(s, i)] for i in g]))!r}"
                                        for s in systems for k, g in enumerate(groups)]
    (tmp_path / "mqm_z.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    human_means = {s: np.mean([np.mean([z[(s, i)] for i in g]) for g in groups]) for s in systems}
    return systems, files, groups, long_one, human_means


def test_report_with_its_defaults_on_a_test_set_with_long_lines(tmp_path):
    """The report with its defaults on the long-lines set; and (formerly ``test_a_200_token_sentence_gets_a_parse``
    of test_sentence_mode.py) the default limit and heap parse a correct 200-token sentence (measured: 76-140 s on
    a loaded 2-core machine; README "Parsing"), which the former limit of 150 refused: the report's parser has
    the defaults, the line is one sentence, and its tree, read back from the report's cache under the default key,
    has 200 leaves."""
    systems, files, groups, long_one, human_means = _build(tmp_path)
    lengths = [len(tokenize(line)) for line in open(files[0], encoding="utf-8").read().splitlines()]
    assert len(systems) == 10 and max(lengths[:-2]) < 150 and lengths[-2] > 150 and lengths[-1] > 150
    assert long_one == LONG_200 and split_sentences(LONG_200) == [LONG_200]
    for f in [*files, tmp_path / "refB.txt"]:  # the same sentence in every system and the reference
        assert open(f, encoding="utf-8").read().splitlines()[-1] == LONG_200
    default = StanfordParser()  # what the report parses with: no --max-length given, and report has no --memory
    assert (default.max_length, default.memory) == (DEFAULT_MAX_LENGTH, "2g") == (200, "2g")
    with ParseCache(tmp_path / "cache.sqlite") as cache:  # not in the cache: the report really parses it
        assert cache.get(default.backend_key, LONG_200, default="absent") == "absent"
    out = tmp_path / "report"
    r = subprocess.run([sys.executable, "-m", "syneval_nb.app.cli", "report", "-r", str(tmp_path / "refB.txt"),
                        "-i", *files, "--human-scores", str(tmp_path / "mqm_z.tsv"),
                        "--cache", str(tmp_path / "cache.sqlite"), "-o", str(out)],
                       capture_output=True, text=True, timeout=1500, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    # the 200-token sentence got a parse under the default key (maxLength=200): no failure, 200 leaves, one S
    with ParseCache(tmp_path / "cache.sqlite") as cache:
        tree = cache.get(default.backend_key, LONG_200)  # KeyError if absent, None if stored as a failure
    assert tree is not None
    assert sum(w is not None for w in read_ptb_flat(tree).words) == 200 and tree.startswith("(ROOT (S ")
    page = (out / "09_evaluate_your_system.html").read_text(encoding="utf-8")
    assert "What the human scores say" in page
    res = json.loads((out / "09_evaluate_your_system.json").read_text(encoding="utf-8"))
    # every line got a parse: the 14-sentence line sentence by sentence, the long sentence whole
    assert res["unscorable"] == []
    assert res["line_faults"] == {s: {"empty": 0, "unparsed": 0} for s in systems}
    # the humans first: the ranking is the MQM z means, best first
    ranked = sorted(systems, key=lambda s: -human_means[s])
    assert [x["system"] for x in res["human_ranking"]] == ranked
    assert [x["human"] for x in res["human_ranking"]] == pytest.approx([human_means[s] for s in ranked])
    assert len(res["system_agreement"]) == len(res["parameters"]["metrics"])
    assert all(x["n_pairs"] == 45 for x in res["system_agreement"])
    # every claim about two systems is "by the metrics" and says what the human scores make of it
    claims = {c: v for c, v in res["verdicts"].items() if " is better than " in c}
    assert len(claims) == 9 and all(c.endswith(" by the metrics") for c in claims)
    assert all(v["human_view"] in ("agree", "disagree", "cannot tell", "better", "worse") for v in claims.values())
    # the metrics cannot tell MiSS from Borderline after Holm over the report's family; the humans can
    assert claims["MiSS is better than Borderline by the metrics"]["verdict"] == "cannot tell"
    assert claims["MiSS is better than Borderline by the metrics"]["human_view"] == "better"
    for c, v in claims.items():
        assert f"{c} (human scores: {v['human_view']})" in r.stdout
        s = c.split(" is better than ")[0]
        assert v["human"]["delta"] == pytest.approx(human_means[s] - human_means[systems[0]])
