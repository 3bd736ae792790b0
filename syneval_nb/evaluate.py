"""The one evaluation driver: metrics x systems -> segment scores, corpus scores with intervals, paired tests.

:func:`evaluate` is the engine behind ``syneval-nb score`` and ``syneval-nb report`` (notebook 09); :func:`load_files`
reads plain-text systems and references (and ready parses) into :class:`~syneval_nb.metrics.Corpus` objects.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from syneval_nb.metrics import registry as M
from syneval_nb.corpus import first_word_mismatch
from syneval_nb.stats import bootstrap_weights, monte_carlo_p, percentile_ci
from syneval_nb.textio import read_lines
from syneval_nb.trees.ptb import TreeFormatError, is_empty_parse, read_ptb_flat
from syneval_nb.trees.rst import edus, load_rst_jsonl


__all__ = ["evaluate", "ScoreInputError"]


class ScoreInputError(ValueError):
    """Bad input files (the message is the one line the CLI prints)."""


# ============================================================================================== engine


@dataclass
class Evaluation:
    """Scores of several systems by several metrics on the same segments.

    ``table``: one row per (system, metric): ``system, metric, score, ci_low, ci_high, n, n_missing`` (segments left
    out: no parsed reference), ``n_empty`` (empty hypotheses), ``n_unparsed`` (non-empty hypotheses without the
    parse or RST tree the metric needs; both kinds count with the metric's worst value), ``higher_is_better,
    signature`` and, with a baseline, ``delta, delta_low, delta_high, p`` (bootstrap p of "better than the
    baseline": ``(k + 1) / (B + 1)``, ``k`` resamples where the system is not better) and ``p_worse`` (the same
    for "worse"); ``note``: why an interval or test is NaN (one resampling unit), else "".
    ``segments``: one row per (system, segment) with ``system, seg`` (0-based line) and one column per metric.
    ``scores``: ``{(system, metric): Score}``; ``stats``: ``{(system, metric): statistics matrix}``;
    ``metrics``: the metric objects in order; ``failures``: ``{system: Corpus.failures}``."""

    table: Any
    segments: Any
    scores: dict
    stats: dict
    metrics: list
    failures: dict
    baseline: str | None = None
    n_resamples: int = 0
    seed: int = 0
    signatures: dict = field(default_factory=dict)
    unit: str = "segment"  # the bootstrap's resampling unit ("document" with the metrics-task layout's documents)
    human: dict = field(default_factory=dict)  # metric -> its Pearson r with human scores (syneval-nb score)
    brevity_penalty: dict = field(default_factory=dict)  # requested name -> the -BP variant scored (see evaluate)
    empty: dict = field(default_factory=dict)  # system -> its empty hypothesis lines (0-based), counted as empty


def _weighted_scores(metric: M.Metric, S: np.ndarray, n_resamples: int, seed: int,
                     groups: Sequence | None = None) -> np.ndarray:
    """The metric's corpus score in each bootstrap resample of segments, or of the units in ``groups`` (one label
    per segment, e.g. its document) (the same resamples for every call with the same ``seed``, segments and units:
    :func:`syneval_nb.stats.bootstrap_weights`)."""

    S0 = np.where(np.isnan(S).any(axis=1)[:, None], 0.0, S)
    out = [metric.score_from_stats(w @ S0) for w in bootstrap_weights(len(S0), n_resamples, seed, groups=groups)]
    return np.concatenate(out) if out else np.zeros(0)


def comparison_metrics(metric_specs: Sequence[Any], brevity_penalty: bool = True) -> tuple[list, dict]:
    """The metric objects :func:`evaluate` compares systems with, and ``{requested name: name scored}`` for the
    metrics it replaced. ``brevity_penalty=True`` (the default of ``evaluate``, ``score`` and ``report``): the
    precision-only STM, DSTM and HWCM and the kernel metrics TKM and DTKM (and their ``@spacy`` and decay variants)
    are scored as their ``-BP`` variants (BLEU's brevity penalty, ``bp:yes``), so that no system gains by deleting
    or truncating lines (issue 37: emptying 3 of the example's 30 lines, or 10 of WMT21's 1000, already raised the
    precision-only scores significantly, a shortfall of 1-3% of the words, within the spread of honest systems'
    lengths; cutting the scrambled example system's lines to 5 words raised TKM; with the penalty none did). The chapters keep the paper's precision-only definitions (the metric classes' default). Two saved
    learned metrics of one kind (``-m a.joblib,b.joblib``, both "Ridge") are named after their files
    (``Ridge:a``, ``Ridge:b``); two specs that still come to the same name raise ``ValueError``."""
    objs, replaced = [], {}
    for spec in metric_specs:
        m = M.get(spec)
        if brevity_penalty and getattr(m, "brevity_penalty", True) is False and hasattr(m, "variant"):
            bp = m.variant(brevity_penalty=True)
            replaced[m.name] = bp.name
            m = bp
        objs.append(m)
    names = [m.name for m in objs]
    for m, spec, n in zip(objs, metric_specs, names):  # two saved models (both "Ridge") go by their files' names
        if names.count(n) > 1 and isinstance(spec, (str, Path)) and Path(spec).is_file():
            m.name = f"{n}:{Path(spec).stem}"
    names = [m.name for m in objs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        why = (" (with the brevity penalty of comparisons, " + ", ".join(f"{a} is scored as {b}" for a, b in
                                                                       replaced.items() if b in twice) + ")"
               if any(b in twice for b in replaced.values()) else "")
        raise ValueError(f"a metric is named twice: {', '.join(twice)}{why}")
    return objs, replaced


def unestimable(n_units: int, unit: str) -> str:
    """Why an interval or a paired test cannot be estimated from ``n_units`` resampling units ("" when it can)."""
    if n_units == 0:
        return f"no scorable {unit}: nothing to estimate"
    if n_units == 1:
        return f"one {unit}: an interval or a test needs at least two {unit}s"
    return ""


def evaluate(corpora: Mapping[str, M.Corpus], metric_specs: Sequence[Any], *, n_resamples: int = 1000,
             seed: int = 0, baseline: str | None = None, alpha: float = 0.05, progress: bool = True,
             workers: int = 1, cache: Any = True, scheduler: Any = None, groups: Sequence | None = None,
             rst_syntax: str = "kit", brevity_penalty: bool = True, unit: str | None = None,
             max_length: int | None = None, split: str | None = None) -> Evaluation:
    """Score every system (``{name: Corpus}``, same segments) with every metric; intervals and paired tests from
    resampling segments (``n_resamples = 0``: no intervals), or the units of ``groups`` (one label per segment,
    e.g. the document of the WMT metrics-task layout; whole units are drawn). Parses/RST trees the metrics need and the corpora
    lack are made first, all at once (:func:`syneval_nb.metrics.prepare`; on a Dask cluster with ``scheduler``;
    ``rst_syntax``: who parses the RST parser's sentences, see there; ``max_length``, ``split``: the Stanford
    parse's length limit and mode, ``None`` for the kit's defaults).

    ``unit``: the name of the resampling unit in notes and output (default ``"segment"``, or ``"group"`` with
    ``groups``; ``syneval-nb score --documents`` says ``"document"``).

    ``brevity_penalty`` (default ``True``): STM, DSTM, HWCM, TKM and DTKM are compared as their ``-BP`` variants
    (:func:`comparison_metrics`; ``Evaluation.brevity_penalty`` maps the requested names to them), so that no
    system gains by deleting or truncating lines; ``False`` scores the paper's precision-only definitions.

    Statistics that cannot be estimated are NaN with the reason in the table's ``note`` column (one resampling
    unit, or none), never a point interval or p = 0; bootstrap p-values are ``(k + 1) / (B + 1)``
    (:func:`syneval_nb.stats.monte_carlo_p`)."""
    import pandas as pd

    objs, replaced = comparison_metrics(metric_specs, brevity_penalty)
    systems = list(corpora)
    if not systems:
        raise ValueError("no systems to score")
    n = {len(c) for c in corpora.values()}
    if len(n) != 1:
        raise ValueError(f"the systems have different numbers of segments: { {k: len(c) for k, c in corpora.items()} }")
    if groups is not None and len(groups) != next(iter(n)):
        raise ValueError(f"{len(groups)} resampling unit labels given for {next(iter(n))} segments")
    if baseline is not None and baseline not in corpora:
        raise ValueError(f"baseline {baseline!r} is not one of the systems {systems}")
    needs = {i for m in objs for i in m.inputs}
    M.prepare(list(corpora.values()), tuple(needs - {"text"}), workers=workers, cache=cache, progress=progress,
              scheduler=scheduler, rst_syntax=rst_syntax, max_length=max_length, split=split)
    scores, boot, rows = {}, {}, []
    seg = {s: {"system": [s] * len(c), "seg": list(range(len(c)))} for s, c in corpora.items()}
    stats = {(s, m.name): by_system[s] for m, by_system in zip(objs, M.score_systems(objs, corpora,
                                                                                    progress=progress))
             for s in systems}
    for m in objs:
        for s in systems:
            S = stats[(s, m.name)]
            scores[(s, m.name)] = m.corpus_from_stats(S)
            seg[s][m.name] = m.segment_scores(S)
            if n_resamples:
                boot[(s, m.name)] = _weighted_scores(m, S, n_resamples, seed, groups)
    empty = {s: {i for i, h in enumerate(c.hyps) if not h.strip()} for s, c in corpora.items()}
    unit = unit or ("segment" if groups is None else "group")
    labels = np.arange(next(iter(n))) if groups is None else np.asarray(list(groups), dtype=object)
    for m in objs:
        for s in systems:
            sc = scores[(s, m.name)]
            unparsed = set().union(*(corpora[s].failures.get((k, "hyp"), ()) for k in m.inputs)) - empty[s]
            scorable = ~np.isnan(stats[(s, m.name)]).any(axis=1) if stats[(s, m.name)].ndim == 2 else \
                np.zeros(len(labels), bool)
            note = unestimable(len(set(labels[scorable].tolist())), unit) if n_resamples else ""
            row = {"system": s, "metric": m.name, "score": sc.score, "ci_low": math.nan, "ci_high": math.nan,
                   "n": sc.n, "n_missing": sc.n_missing, "n_empty": len(empty[s]), "n_unparsed": len(unparsed),
                   "higher_is_better": m.higher_is_better,
                   "signature": sc.signature}
            if n_resamples and not note:
                lo, hi = percentile_ci(boot[(s, m.name)], alpha)
                row["ci_low"], row["ci_high"] = float(lo), float(hi)
            if baseline is not None:
                row.update(delta=sc.score - scores[(baseline, m.name)].score, delta_low=math.nan,
                           delta_high=math.nan, p=math.nan, p_worse=math.nan)
                if n_resamples and s != baseline and not note:
                    d = boot[(s, m.name)] - boot[(baseline, m.name)]
                    lo, hi = percentile_ci(d, alpha)
                    better = d if m.higher_is_better else -d
                    row.update(delta_low=float(lo), delta_high=float(hi), p=monte_carlo_p(better),
                               p_worse=monte_carlo_p(-better))
            row["note"] = note
            rows.append(row)
    table = pd.DataFrame(rows)
    segments = pd.concat([pd.DataFrame(v) for v in seg.values()], ignore_index=True)
    failures = {s: {f"{k[0]} {k[1]}": v for k, v in c.failures.items() if v} for s, c in corpora.items()}
    return Evaluation(table, segments, scores, stats, objs, failures, baseline, n_resamples, seed,
                      {m.name: scores[(systems[0], m.name)].signature for m in objs},
                      unit, brevity_penalty=replaced, empty={s: sorted(v) for s, v in empty.items()})


# ============================================================================================== files


def _read(path: str | Path, what: str) -> list[str]:

    p = Path(path)
    if not p.is_file():
        raise ScoreInputError(f"{what} {p}: no such file")
    lines = read_lines(p)
    if not lines:
        raise ScoreInputError(f"{what} {p} is empty")
    return lines


def find_parse_file(parses_dir: str | Path, text_file: str | Path, suffix: str) -> Path | None:
    """``DIR/<file name><suffix>``, else the one ``DIR/*/<file name><suffix>`` (the shipped data's layout)."""
    d = Path(parses_dir)
    name = Path(text_file).name + suffix
    if (d / name).is_file():
        return d / name
    hits = sorted(d.glob(f"*/{name}"))
    if len(hits) > 1:
        raise ScoreInputError(f"--parses {d}: several {name} ({', '.join(str(h) for h in hits)})")
    return hits[0] if hits else None


def _check_words(parse_file: Path, text_file: str, texts: Sequence[str], words: Sequence[Sequence[str] | None]):
    """Refuse parses of other text (:func:`syneval_nb.metrics.base.first_word_mismatch`, as ``Corpus`` does)."""
    if (bad := first_word_mismatch(texts, words)) is not None:
        raise ScoreInputError(f"{parse_file} line {bad[0] + 1} does not hold the words of {text_file} line {bad[0] + 1}"
                              f" {bad[1]}: these parses belong to another text; parse the file again (syneval-nb "
                              f"parse) or fix --parses")


def _read_parses(parses_dir: str | Path | None, files: Sequence[str], texts: Mapping[str, list[str]],
                 need: set[str]):
    """Ready parses from ``--parses``: ``{file: (ptb lines or None, rst trees or None)}``, each line checked
    against its text line (:func:`_check_words`)."""

    out = {}
    for f in files:
        ptb = rst = None
        n = len(texts[f])
        if parses_dir is not None:
            if "ptb" in need and (p := find_parse_file(parses_dir, f, ".ptb")) is not None:
                ptb = _read(p, "parse file")
                if len(ptb) != n:
                    raise ScoreInputError(f"parse file {p} has {len(ptb)} lines but {f} has {n}")
                try:
                    trees = [None if not x.strip() or is_empty_parse(x) else read_ptb_flat(x, line_no=i + 1)
                             for i, x in enumerate(ptb)]
                except TreeFormatError as e:
                    raise ScoreInputError(f"parse file {p}: {str(e).splitlines()[0]}") from None
                _check_words(p, f, texts[f], [None if t is None else [w for w in t.words if w is not None]
                                              for t in trees])
            if "rst" in need and (p := find_parse_file(parses_dir, f, ".jsonl")) is not None:
                rst = load_rst_jsonl(p)
                if len(rst) != n:
                    raise ScoreInputError(f"RST file {p} has {len(rst)} lines but {f} has {n}")
                _check_words(p, f, texts[f], [None if r is None else " ".join(edus(r)).split() for r in rst])
        out[f] = (ptb, rst)
    return out


def system_names(files: Sequence[str]) -> list[str]:
    """Default system names: the file stems, as in the WMT layouts (``GPT4-5shot.txt`` -> ``GPT4-5shot``); the file
    names when two stems are equal, the paths when two names are."""
    for names in ([Path(f).stem for f in files], [Path(f).name for f in files]):
        if len(set(names)) == len(names):
            return names
    return [str(f) for f in files]


def file_aliases(names: Sequence[str], files: Sequence[str]) -> dict[str, str]:
    """``{other spelling: system name}``: each system's file name and file stem, where they are not its name (the
    spellings ``--human-scores`` and ``--baseline`` accept besides the names)."""
    out: dict[str, str] = {}
    for name, f in zip(names, files):
        for a in (Path(f).name, Path(f).stem):
            if a not in names:
                out.setdefault(a, name)
    return out


def alias_note(used: dict) -> str | None:
    """The note ``report`` and ``score`` print when the human scores name systems by their file names or stems
    rather than the system names (read as those systems), else ``None``."""
    if not used:
        return None
    shown = ", ".join(f"{a} -> {s}" for a, s in list(used.items())[:5]) + (", ..." if len(used) > 5 else "")
    return (f"the human scores name {len(used)} system(s) by file name ({shown}); they are read as those systems "
            f"(the system names are the file stems unless --names is given)")


def load_files(ref_files: Sequence[str], hyp_files: Sequence[str], *, names: Sequence[str] | None = None,
               parses_dir: str | Path | None = None, need: set[str] = frozenset(), workers: int = 1,
               cache: Any = True, progress: bool = True) -> dict[str, M.Corpus]:
    """Read the files into ``{system: Corpus}`` (ready parses from ``parses_dir`` attached; the missing ones are
    made later, when a metric needs them). Raises :class:`ScoreInputError` with a one-line message."""
    given, names = bool(names), list(names) if names else system_names(hyp_files)
    if len(names) != len(hyp_files):
        raise ScoreInputError(f"--names gives {len(names)} name(s) for {len(hyp_files)} system file(s): one a file")
    if len(set(names)) != len(names):
        twice = next(x for x in names if names.count(x) > 1)
        raise ScoreInputError(f"two systems are named {twice!r}" + ("" if given else
                              " (the same file given twice): give distinct names with --names"))
    refs = [_read(f, "reference file") for f in ref_files]
    hyps = [_read(f, "system file") for f in hyp_files]
    n = len(refs[0])
    for f, lines in list(zip(ref_files, refs)) + list(zip(hyp_files, hyps)):
        if len(lines) != n:
            raise ScoreInputError(f"{f} has {len(lines)} lines but {ref_files[0]} has {n}: the files must be "
                                  f"line-aligned (one segment per line)")
    ready = _read_parses(parses_dir, list(ref_files) + list(hyp_files),
                         dict(zip(list(ref_files) + list(hyp_files), refs + hyps)), set(need))
    ref_ptb = [ready[f][0] for f in ref_files]
    ref_rst = [ready[f][1] for f in ref_files]
    out = {}
    for name, f, h in zip(names, hyp_files, hyps):
        hp, hr = ready[f]
        out[name] = M.Corpus(h, refs, ref_layout="streams",
                             hyp_ptb=hp if hp is not None and all(r is not None for r in ref_ptb) else None,
                             ref_ptb=ref_ptb if hp is not None and all(r is not None for r in ref_ptb) else None,
                             hyp_rst=hr if hr is not None and all(r is not None for r in ref_rst) else None,
                             ref_rst=ref_rst if hr is not None and all(r is not None for r in ref_rst) else None,
                             workers=workers, cache=cache, progress=progress,
                             parse_source="given" if parses_dir else None)
    return out


# ============================================================================================== output


