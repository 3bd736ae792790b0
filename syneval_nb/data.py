"""Datasets and human scores as tidy pandas frames, plus the download of the public files.

Two public data sets, both into English and both with two human translations per segment:

* **WMT21 news, newstest2021 de-en** (:func:`load_wmt21_deen`): 19 MT systems x 1000 segments, references A and B,
  crowd Direct Assessment (DA) at system level, the segment DA kept *unaligned* (see below), and the COMET
  system scores WMT published with the outputs. Public repository ``wmt-conference/wmt21-news-systems``.
* **WMT21 TED talks test suite, zh-en, expert MQM** (:func:`load_ted_zhen_mqm`): 13 MT systems plus the two human
  translations ``ref`` and ``refB``, 529 annotated segments, MQM computed here from the error rows (it equals the
  published segment averages). Public repository ``google/wmt-mqm-human-evaluation`` (Apache-2.0).
* **WMT21 news, newstest2021 zh-en, expert MQM** (:func:`load_newstest2021_zhen_mqm`): 8 MT systems x 650 segments,
  reference A only, the published segment MQM averages (``google/wmt-mqm-human-evaluation``), no rater or document ids.
* a user's own files (:func:`load_text_set`).

Where the files come from (``folder=None``): :func:`syneval_nb.paths.data_dir` resolves a local copy
(``SYNEVAL_NB_DATA`` or ``../shared/data`` beside the checkout). Without one, the loaders download the public files
(:func:`download_dataset`) into ``paths.cache_dir()/data``, at the pinned commits in :data:`SOURCES`. The shipped
parse files (``parses/stanford-pcfg-3.3.1/*.ptb``) are **not** in those public repositories: users make them with
``syneval-nb parse``; until then the ``ptb*`` columns are ``None``.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from syneval_nb import paths
from syneval_nb.textio import read_lines
from syneval_nb.trees.ptb import read_ptb_strings
from syneval_nb.trees.rst import RSTFormatError, load_rst_jsonl

__all__ = ["load_ted_zhen_mqm", "single_system_raters", "load_wmt21_deen", "load_newstest2021_zhen_mqm", "load_mtme",
           "read_mtme_scores", "write_mtme_scores", "download_dataset", "load_text_set", "mqm_scores", "ted_rst",
           "wmt21_rst"]


# --------------------------------------------------------------------------------------------------------------
# Where the public files live
# --------------------------------------------------------------------------------------------------------------

DEFAULT_BASE_URL = "https://github.com"
"""Files are fetched from ``{base_url}/{repo}/raw/{commit}/{remote path}`` (a ``file://`` mirror works too)."""

WMT21_REPO, WMT21_COMMIT = "wmt-conference/wmt21-news-systems", "f41750d"
MQM_REPO, MQM_COMMIT = "google/wmt-mqm-human-evaluation", "7fadea2"

WMT21_DEEN = "wmt21-deen"
TED_ZHEN = "ted-zhen-mqm"
NEWS_ZHEN = "newstest2021-zhen-mqm"
NEWS_ZHEN_SCORES = "mqm_newstest2021_zhen.avg_seg_scores.tsv"
NEWS_ZHEN_SYSTEMS = ("Borderline", "DIDI-NLP", "Facebook-AI", "IIE-MT", "MiSS", "NiuTrans", "Online-W", "SMU")
"""The 8 MT systems of newstest2021 zh-en with MQM and public outputs (the MQM file's 5 ``metricsystem*`` have none)."""

WMT21_SYSTEMS: tuple[str, ...] = (
    "Borderline", "Facebook-AI", "HuaweiTSC", "ICL", "Manifold", "NVIDIA-NeMo", "Online-A", "Online-B",
    "Online-G", "Online-W", "Online-Y", "P3AI", "SMU", "UEdin", "UF", "VolcTrans-AT", "VolcTrans-GLAT",
    "Watermelon", "happypoet",
)
"""The 19 MT systems of newstest2021 de-en, named as in the txt file names."""

PTB_DIR = Path("parses") / "stanford-pcfg-3.3.1"
RST_DIR = Path("parses") / "feng-hirst-0.1.4"


@dataclass(frozen=True)
class RemoteFile:
    """One public file: where it is in its repository and where it goes in the local data folder."""

    repo: str
    commit: str
    remote: str
    local: str
    alternates: tuple[str, ...] = ()
    """Other remote paths tried in order when ``remote`` is not found (files renamed across commits)."""

    def url(self, base_url: str = DEFAULT_BASE_URL, remote: str | None = None) -> str:
        return f"{base_url.rstrip('/')}/{self.repo}/raw/{self.commit}/{remote or self.remote}"

    def urls(self, base_url: str = DEFAULT_BASE_URL) -> list[str]:
        return [self.url(base_url, r) for r in (self.remote, *self.alternates)]


def _wmt21_files() -> list[RemoteFile]:
    f = lambda remote, local: RemoteFile(WMT21_REPO, WMT21_COMMIT, remote, local)  # noqa: E731
    files = [
        f("txt/sources/newstest2021.de-en.src.de", "newstest2021.de-en.src.de"),
        f("txt/references/newstest2021.de-en.ref.A.en", "newstest2021.de-en.ref.A.en"),
        f("txt/references/newstest2021.de-en.ref.B.en", "newstest2021.de-en.ref.B.en"),
    ]
    files += [f(f"txt/system-outputs/newstest2021.de-en.hyp.{s}.en", f"system-outputs/newstest2021.de-en.hyp.{s}.en")
              for s in WMT21_SYSTEMS]
    for name in ("ad-seg-scores-de-en.csv", "ad-sys-scores-de-en.csv", "ad-sys-ranking-de-en-z-names.csv"):
        files.append(f(f"humaneval/newstest2021-toen/{name}", f"humaneval/{name}"))
    for ref in ("A", "B"):
        files.append(f(f"scores/COMET/de-en/COMET_newstest2021_ref-{ref}.tsv", f"scores/COMET_newstest2021_ref-{ref}.tsv"))
    return files


def _ted_files() -> list[RemoteFile]:
    return [
        # the repository's history also names the error file ``mqm-ted_zhen.tsv`` (hyphen): tried second
        RemoteFile(MQM_REPO, MQM_COMMIT, "ted/zhen/mqm_ted_zhen.tsv", "mqm_ted_zhen.tsv",
                   alternates=("ted/zhen/mqm-ted_zhen.tsv",)),
        RemoteFile(MQM_REPO, MQM_COMMIT, "ted/zhen/mqm_ted_zhen.avg_seg_scores.tsv", "mqm_ted_zhen.avg_seg_scores.tsv"),
        RemoteFile(MQM_REPO, MQM_COMMIT, "LICENSE", "LICENSE"),
    ]


def _news_zhen_files() -> list[RemoteFile]:
    # the whole newstest2021 zh-en texts go to raw/; write_news_zhen_texts keeps the 650 segments with MQM
    f = lambda remote: RemoteFile(WMT21_REPO, WMT21_COMMIT, f"txt/{remote}", f"raw/{Path(remote).name}")  # noqa: E731
    return [RemoteFile(MQM_REPO, MQM_COMMIT, f"newstest2021/zhen/{NEWS_ZHEN_SCORES}", NEWS_ZHEN_SCORES),
            f("sources/newstest2021.zh-en.src.zh"), f("references/newstest2021.zh-en.ref.A.en"),
            *(f(f"system-outputs/newstest2021.zh-en.hyp.{s}.en") for s in NEWS_ZHEN_SYSTEMS)]


SOURCES: dict[str, list[RemoteFile]] = {WMT21_DEEN: _wmt21_files(), TED_ZHEN: _ted_files(),
                                        NEWS_ZHEN: _news_zhen_files()}
"""Every public file a loader needs, per data set (sub-folder name of the data folder); newstest2021 zh-en's
``raw/`` texts only to derive its ``segments.tsv`` and ``<system>.en`` files (:func:`write_news_zhen_texts`)."""


# --------------------------------------------------------------------------------------------------------------
# Download and folder resolution
# --------------------------------------------------------------------------------------------------------------

def _fetch(url: str, dest: Path) -> None:
    """Download one URL to ``dest`` atomically (a partial file never takes the final name)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=dest.name + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:  # noqa: S310
            shutil.copyfileobj(resp, out)
        os.replace(tmp, dest)
    except (urllib.error.URLError, OSError) as exc:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(f"could not download {url}: {exc}") from exc


def _fetch_first(urls: Sequence[str], dest: Path) -> None:
    """Download the first of ``urls`` that exists; the error names every URL tried."""
    errors = []
    for url in urls:
        try:
            _fetch(url, dest)
            return
        except OSError as exc:
            errors.append(str(exc))
    raise OSError("; ".join(errors))


def download_dataset(name: str, dest_root: str | os.PathLike | None = None,
                     base_url: str = DEFAULT_BASE_URL, force: bool = False) -> Path:
    """Download the public files of data set ``name`` (a key of :data:`SOURCES`).

    Files go to ``<dest_root>/<name>/`` (default ``paths.cache_dir()/data``) under the same relative names as in
    the shared data folder; files already present are kept unless ``force``. For TED zh-en, ``texts.tsv`` (one row
    per (system, seg_id) with the marker-free source/target, sorted by system then seg_id) is derived from the
    error file afterwards, because parse files are aligned with its rows; for newstest2021 zh-en, the files of its
    650 segments (:func:`write_news_zhen_texts`). Returns the data set folder.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(SOURCES)}")
    from tqdm.auto import tqdm

    root = Path(dest_root) if dest_root is not None else paths.cache_dir() / "data"
    folder = root / name
    todo = [rf for rf in SOURCES[name] if force or not (folder / rf.local).is_file()]
    if name == NEWS_ZHEN and not force and not _missing(name, folder):
        todo = []  # the derived files are there: the raw texts are not needed
    for rf in tqdm(todo, desc=f"downloading {name}", unit="file", disable=not todo):
        _fetch_first(rf.urls(base_url), folder / rf.local)
    if name == TED_ZHEN and (force or not (folder / "texts.tsv").is_file()):
        write_ted_texts(folder)
    if name == NEWS_ZHEN and (force or _missing(name, folder)):
        write_news_zhen_texts(folder)
    return folder


def _missing(name: str, folder: Path) -> list[str]:
    """The files the loader of ``name`` reads that ``folder`` lacks."""
    need = ([NEWS_ZHEN_SCORES, "segments.tsv", *(f"{s}.en" for s in ("ref-A", *NEWS_ZHEN_SYSTEMS))]
            if name == NEWS_ZHEN else [rf.local for rf in SOURCES[name]])
    return [f for f in need if not (folder / f).is_file()]


def dataset_dir(name: str, folder: str | os.PathLike | None = None, base_url: str | None = None) -> Path:
    """The folder holding data set ``name``; downloads it when the kit falls back to its cache.

    ``folder`` is the data folder holding ``<name>/`` (or the data set folder itself). With ``folder=None`` and no
    local copy configured (``SYNEVAL_NB_DATA``, ``../shared/data``) the public files are downloaded into
    ``paths.cache_dir()/data``. A configured folder with missing files is an error that names them.
    """
    if name not in SOURCES:
        raise ValueError(f"unknown data set {name!r}; known: {sorted(SOURCES)}")
    root = paths.data_dir(folder)
    cand = root if root.name == name and not (root / name).is_dir() else root / name
    missing = _missing(name, cand)
    if not missing:
        return cand
    cache_root = (paths.cache_dir() / "data").resolve()
    if folder is None and root.resolve() == cache_root:
        return download_dataset(name, cache_root, base_url or DEFAULT_BASE_URL)
    raise FileNotFoundError(
        f"{cand} lacks {len(missing)} file(s) of {name} (e.g. {missing[0]}); run "
        f"syneval_nb.data.download_dataset({name!r}, {str(root)!r}) or point SYNEVAL_NB_DATA at a complete copy")


# --------------------------------------------------------------------------------------------------------------
# Small readers
# --------------------------------------------------------------------------------------------------------------

def sample_segment_ids(seg_ids: Sequence, sample: int | None, seed: int = 0) -> np.ndarray:
    """The notebooks' ``sample`` parameter: ``sample`` distinct segment ids drawn without replacement by
    ``numpy.random.default_rng(seed).choice`` from the sorted unique ids, returned sorted (all ids for ``None`` or a
    sample at least as large). Every segment of a chosen id is kept together, across systems."""
    uniq = np.unique(np.asarray(seg_ids))
    if sample is None or sample >= len(uniq):
        return uniq
    if sample <= 0:
        raise ValueError(f"sample must be a positive number of segments or None, got {sample}")
    return np.sort(np.random.default_rng(seed).choice(uniq, size=sample, replace=False))


def sample_segments(frame: pd.DataFrame, sample: int | None, seed: int = 0, column: str = "seg_id") -> pd.DataFrame:
    """The rows of ``frame`` whose ``column`` is among :func:`sample_segment_ids` (index reset)."""
    if sample is None:
        return frame.reset_index(drop=True)
    return frame[frame[column].isin(sample_segment_ids(frame[column], sample, seed))].reset_index(drop=True)


def _read_ptb_lines(path: Path, n: int) -> list[str | None]:
    """Parse strings of a shipped ``.ptb`` file aligned with ``n`` input lines; all ``None`` when it is absent."""
    return read_ptb_strings(path, n) if path.is_file() else [None] * n


def _read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", quoting=3, keep_default_na=False, dtype=str)


# --------------------------------------------------------------------------------------------------------------
# TED zh-en MQM
# --------------------------------------------------------------------------------------------------------------

TED_HUMAN = ("ref", "refB")
"""The two human translations in the error file; the published averages call them ``ref-A`` and ``ref-B``."""
TED_PUBLISHED_NAMES = {"ref": "ref-A", "refB": "ref-B"}

MQM_MAJOR, MQM_MINOR, MQM_MINOR_PUNCT, MQM_NON_TRANSLATION = 5.0, 1.0, 0.1, 25.0

_MARKERS = re.compile(r"</?v>")


def mqm_weight(category: str, severity: str) -> float:
    """MQM weight of one error row (Freitag et al. 2021, Table 2 / the repository's README).

    ``Non-translation`` (any severity) 25; Major 5; Minor ``Fluency/Punctuation`` 0.1; other Minor 1;
    ``No-error`` 0. Categories are matched case-insensitively, ``Non-translation!`` included.
    """
    cat, sev = category.strip().lower(), severity.strip().lower()
    if cat.startswith("non-translation"):
        return MQM_NON_TRANSLATION
    if cat == "no-error" or sev in ("no-error", "neutral", ""):
        return 0.0
    if sev == "major":
        return MQM_MAJOR
    if sev == "minor":
        return MQM_MINOR_PUNCT if cat == "fluency/punctuation" else MQM_MINOR
    raise ValueError(f"unknown MQM severity {severity!r} (category {category!r})")


def read_mqm_errors(path: str | os.PathLike) -> pd.DataFrame:
    """The MQM error file, one row per annotated error, with a ``weight`` column and marker-free texts."""
    e = _read_tsv(Path(path))
    need = {"system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity"}
    if not need <= set(e.columns):
        raise ValueError(f"{path}: expected columns {sorted(need)}, got {list(e.columns)}")
    e["seg_id"] = e["seg_id"].astype(int)
    e["doc_id"] = e["doc_id"].astype(int)
    e["weight"] = [mqm_weight(c, s) for c, s in zip(e["category"], e["severity"])]
    e["source_clean"] = e["source"].str.replace(_MARKERS, "", regex=True)
    e["target_clean"] = e["target"].str.replace(_MARKERS, "", regex=True)
    return e


def ted_texts(errors: pd.DataFrame) -> pd.DataFrame:
    """One row per (system, seg_id) with the marker-free texts, sorted by system then seg_id.

    This is exactly the row order of the shared ``texts.tsv`` (to which the shipped parse files are aligned).
    """
    g = (errors.groupby(["system", "seg_id"], sort=True)
         .agg(doc=("doc", "first"), doc_id=("doc_id", "first"), source=("source_clean", "first"),
              target=("target_clean", "first"))
         .reset_index())
    return g[["system", "doc", "doc_id", "seg_id", "source", "target"]]


def write_ted_texts(folder: str | os.PathLike) -> Path:
    """Derive ``texts.tsv`` from ``mqm_ted_zhen.tsv`` in ``folder`` (what ``syneval-nb parse`` parses)."""
    folder = Path(folder)
    out = folder / "texts.tsv"
    ted_texts(read_mqm_errors(folder / "mqm_ted_zhen.tsv")).to_csv(out, sep="\t", index=False, quoting=3)
    return out


def single_system_raters(frame: pd.DataFrame) -> pd.Series:
    """Raters whose scored rows all belong to one system (columns ``rater`` and ``system``; the MQM error file
    or a loaded TED frame): a Series rater -> that system, sorted by rater, empty when there is none. For such a
    rater the rater's offset (its mean) and the system's quality cannot be told apart (see :func:`mqm_scores`)."""
    missing = {"rater", "system"} - set(frame.columns)
    if missing:
        raise ValueError(f"single_system_raters needs the columns 'rater' and 'system'; missing {sorted(missing)}")
    r = frame[frame["rater"].notna()]
    per = r.groupby("rater", sort=True)["system"].agg(["nunique", "first"])
    return per.loc[per["nunique"] == 1, "first"].rename("system").rename_axis("rater")


RATER_OFFSETS = ("unconfounded", "every rater")
"""Where :func:`mqm_scores` estimates a rater's offset: ``"unconfounded"`` (the default: not for a rater who scored
a single system) or ``"every rater"`` (the plain within-rater z, the previous rule, kept for comparison)."""


def mqm_scores(errors: pd.DataFrame, rater_offsets: str = "unconfounded") -> pd.DataFrame:
    """Segment MQM per (system, seg_id): summed error weights averaged over the segment's raters.

    Columns ``mqm`` (all categories), ``mqm_fluency`` (categories ``Fluency/*``), ``mqm_fluency_style``
    (``Fluency/*`` and ``Style/*``), ``mqm_accuracy`` (``Accuracy/*``), ``n_raters``, ``n_errors``.
    All are in the published sign convention: the *negative* averaged weight (0 is perfect, higher is better).

    Rater-normalized scores (raters differ a lot in severity: on TED zh-en one rater per segment, rater means from
    -0.8 to -4.9): ``rater`` (the rater id; several raters of one segment comma-joined, sorted) and ``mqm_z``,
    ``mqm_fluency_z``, ``mqm_accuracy_z``: each rater's (negated) score of each (system, segment) is standardized
    within that rater, ``z = (x - rater mean) / rater sd`` (sd with ddof=1; mean and sd over every
    (system, segment) the rater scored, MT and human translations alike), then averaged over the segment's raters
    (per-judge normalization as in Kulesza & Shieber 2004 and WMT's DA z-scores). A rater whose scores do not
    vary (sd 0, or a single scored segment) gets z = 0: the scores carry no ranking. Same orientation as ``mqm``.

    Rater offsets are estimated only where rater and system are not confounded: a rater who scored a single
    system (:func:`single_system_raters`; on TED zh-en ``rater8`` scored only ``refB``, 177 segments) has a mean
    that is that system's quality as much as the rater's severity, and standardizing within it would erase the
    system's difference from the others. Such a rater's scores are standardized with the pooled mean and sd
    (ddof=1) of every (system, segment) score of the other raters (of all raters when every rater is confounded).
    The z of a row scored by any other rater is unchanged by this rule. ``rater_offsets="every rater"`` (a named
    variant, :data:`RATER_OFFSETS`) standardizes within every rater, confounded or not.

    What counts as fluency: Freitag et al. (2021, Table 1) put Style/Awkward in its own top-level category next to
    Accuracy and Fluency, so ``mqm_fluency`` follows their hierarchy (prefix ``Fluency/``: grammar, punctuation,
    spelling, inconsistency, register). Liu & Gildea's "fluency" is a holistic judgement of how natural the
    English reads, which arguably includes awkward style; ``mqm_fluency_style`` adds ``Style/*`` for that reading.
    """
    e = errors.copy()
    cat = e["category"].str.lower()
    e["w_flu"] = np.where(cat.str.startswith("fluency/"), e["weight"], 0.0)
    e["w_sty"] = np.where(cat.str.startswith("style/"), e["weight"], 0.0) + e["w_flu"]
    e["w_acc"] = np.where(cat.str.startswith("accuracy/"), e["weight"], 0.0)
    e["is_err"] = (e["weight"] > 0).astype(int)
    g = e.groupby(["system", "seg_id"], sort=True).agg(
        total=("weight", "sum"), flu=("w_flu", "sum"), sty=("w_sty", "sum"), acc=("w_acc", "sum"),
        n_raters=("rater", "nunique"), n_errors=("is_err", "sum"))
    out = pd.DataFrame({
        "mqm": -g["total"] / g["n_raters"],
        "mqm_fluency": -g["flu"] / g["n_raters"],
        "mqm_fluency_style": -g["sty"] / g["n_raters"],
        "mqm_accuracy": -g["acc"] / g["n_raters"],
        "n_raters": g["n_raters"].astype(int),
        "n_errors": g["n_errors"].astype(int),
    })
    # per (system, segment, rater) scores, standardized within each rater, then averaged over the raters
    pr = e.groupby(["system", "seg_id", "rater"], sort=True).agg(
        mqm=("weight", "sum"), mqm_fluency=("w_flu", "sum"), mqm_accuracy=("w_acc", "sum"))
    pr = -pr
    by_rater = pr.groupby(level="rater")
    mean, sd = by_rater.transform("mean"), by_rater.transform("std")  # ddof=1
    # a rater who scored one system only: its offset is that system's quality (rater and system confounded), so
    # its scores are put on the pooled scale of the raters whose offsets can be estimated
    if rater_offsets not in RATER_OFFSETS:
        raise ValueError(f"rater_offsets must be one of {RATER_OFFSETS}, got {rater_offsets!r}")
    confounded = single_system_raters(e) if rater_offsets == "unconfounded" else pd.Series(dtype=object)
    if len(confounded):
        rows = pr.index.get_level_values("rater").isin(confounded.index)
        free = pr[~rows] if (~rows).any() else pr
        mean.loc[rows], sd.loc[rows] = free.mean().to_numpy(), free.std().to_numpy()
    z = ((pr - mean) / sd.where(sd > 0)).fillna(0.0)  # sd 0 or NaN (one segment): no ranking information, z = 0
    z.columns = [f"{c}_z" for c in z.columns]
    zs = z.groupby(level=["system", "seg_id"], sort=True).mean()
    raters = pr.reset_index().groupby(["system", "seg_id"], sort=True)["rater"].agg(
        lambda r: ",".join(sorted(set(map(str, r)))))
    out = out.join(zs).join(raters)
    return out.reset_index()


def read_published_mqm(path: str | os.PathLike) -> pd.DataFrame:
    """The published ``*.avg_seg_scores.tsv``: columns ``system`` (renamed ``ref-A``->``ref``, ``ref-B``->``refB``),
    ``seg_id``, ``mqm_published`` (NaN where the file says ``None``: segment not annotated)."""
    p = pd.read_csv(path, sep=r"\s+", dtype=str, keep_default_na=False)
    back = {v: k for k, v in TED_PUBLISHED_NAMES.items()}
    return pd.DataFrame({
        "system": p["system"].map(lambda s: back.get(s, s)),
        "seg_id": p["seg_id"].astype(int),
        "mqm_published": pd.to_numeric(p["mqm_avg_score"].replace("None", np.nan), errors="raise"),
    })


def load_ted_zhen_mqm(folder: str | os.PathLike | None = None, base_url: str | None = None, *,
                      rater_offsets: str = "unconfounded") -> pd.DataFrame:
    """TED talks zh-en (WMT21 test suite) with expert MQM, one row per (system, segment): 15 x 529 = 7935 rows.

    Columns: ``system, doc, doc_id, seg_id, source, target, mqm, mqm_fluency, mqm_fluency_style, mqm_accuracy,
    rater, mqm_z, mqm_fluency_z, mqm_accuracy_z, n_raters, n_errors, mqm_published, is_human, ref, refB, ptb,
    ptb_ref, ptb_refB, rst_row``.

    * MQM as in :func:`mqm_scores` (Major 5, Minor 1, Minor Fluency/Punctuation 0.1, Non-translation 25,
      averaged over raters, negated); ``mqm_z``, ``mqm_fluency_z``, ``mqm_accuracy_z`` the rater-normalized
      scores of :func:`mqm_scores` (every TED row has one rater, ``rater``; ``rater_offsets`` as there: rater8
      scored only refB, so its rows are on the other raters' pooled scale; no MT row's z depends on it). ``mqm`` equals ``mqm_published`` (the repository's averages) on every
      annotated segment; ``tests/test_data.py`` checks all of them.
    * ``ref`` and ``refB`` are both references and scored systems: the rows with ``system`` in
      :data:`TED_HUMAN` have ``is_human=True``; the published files call them ``ref-A`` / ``ref-B``. In the
      published ranking refB is the best translation and ref (A) is below every MT system; WMT21 used refB as the
      reference for this set. Which to score against is the caller's choice.
    * ``ref`` / ``refB`` columns hold the two human translations of the row's segment, ``ptb``/``ptb_ref``/
      ``ptb_refB`` the shipped Stanford PCFG parses of target/ref/refB (``None`` where the parse file is absent
      or the parser failed), ``rst_row`` the row of ``texts.tsv`` (= line of the ``.ptb``/``.jsonl`` files).
    """
    d = dataset_dir(TED_ZHEN, folder, base_url)
    errors = read_mqm_errors(d / "mqm_ted_zhen.tsv")
    texts = ted_texts(errors)
    texts["rst_row"] = np.arange(len(texts))
    ptb = _read_ptb_lines(d / PTB_DIR / "texts.tsv.ptb", len(texts))
    texts["ptb"] = pd.Series(ptb, dtype=object)
    df = texts.merge(mqm_scores(errors, rater_offsets), on=["system", "seg_id"], how="left", validate="one_to_one")
    pub_path = d / "mqm_ted_zhen.avg_seg_scores.tsv"
    if pub_path.is_file():
        df = df.merge(read_published_mqm(pub_path), on=["system", "seg_id"], how="left", validate="one_to_one")
    else:
        df["mqm_published"] = np.nan
    df["is_human"] = df["system"].isin(TED_HUMAN)
    for human in TED_HUMAN:
        h = df.loc[df["system"] == human, ["seg_id", "target", "ptb"]]
        h = h.rename(columns={"target": human, "ptb": f"ptb_{human}"})
        df = df.merge(h, on="seg_id", how="left", validate="many_to_one")
    cols = ["system", "doc", "doc_id", "seg_id", "source", "target", "mqm", "mqm_fluency", "mqm_fluency_style",
            "mqm_accuracy", "rater", "mqm_z", "mqm_fluency_z", "mqm_accuracy_z", "n_raters", "n_errors", "mqm_published", "is_human", "ref", "refB", "ptb", "ptb_ref",
            "ptb_refB", "rst_row"]
    return df[cols].reset_index(drop=True)


# --------------------------------------------------------------------------------------------------------------
# newstest2021 zh-en MQM
# --------------------------------------------------------------------------------------------------------------

def write_news_zhen_texts(folder: str | os.PathLike) -> Path:
    """Derive the shared copy's files from the public ones in ``folder`` (the published MQM file and ``raw/``):
    ``segments.tsv`` (``seg_id`` 0-based here, ``wmt_seg_id`` the 1-based newstest2021 line, ``source``) for the
    segments rated for all of :data:`NEWS_ZHEN_SYSTEMS`, in newstest order, and ``ref-A.en``, ``<system>.en``
    on them."""
    folder = Path(folder)
    pub = read_published_mqm(folder / NEWS_ZHEN_SCORES)
    rated = pub[pub["system"].isin(NEWS_ZHEN_SYSTEMS) & pub["mqm_published"].notna()].groupby("seg_id").size()
    ids = sorted(int(i) for i in rated.index[rated == len(NEWS_ZHEN_SYSTEMS)])
    pick = lambda fname: (lambda lines: [lines[i - 1] for i in ids])(read_lines(folder / "raw" / fname))  # noqa: E731
    pd.DataFrame({"seg_id": range(len(ids)), "wmt_seg_id": ids, "source": pick("newstest2021.zh-en.src.zh")}).to_csv(
        folder / "segments.tsv", sep="\t", index=False, quoting=3)
    for s in ("ref-A", *NEWS_ZHEN_SYSTEMS):
        lines = pick("newstest2021.zh-en.ref.A.en" if s == "ref-A" else f"newstest2021.zh-en.hyp.{s}.en")
        (folder / f"{s}.en").write_text("".join(t + "\n" for t in lines), encoding="utf-8")
    return folder / "segments.tsv"


def load_newstest2021_zhen_mqm(folder: str | os.PathLike | None = None, base_url: str | None = None) -> pd.DataFrame:
    """newstest2021 zh-en (WMT21 news task) with expert MQM (Freitag et al. 2021), one row per (MT system, segment):
    8 x 650 = 5200 rows, the 650 segments rated for all of :data:`NEWS_ZHEN_SYSTEMS` (files as
    :func:`load_ted_zhen_mqm`'s: ``folder``/``base_url``, the shared copy or the public files downloaded).

    Columns (TED's names where the meaning is the same): ``system, seg_id`` (0-based, line of the ``.en`` files),
    ``wmt_seg_id`` (1-based newstest2021 line), ``source, target, mqm`` (the published average, negative = errors,
    higher is better: TED's sign), ``is_human`` (False: only MT rows), ``ref`` (reference A), ``ptb``, ``ptb_ref``
    (shipped Stanford PCFG parses; ``None`` where the parse file is absent or the line got none).

    What the data allow, unlike TED: **one public reference** (A; the MQM file rates ``ref-A`` and ``ref-B`` as
    systems, but B's text is not in the pinned wmt21-news-systems commit), so no human row is scored and no
    reference choice arises; **no rater ids**, so no rater-normalized ``mqm_z`` (only the published averages);
    **no document ids**, so resample source segments (``seg_id``), not documents.
    """
    d = dataset_dir(NEWS_ZHEN, folder, base_url)
    seg = _read_tsv(d / "segments.tsv").astype({"seg_id": int, "wmt_seg_id": int})
    n = len(seg)

    def lines(name: str) -> tuple[list[str], list[str | None]]:
        text = read_lines(d / f"{name}.en")
        if len(text) != n:
            raise ValueError(f"{name}.en has {len(text)} lines, segments.tsv has {n}")
        return text, _read_ptb_lines(d / PTB_DIR / f"{name}.en.ptb", n)

    ref, ref_ptb = lines("ref-A")
    df = pd.concat([seg.assign(system=s, target=t, ptb=pd.Series(p, dtype=object))
                    for s in NEWS_ZHEN_SYSTEMS for t, p in [lines(s)]], ignore_index=True)
    pub = read_published_mqm(d / NEWS_ZHEN_SCORES).rename(columns={"seg_id": "wmt_seg_id", "mqm_published": "mqm"})
    df = df.merge(pub, on=["system", "wmt_seg_id"], how="left", validate="many_to_one")
    df["is_human"] = False
    df["ref"], df["ptb_ref"] = ref * len(NEWS_ZHEN_SYSTEMS), pd.Series(ref_ptb * len(NEWS_ZHEN_SYSTEMS), dtype=object)
    cols = ["system", "seg_id", "wmt_seg_id", "source", "target", "mqm", "is_human", "ref", "ptb", "ptb_ref"]
    return df[cols]


# --------------------------------------------------------------------------------------------------------------
# WMT21 de-en
# --------------------------------------------------------------------------------------------------------------

WMT21_NAME_MAP = {"Nemo": "NVIDIA-NeMo", "HUMAN": "ref-B"}
"""Name fixes after stripping the numeric suffix (``UEdin.9`` -> ``UEdin``). ``HUMAN`` is reference B; see
:func:`load_wmt21_deen` for the evidence."""

SEG_DA_WARNING = (
    "The SID of ad-seg-scores-de-en.csv does not follow the line order of the txt files: with SID = line number, "
    "sentence chrF orders the systems of a segment in agreement with DA at a mean Kendall of about 0.005, and "
    "sentence BLEU's DARR tau is -0.21, at every small offset and in the txt-ts order too. The ratings were "
    "collected in document context and the WMT21 XML with document ids is not in this copy; a block-by-block "
    "offset search found no consistent mapping. The segment DA is therefore kept unaligned: use DA at system "
    "level only (system_da)."
)


def wmt21_system_name(name: str) -> str:
    """Canonical system name of a DA/COMET name: strip ``.N`` suffixes, ``Nemo`` -> ``NVIDIA-NeMo``,
    ``HUMAN`` -> ``ref-B``; other names unchanged."""
    base = re.sub(r"\.\d+$", "", name.strip())
    return WMT21_NAME_MAP.get(base, base)


@dataclass
class Wmt21DeEn:
    """newstest2021 de-en, as loaded by :func:`load_wmt21_deen`.

    ``segments``: one row per (MT system, line): ``system, seg_id`` (0-based line), ``source, target, ref_A, ref_B,
    ptb, ptb_ref_A, ptb_ref_B, rst_row`` (line of the RST ``.jsonl`` files; equals ``seg_id``).
    ``system_da``: ``system, da_raw, da_z, n, n_all, da_name, is_human`` (20 rows: 19 MT systems and ``ref-B``).
    ``seg_da_unaligned``: the segment DA file as is (``system, sid, da_raw, da_z, n, da_name``); ``sid`` is **not**
    a line number (``seg_da_warning`` says why). ``comet``: ``system, comet_ref_A, comet_ref_B`` (published
    system-level COMET; each file scores the other reference as a system, so ``ref-A`` has only ``comet_ref_B``).
    """

    segments: pd.DataFrame
    system_da: pd.DataFrame
    seg_da_unaligned: pd.DataFrame
    comet: pd.DataFrame
    folder: Path
    seg_da_warning: str = field(default=SEG_DA_WARNING)

    @property
    def systems(self) -> list[str]:
        return list(WMT21_SYSTEMS)


def _wmt21_segments(d: Path) -> pd.DataFrame:
    src = read_lines(d / "newstest2021.de-en.src.de")
    n = len(src)
    refs, ref_ptb = {}, {}
    for r in ("A", "B"):
        fname = f"newstest2021.de-en.ref.{r}.en"
        refs[r] = read_lines(d / fname)
        if len(refs[r]) != n:
            raise ValueError(f"{fname} has {len(refs[r])} lines, the source has {n}")
        ref_ptb[r] = _read_ptb_lines(d / PTB_DIR / f"{fname}.ptb", n)
    frames = []
    for system in WMT21_SYSTEMS:
        fname = f"newstest2021.de-en.hyp.{system}.en"
        hyp = read_lines(d / "system-outputs" / fname)
        if len(hyp) != n:
            raise ValueError(f"{fname} has {len(hyp)} lines, the source has {n}")
        frames.append(pd.DataFrame({
            "system": system, "seg_id": np.arange(n), "source": src, "target": hyp,
            "ref_A": refs["A"], "ref_B": refs["B"],
            "ptb": pd.Series(_read_ptb_lines(d / PTB_DIR / f"{fname}.ptb", n), dtype=object),
            "ptb_ref_A": pd.Series(ref_ptb["A"], dtype=object), "ptb_ref_B": pd.Series(ref_ptb["B"], dtype=object),
            "rst_row": np.arange(n),
        }))
    return pd.concat(frames, ignore_index=True)


def _wmt21_system_da(d: Path) -> pd.DataFrame:
    s = pd.read_csv(d / "humaneval" / "ad-sys-scores-de-en.csv", sep=r"\s+")
    out = pd.DataFrame({
        "system": s["SYS"].map(wmt21_system_name), "da_raw": s["RAW.SCR"].astype(float),
        "da_z": s["Z.SCR"].astype(float), "n": s["N"].astype(int), "n_all": s["N.ALL"].astype(int),
        "da_name": s["SYS"],
    })
    out["is_human"] = out["system"].str.startswith("ref-")
    unknown = set(out["system"]) - set(WMT21_SYSTEMS) - {"ref-B"}
    if unknown or out["system"].duplicated().any():
        raise ValueError(f"DA system names do not map onto the 19 systems: {sorted(unknown)}")
    return out.sort_values("da_z", ascending=False, ignore_index=True)


def _wmt21_seg_da(d: Path) -> pd.DataFrame:
    s = pd.read_csv(d / "humaneval" / "ad-seg-scores-de-en.csv", sep=r"\s+")
    return pd.DataFrame({
        "system": s["SYS"].map(wmt21_system_name), "sid": s["SID"].astype(int), "da_raw": s["RAW.SCR"].astype(float),
        "da_z": s["Z.SCR"].astype(float), "n": s["N"].astype(int), "da_name": s["SYS"],
    })


def _wmt21_comet(d: Path) -> pd.DataFrame:
    cols = []
    for r in ("A", "B"):
        c = pd.read_csv(d / "scores" / f"COMET_newstest2021_ref-{r}.tsv", sep="\t", header=None,
                        names=["system", f"comet_ref_{r}"])
        c["system"] = c["system"].map(wmt21_system_name)
        cols.append(c.set_index("system"))
    out = pd.concat(cols, axis=1).reset_index()
    unknown = set(out["system"]) - set(WMT21_SYSTEMS) - {"ref-A", "ref-B"}
    if unknown:
        raise ValueError(f"COMET system names do not map onto the 19 systems: {sorted(unknown)}")
    return out


def load_wmt21_deen(folder: str | os.PathLike | None = None, base_url: str | None = None) -> Wmt21DeEn:
    """newstest2021 German->English: 19 MT systems x 1000 lines, references A and B, DA and COMET.

    System names: DA names lose their numeric suffix (``UEdin.9`` -> ``UEdin``), ``Nemo`` is ``NVIDIA-NeMo``;
    all 19 DA and COMET names map onto the 19 txt systems (checked here, error otherwise).

    **The DA system ``HUMAN`` is reference B** (``ref-B`` in ``system_da``). Evidence: (1) to-English DA at WMT21
    is reference-based, and the quality-control items of type ``REF`` (the displayed reference scored as if it
    were a candidate) average z = +0.81 in ``ad-deen-good-stnd.csv``, while ``HUMAN``'s ordinary items average
    z = -0.07 (system rank 19 of 20): HUMAN is not the reference raters saw. (2) WMT published COMET against
    ref-A with ref-B scored as a system (``COMET_newstest2021_ref-A.tsv`` lists ``ref-B``), i.e. A is the
    primary reference of de-en and B the out-of-competition human "system". Consequence: score metrics against
    ref-A when ``ref-B`` is among the compared systems.

    **Segment DA is not joined to lines** (``seg_da_unaligned``; :data:`SEG_DA_WARNING` gives the measured reason).
    """
    d = dataset_dir(WMT21_DEEN, folder, base_url)
    return Wmt21DeEn(segments=_wmt21_segments(d), system_da=_wmt21_system_da(d), seg_da_unaligned=_wmt21_seg_da(d),
                     comet=_wmt21_comet(d), folder=d)


# --------------------------------------------------------------------------------------------------------------
# Parse files: what to parse, where the loaders look for the result
# --------------------------------------------------------------------------------------------------------------

def parse_jobs(name: str, folder: str | os.PathLike | None = None,
               base_url: str | None = None) -> list[tuple[Path, Path]]:
    """(input text file, expected ``.ptb`` output) pairs for the parses the loaders read, one sentence per line.

    The public repositories do not ship parses; make them with ``syneval-nb parse INPUT -o OUTPUT`` for each pair
    (same Stanford PCFG settings as the shared copy). For TED zh-en the input ``texts.target.txt`` (the target
    column of ``texts.tsv``, row order kept) is written here. Until a parse file exists the loaders leave the
    matching ``ptb*`` column ``None``.
    """
    d = dataset_dir(name, folder, base_url)
    if name == TED_ZHEN:
        if not (d / "texts.tsv").is_file():
            write_ted_texts(d)
        src = d / "texts.target.txt"
        if not src.is_file():
            texts = _read_tsv(d / "texts.tsv")
            src.write_text("".join(t + "\n" for t in texts["target"]), encoding="utf-8")
        return [(src, d / PTB_DIR / "texts.tsv.ptb")]
    if name == NEWS_ZHEN:
        return [(d / f"{s}.en", d / PTB_DIR / f"{s}.en.ptb") for s in ("ref-A", *NEWS_ZHEN_SYSTEMS)]
    files = [f"newstest2021.de-en.ref.{r}.en" for r in ("A", "B")]
    jobs = [(d / f, d / PTB_DIR / f"{f}.ptb") for f in files]
    jobs += [(d / "system-outputs" / f"newstest2021.de-en.hyp.{s}.en", d / PTB_DIR / f"newstest2021.de-en.hyp.{s}.en.ptb")
             for s in WMT21_SYSTEMS]
    return jobs


# --------------------------------------------------------------------------------------------------------------
# A user's own files
# --------------------------------------------------------------------------------------------------------------

def load_text_set(hyp_files: str | os.PathLike | Sequence[str | os.PathLike] | Mapping[str, str | os.PathLike],
                  ref_files: str | os.PathLike | Sequence[str | os.PathLike],
                  scores: str | os.PathLike | None = None,
                  source_file: str | os.PathLike | None = None) -> pd.DataFrame:
    """Plain-text files, one segment per line, as one frame: a row per (system, line).

    ``hyp_files``: one file, a list (system name = file name) or ``{system: file}``. ``ref_files``: one or more
    reference files. Columns: ``system, seg_id`` (0-based line), ``source`` (if ``source_file``), ``target``,
    ``ref_1 .. ref_k`` and ``refs`` (tuple of the k references). ``scores``: optional TSV with a header holding
    ``seg_id`` (0-based), ``system`` (required when there are several systems) and one or more numeric score
    columns, joined on (system, seg_id); rows the TSV does not score get NaN, and so does an empty cell. A cell
    that is not a number (or a ``seg_id`` that is not a whole number) is a ``ValueError`` naming the column and the
    row, as is a score column named like a column of the frame.

    Every file must have the same number of lines (and at least one); otherwise ``ValueError`` naming the file.
    """
    if isinstance(hyp_files, Mapping):
        hyps = {str(k): Path(v) for k, v in hyp_files.items()}
    else:
        seq = [hyp_files] if isinstance(hyp_files, (str, os.PathLike)) else list(hyp_files)
        hyps = {Path(p).name: Path(p) for p in seq}
        if len(hyps) != len(seq):
            raise ValueError("two hypothesis files share a file name; pass {system: path} instead")
    ref_seq = [ref_files] if isinstance(ref_files, (str, os.PathLike)) else list(ref_files)
    if not hyps or not ref_seq:
        raise ValueError("need at least one hypothesis file and one reference file")
    refs = read_references(ref_seq)
    n = len(refs[0])
    src = None
    if source_file is not None:
        src = read_lines(source_file)
        if len(src) != n:
            raise ValueError(f"source file {source_file} has {len(src)} lines, the references have {n}")
    frames = []
    for system, path in hyps.items():
        h = read_lines(path)
        if len(h) != n:
            raise ValueError(f"hypothesis file {path} has {len(h)} lines, the references have {n}")
        f = pd.DataFrame({"system": system, "seg_id": np.arange(n), "target": h})
        if src is not None:
            f.insert(2, "source", src)
        for k, r in enumerate(refs, 1):
            f[f"ref_{k}"] = r
        f["refs"] = list(zip(*refs))
        frames.append(f)
    df = pd.concat(frames, ignore_index=True)
    if scores is not None:
        df = _join_scores(df, Path(scores))
    return df


def _score_table_number(path: Path, column: str, row: int, text: str, integer: bool = False) -> float:
    """One cell of a score TSV as a number (``row`` 0-based; the file's line is ``row + 2`` after the header).
    An empty cell is a missing score (NaN); anything else must be a finite number (a whole one for ``seg_id``)."""
    t = text.strip()
    where = f"{path}: column {column!r}, row {row + 1} (line {row + 2} of the file)"
    if not t:
        if integer:
            raise ValueError(f"{where} is empty; every row needs a seg_id (0-based line number)")
        return float("nan")
    try:
        v = float(t)
    except ValueError:
        raise ValueError(f"{where}: {text!r} is not a number") from None
    if integer and not (math.isfinite(v) and v.is_integer()):
        raise ValueError(f"{where}: {text!r} is not a whole number; seg_id is a 0-based line number")
    if not integer and math.isinf(v):
        raise ValueError(f"{where}: {text!r} is not a finite number")
    return v


def read_references(paths: Sequence[str | os.PathLike], error: type[Exception] = ValueError) -> list[list[str]]:
    """The lines of line-aligned reference files (the one reader of ``load_text_set`` and ``load_mtme``): ``error``
    when the first is empty or another has a different number of lines."""
    refs = [read_lines(p) for p in paths]
    n = len(refs[0])
    if n == 0:
        raise error(f"reference file {paths[0]} is empty")
    for p, r in zip(paths, refs):
        if len(r) != n:
            raise error(f"reference file {p} has {len(r)} lines, {paths[0]} has {n}")
    return refs


def read_score_table(path: str | os.PathLike, n_segments: int, systems: Sequence[str] | None = None, *,
                     aliases: Mapping[str, str] | None = None, required: Sequence[str] = ()) -> pd.DataFrame:
    """The one reader of segment scores given by a user (``load_text_set(scores=)``, ``report --human-scores``):
    a TSV with a header, ``seg_id`` (0-based line number), ``system`` (required when ``systems`` has several) and
    one or more numeric columns (``required`` must be among them). Everything is checked before any work, each
    error naming the file, the row and the fix: a missing or empty file, ragged rows, a cell that is not a number
    (an empty cell is a missing score, NaN), a ``seg_id`` outside ``0..n_segments-1`` (ids in ``1..n_segments``
    are called out as 1-based), a file none of whose systems is scored, or one that spells a scored system in
    another case (``aliases`` maps other accepted spellings, e.g. file stems, to the system names), a (system,
    seg_id) given twice. Rows of other systems are left out (``attrs["left_out_note"]`` says which). The published
    MQM files (``*.avg_seg_scores.tsv`` of google/wmt-mqm-human-evaluation: ``system mqm_avg_score seg_id``,
    1-based, ``None``) are read too, as ``score``. Returns ``system`` (when given), ``seg_id``
    and the score columns; ``attrs["aliases_used"]`` maps the other spellings the file used to the system names."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"score table {path}: no such file")
    lines = [ln for ln in read_lines(path) if ln.strip() and not ln.lstrip().startswith("#")]
    if len(lines) < 2:
        raise ValueError(f"{path}: no scores (a header line and at least one row are needed)")
    published = lines[0].split() == ["system", "mqm_avg_score", "seg_id"]
    if published:  # google/wmt-mqm-human-evaluation's *.avg_seg_scores.tsv: whitespace, 1-based seg_id, None
        rows = [ln.split() for ln in lines[1:]]
        bad = next((i for i, r in enumerate(rows) if len(r) != 3), None)
        if bad is not None:
            raise ValueError(f"{path}: row {bad + 1} has {len(rows[bad])} fields; the published MQM format has 3 "
                             f"(system mqm_avg_score seg_id)")
        lines = ["system\tseg_id\tscore"] + [f"{r[0]}\t{int(r[2]) - 1 if r[2].isdigit() else r[2]}\t"
                                             f"{'' if r[1] == 'None' else r[1]}" for r in rows]
    header = lines[0].split("\t")
    for i, ln in enumerate(lines[1:]):
        if len(ln.split("\t")) != len(header):
            raise ValueError(f"{path}: row {i + 1} has {len(ln.split(chr(9)))} tab-separated fields, the header "
                             f"{len(header)} ({', '.join(header)})")
    s = pd.DataFrame([ln.split("\t") for ln in lines[1:]], columns=[h.strip() for h in header], dtype=str)
    several = systems is not None and len(systems) > 1
    if "seg_id" not in s.columns:
        raise ValueError(f"{path}: the score TSV needs a 'seg_id' column (0-based line), got {list(s.columns)}")
    keys = ["system", "seg_id"] if "system" in s.columns else ["seg_id"]
    if several and "system" not in s.columns:
        raise ValueError(f"{path}: several systems are scored, so the score TSV needs a 'system' column")
    value_cols = [c for c in s.columns if c not in keys]
    if not value_cols:
        raise ValueError(f"{path}: no score column besides {keys}")
    for c in required:
        if c not in value_cols:
            raise ValueError(f"{path}: the TSV needs the columns {', '.join(keys + list(required))} "
                             f"(missing {c!r}; found {list(s.columns)})")
    s["seg_id"] = [int(_score_table_number(path, "seg_id", i, t, integer=True)) for i, t in enumerate(s["seg_id"])]
    for c in value_cols:
        s[c] = np.array([_score_table_number(path, c, i, t) for i, t in enumerate(s[c])], dtype=float)
    bad = s[(s["seg_id"] < 0) | (s["seg_id"] >= n_segments)]
    if len(bad):
        one_based = s["seg_id"].min() >= 1 and s["seg_id"].max() == n_segments and not published
        raise ValueError(f"{path}: seg_id {int(bad['seg_id'].iloc[0]) + published} (row {bad.index[0] + 1}) is "
                         f"outside the files' {int(published)}..{n_segments - 1 + published}"
                         + ("; the ids look 1-based (1.." f"{n_segments}): subtract 1, seg_id is the 0-based line "
                            "number" if one_based else "")
                         + (f"; this published MQM file numbers the lines of a test set of {s['seg_id'].max() + 1}: "
                            "score files of that whole test set, or give a TSV system, seg_id (0-based), score of "
                            "your lines" if published else ""))
    if "system" in s.columns:
        s["system"] = [str(x).strip() for x in s["system"]]
        if systems is not None:
            known = {**(aliases or {}), **{x: x for x in systems}}
            unknown = sorted(set(s["system"]) - set(known))
            also = f" (also accepted: {sorted(aliases)})" if aliases else ""
            if unknown and len(unknown) == s["system"].nunique():
                raise ValueError(f"{path}: none of its systems {unknown[:5]} is among the scored systems "
                                 f"{list(systems)}{also}")
            present = {known[y] for y in set(s["system"]) - set(unknown)}
            for u in unknown:  # a scored system spelled in another case would lose its scores: refused
                hits = [x for x in known if x.casefold() == u.casefold() and known[x] not in present]
                if hits:
                    raise ValueError(f"{path}: system {u!r} is not {hits[0]!r} (system names are case-sensitive): "
                                     f"its scores would be lost; rename it in the file")
            s = s[~s["system"].isin(unknown)]  # systems not scored (a WMT file rates them all): left out, noted
            s.attrs["left_out_note"] = "; ".join(
                [f"{path}: read as the published MQM format (seg_id 1-based, None: not rated)"] * published
                + [f"{'the' if published else f'{path}: the'} rows of {len(unknown)} system(s) that are not "
                   f"scored are left out ({', '.join(unknown[:5])}{', ...' if len(unknown) > 5 else ''})"]
                * bool(unknown)
            ) or None
            used = {x: known[x] for x in s["system"] if x not in systems}
            s["system"] = [known[x] for x in s["system"]]
            s.attrs["aliases_used"] = used  # other spellings met, in order of appearance: the caller may note them
    if s.duplicated(keys).any():
        dup = s[s.duplicated(keys, keep=False)].iloc[0]
        raise ValueError(f"{path}: {' and '.join(f'{k} {dup[k]}' for k in keys)} is given twice")
    return s


def _join_scores(df: pd.DataFrame, path: Path) -> pd.DataFrame:
    s = read_score_table(path, int(df["seg_id"].max()) + 1, list(dict.fromkeys(df["system"])))
    taken = [c for c in s.columns if c not in ("system", "seg_id") and c in df.columns]
    if taken:
        raise ValueError(f"{path}: score column {taken[0]!r} has the name of a column of the text frame "
                         f"({', '.join(df.columns)}); rename it")
    keys = ["system", "seg_id"] if "system" in s.columns else ["seg_id"]
    return df.merge(s, on=keys, how="left", validate="many_to_one" if keys == ["seg_id"] else "one_to_one")


def rst_files(name: str, folder: str | os.PathLike | None = None) -> Path:
    """Folder of the shipped RST trees of a data set (``"ted-zhen-mqm"`` or ``"wmt21-deen"``)."""

    return dataset_dir(name, folder) / RST_DIR


def ted_rst(ted, folder: str | os.PathLike | None = None) -> dict[str, list]:
    """Shipped RST trees for a ``load_ted_zhen_mqm`` frame: ``{"rst": [...], "rst_ref": [...], "rst_refB": [...]}``
    aligned with the rows (the references looked up by ``seg_id``)."""
    path = rst_files("ted-zhen-mqm", folder) / "texts.tsv.jsonl"
    trees = _aligned_rst(path, ted["rst_row"])
    out = {"rst": [trees[i] for i in ted["rst_row"]]}
    for human in ("ref", "refB"):
        rows = ted.loc[ted["system"] == human].set_index("seg_id")["rst_row"]
        missing = sorted(set(ted["seg_id"]) - set(rows.index))
        if missing:
            raise ValueError(f"no {human!r} row for seg_id {missing[0]} ({len(missing)} segments): cannot look up "
                             f"the reference's RST tree")
        out[f"rst_{human}"] = [trees[rows[s]] for s in ted["seg_id"]]
    return out


def _aligned_rst(path: Path, rows) -> list[dict | None]:
    """:func:`load_rst_jsonl`, checked to cover every row index in ``rows`` (a clear error for a stale or
    truncated file instead of an IndexError)."""
    trees = load_rst_jsonl(path)
    need = int(max(rows, default=-1)) + 1
    if len(trees) < need:
        raise RSTFormatError(f"{path} has {len(trees)} trees but the data need row {need - 1}: the RST file does not "
                             f"match the loaded data (re-run `syneval-nb rst` on the current texts)")
    return trees


def wmt21_rst(segments, folder: str | os.PathLike | None = None) -> dict[str, list]:
    """Shipped RST trees for ``load_wmt21_deen().segments``: ``{"rst", "rst_ref_A", "rst_ref_B"}`` per row."""
    d = rst_files("wmt21-deen", folder)
    cache: dict[str, list] = {}

    def get(fname: str) -> list:
        if fname not in cache:
            cache[fname] = _aligned_rst(d / f"{fname}.jsonl", segments["rst_row"])
        return cache[fname]

    rst = [get(f"newstest2021.de-en.hyp.{s}.en")[i] for s, i in zip(segments["system"], segments["rst_row"])]
    out = {"rst": rst}
    for r in ("A", "B"):
        refs = get(f"newstest2021.de-en.ref.{r}.en")
        out[f"rst_ref_{r}"] = [refs[i] for i in segments["rst_row"]]
    return out


# --------------------------------------------------------------------------------------------------------------
# The WMT metrics-task layout (google-research/mt-metrics-eval), in and out
# --------------------------------------------------------------------------------------------------------------

MTME_LEVELS = ("sys", "domain", "doc", "seg")


class MtmeFormatError(ValueError):
    """A folder or file that is not in the metrics task's layout (the message is one line naming the file)."""


def read_mtme_scores(path: str | os.PathLike) -> dict[str, list[float | None]]:
    """A score file of the layout (``human-scores/LP.NAME.LEVEL.score``, ``METRIC-REF.LEVEL.score``) as
    ``{system: [score, ...]}`` in file order: each line is ``SYSTEM SCORE`` (whitespace-separated, as
    mt-metrics-eval's ``ReadScoreFile`` splits it), ``None`` a missing score. A line with another number of fields
    or a score that is not a number is a :class:`MtmeFormatError` naming the line."""
    p = Path(path)
    if not p.is_file():
        raise MtmeFormatError(f"score file {p}: no such file")
    out: dict[str, list[float | None]] = {}
    for i, line in enumerate(read_lines(p), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise MtmeFormatError(f"{p}, line {i}: expected 'SYSTEM SCORE', got {line!r}")
        name, text = parts
        if text == "None":
            value = None
        else:
            try:
                value = float(text)
            except ValueError:
                raise MtmeFormatError(f"{p}, line {i}: score {text!r} is not a number") from None
            if not math.isfinite(value):
                raise MtmeFormatError(f"{p}, line {i}: score {text!r} is not a finite number")
        out.setdefault(name, []).append(value)
    if not out:
        raise MtmeFormatError(f"score file {p} is empty")
    return out


def write_mtme_scores(path: str | os.PathLike, scores: Mapping[str, Sequence[float]]) -> Path:
    """Write ``{system: [score, ...]}`` as the metrics task takes metric scores: one ``SYSTEM<TAB>SCORE`` line per
    score, each system's scores in order (a ``seg`` file: all its segments in segment order; ``sys``: one line).
    Metric scores may not be missing: a NaN/None or a system name with white space is a :class:`MtmeFormatError`.
    The file is written whole (a temporary file, then renamed)."""
    p = Path(path)
    lines = []
    for name, values in scores.items():
        if not name or any(c.isspace() for c in name):
            raise MtmeFormatError(f"{p}: system name {name!r} is empty or holds white space")
        for v in values:
            if v is None or not math.isfinite(float(v)):
                raise MtmeFormatError(f"{p}: system {name}: a missing score (the metrics task allows none)")
            lines.append(f"{name}\t{float(v)!r}\n")
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(lines)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


@dataclass
class MtmeFiles:
    """The files of one language pair in a test set's folder of the layout."""

    folder: Path
    lp: str
    systems: dict[str, Path]  # system-outputs/LP/NAME.txt
    references: dict[str, Path]  # references/LP.NAME.txt
    source: Path | None = None  # sources/LP.txt
    documents: Path | None = None  # documents/LP.docs
    human: dict[tuple[str, str], Path] = field(default_factory=dict)  # (NAME, LEVEL) -> human-scores/LP.NAME.LEVEL.score
    ignored: list[Path] = field(default_factory=list)  # human-scores/LP.* files not named LP.NAME.LEVEL.score


def mtme_files(folder: str | os.PathLike, lp: str) -> MtmeFiles:
    """Find the files of language pair ``lp`` in ``folder`` (a test set's folder, e.g. ``wmt23/``)."""
    d = Path(folder)
    if not d.is_dir():
        raise MtmeFormatError(f"--mtme {d}: no such folder")
    sys_dir = d / "system-outputs" / lp
    systems = {p.name[:-len(".txt")]: p for p in sorted(sys_dir.glob("*.txt"))}
    if not systems:
        raise MtmeFormatError(f"{d}: no system outputs for {lp} (expected {sys_dir}/<system>.txt)")
    refs = {}
    for p in sorted((d / "references").glob(f"{lp}.*.txt")):
        name = p.name[len(lp) + 1:-len(".txt")]
        if "." in name or "-" in name or name in ("all", "src"):
            raise MtmeFormatError(f"{p}: a reference name holds no '.' or '-' and is not 'all' or 'src'")
        refs[name] = p
    if not refs:
        raise MtmeFormatError(f"{d}: no references for {lp} (expected {d / 'references'}/{lp}.<name>.txt)")
    human, ignored = {}, []
    for p in sorted((d / "human-scores").glob(f"{lp}.*.score")):
        parts = p.name.split(".")
        if len(parts) < 4 or parts[-2] not in MTME_LEVELS:
            ignored.append(p)  # a stray file: an error only when human scores are looked for (mtme_human_file)
            continue
        human[(".".join(parts[1:-2]), parts[-2])] = p
    src = d / "sources" / f"{lp}.txt"
    docs = d / "documents" / f"{lp}.docs"
    return MtmeFiles(d, lp, systems, refs, src if src.is_file() else None, docs if docs.is_file() else None, human,
                     ignored)


def ignored_note(files: MtmeFiles) -> str:
    if not files.ignored:
        return ""
    return (f" ({', '.join(p.name for p in files.ignored)} "
            f"{'is' if len(files.ignored) == 1 else 'are'} not named {files.lp}.NAME.LEVEL.score, LEVEL one of "
            f"{', '.join(MTME_LEVELS)})")


def read_mtme_documents(path: str | os.PathLike) -> tuple[list[str], list[str]]:
    """``documents/LP.docs``: one ``DOMAIN DOCNAME`` line per segment -> ``(domains, docs)``, one entry per
    segment. A document must be one contiguous block of segments (as mt-metrics-eval requires)."""
    p = Path(path)
    domains, docs = [], []
    for i, line in enumerate(read_lines(p), 1):
        parts = line.split()
        if len(parts) != 2:
            raise MtmeFormatError(f"{p}, line {i}: expected 'DOMAIN DOCNAME', got {line!r}")
        domains.append(parts[0])
        docs.append(parts[1])
    seen, prev = set(), None
    for i, doc in enumerate(docs, 1):
        if doc != prev:
            if doc in seen:
                raise MtmeFormatError(f"{p}, line {i}: document {doc!r} is not one contiguous block of segments")
            seen.add(doc)
            prev = doc
    return domains, docs


def mtme_seg_scores(path: str | os.PathLike, systems: Sequence[str], n: int) -> dict[str, np.ndarray]:
    """A ``seg``-level score file as ``{system: array of n scores}`` (NaN for ``None``), for the given systems
    (others in the file are ignored; a system the file lacks is all NaN). A system with another number of scores
    than ``n`` is a :class:`MtmeFormatError`."""
    raw = read_mtme_scores(path)
    out = {}
    exact = set(systems)
    for name in raw:  # a scored system spelled in another case is refused, as the TSV path refuses unknown names
        if name not in exact:
            hits = [s for s in systems if s.casefold() == name.casefold() and s not in raw]
            if hits:
                raise MtmeFormatError(f"{path}: system {name!r} is not {hits[0]!r} (system names are "
                                      f"case-sensitive): its scores would be lost; rename it in the file")
    for s in systems:
        vals = raw.get(s)
        if vals is None:
            out[s] = np.full(n, np.nan)
            continue
        if len(vals) != n:
            raise MtmeFormatError(f"{path}: system {s} has {len(vals)} segment scores, the test set has {n} segments")
        out[s] = np.array([np.nan if v is None else v for v in vals], dtype=float)
    return out


def load_mtme(folder: str | os.PathLike, lp: str, refs: str | Sequence[str] | None = None,
              human: str | Sequence[str] | None = None) -> pd.DataFrame:
    """A test set in the WMT metrics-task layout as the tidy frame the notebooks use: one row per (system, segment).

    ``folder`` holds ``system-outputs/LP/<system>.txt``, ``references/LP.<ref>.txt`` and optionally
    ``sources/LP.txt``, ``documents/LP.docs`` and ``human-scores/LP.<name>.seg.score``. ``refs``: the reference
    name(s) to score against (default: all, sorted by name). ``human``: the segment-level human scores to join
    (names such as ``"mqm"``; default: every ``seg`` file there).

    Columns: ``system, seg_id`` (0-based line), ``domain, doc`` (with documents), ``source`` (with sources),
    ``target``, ``ref_1 .. ref_k`` and ``refs`` (the tuple, as :func:`load_text_set`), ``is_human`` (the system is a
    reference of the folder) and one column per human score (NaN where the file says ``None``). Systems that are the
    chosen references are left out (the task scores every system except the references used).
    ``attrs``: ``lp``, ``ref_names``, ``human_scores``, ``system_files`` ``{system: path}``, ``ref_files``.
    """
    files = mtme_files(folder, lp)
    names = sorted(files.references) if refs is None else [refs] if isinstance(refs, str) else list(refs)
    for r in names:
        if r not in files.references:
            raise MtmeFormatError(f"reference {r!r} is not in {files.folder / 'references'} (there: "
                                  f"{', '.join(sorted(files.references))})")
    ref_lines = read_references([files.references[r] for r in names], MtmeFormatError)
    n = len(ref_lines[0])
    systems = {s: p for s, p in files.systems.items() if s not in names}
    if not systems:
        raise MtmeFormatError(f"{files.folder}: no system for {lp} besides the references {names}")
    seg_human = {name: p for (name, level), p in files.human.items() if level == "seg"}
    wanted = sorted(seg_human) if human is None else [human] if isinstance(human, str) else list(human)
    for h in wanted:
        if h not in seg_human:
            raise MtmeFormatError(f"no segment-level human scores {lp}.{h}.seg.score in {files.folder / 'human-scores'}"
                                  + ignored_note(files))
    if human is None and files.ignored:
        raise MtmeFormatError(f"{files.folder / 'human-scores'}: every seg file is read and one is not in the "
                              f"layout{ignored_note(files)}: rename or remove it, or name the human scores (human=)")
    cols: dict[str, list] = {"system": [], "seg_id": [], "target": []}
    for s, p in systems.items():
        lines = read_lines(p)
        if len(lines) != n:
            raise MtmeFormatError(f"{p} has {len(lines)} lines, the references have {n}")
        cols["system"] += [s] * n
        cols["seg_id"] += list(range(n))
        cols["target"] += lines
    df = pd.DataFrame(cols)
    k = len(systems)
    if files.documents is not None:
        domains, docs = read_mtme_documents(files.documents)
        if len(docs) != n:
            raise MtmeFormatError(f"{files.documents} has {len(docs)} lines, the references have {n}")
        df.insert(2, "domain", domains * k)
        df.insert(3, "doc", docs * k)
    if files.source is not None:
        src = read_lines(files.source)
        if len(src) != n:
            raise MtmeFormatError(f"{files.source} has {len(src)} lines, the references have {n}")
        df.insert(df.columns.get_loc("target"), "source", src * k)
    for i, lines in enumerate(ref_lines, 1):
        df[f"ref_{i}"] = lines * k
    df["refs"] = list(zip(*ref_lines)) * k
    df["is_human"] = df["system"].isin(list(files.references))
    for h in wanted:
        scores = mtme_seg_scores(seg_human[h], list(systems), n)
        df[h] = np.concatenate([scores[s] for s in systems])
    df.attrs.update(lp=lp, ref_names=names, human_scores=wanted, system_files={s: str(p) for s, p in systems.items()},
                    ref_files=[str(files.references[r]) for r in names],
                    documents=str(files.documents) if files.documents else None)
    return df
