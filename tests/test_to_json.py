"""syneval_nb.textio.to_json: the kit's one JSON converter (issue 34), on concrete values."""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from syneval_nb.textio import to_json


@dataclasses.dataclass
class _Pair:
    a: float
    b: tuple


@pytest.mark.parametrize("value,want", [
    (np.float64("nan"), None), (float("inf"), None), (-np.inf, None), (np.float32(0.5), 0.5),
    (np.int64(3), 3), (np.bool_(True), True), (np.str_("x"), "x"), (1.25, 1.25), ("s", "s"), (None, None),
    ((1, 2), [1, 2]), ({3}, [3]), (np.array([[1, 2], [3, 4]]), [[1, 2], [3, 4]]),
    (np.array([1.0, np.nan]), [1.0, None]), ({1: np.int64(2)}, {"1": 2}), (Path("a/b.json"), "a/b.json"),
    (_Pair(np.float64(0.5), (np.int64(1), math.nan)), {"a": 0.5, "b": [1, None]}),
    (pd.Series({"x": np.int64(1), "y": np.nan}), {"x": 1, "y": None}),
    (pd.DataFrame({"m": ["BLEU"], "r": [0.5]}), [{"m": "BLEU", "r": 0.5}]), (pd.NA, None), (pd.NaT, None),
])
def test_to_json_values(value, want):
    got = to_json(value)
    assert got == want and type(got) is type(want)


def test_nested_values_become_plain_and_dump():
    got = to_json({"verdict": {"ci": (np.float64(0.1), np.float64("nan")), "p": np.float64(0.02),
                               "n": np.int64(7)}})
    assert got == {"verdict": {"ci": [0.1, None], "p": 0.02, "n": 7}}
    assert type(got["verdict"]["n"]) is int and type(got["verdict"]["p"]) is float
    assert json.dumps(got, allow_nan=False)


def test_finite_false_keeps_nan_for_values_still_to_print():
    got = to_json({"p": np.float64("nan"), "ci": (np.inf, 1)}, finite=False)
    assert math.isnan(got["p"]) and got["ci"] == [math.inf, 1] and type(got["p"]) is float
