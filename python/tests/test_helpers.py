"""The fixture check of helpers.py catches what it claims: the reference outputs themselves pass,
and a moved keypoint, a score off by more than the tolerance, a swap of two points whose scores
differ, a missing point and a turned descriptor each fail."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

from helpers import SCORE_TOL, assert_matches_fixture, case

CASE = case("hubble_1600x900_r8")


def reference() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return CASE.array("keypoints").copy(), CASE.array("scores").copy(), CASE.array("descriptors").copy()


def test_the_reference_outputs_pass() -> None:
    assert_matches_fixture(CASE, *reference())


def moved(k: np.ndarray, s: np.ndarray, d: np.ndarray) -> None:
    k[10] += [CASE.original_size[0] / CASE.frame_size[0], 0.0]


def score_off(k: np.ndarray, s: np.ndarray, d: np.ndarray) -> None:
    s[20] += 2 * SCORE_TOL


def swapped(k: np.ndarray, s: np.ndarray, d: np.ndarray) -> None:
    assert s[0] - s[1] > SCORE_TOL
    k[[0, 1]] = k[[1, 0]]


def turned(k: np.ndarray, s: np.ndarray, d: np.ndarray) -> None:
    d[5] = np.roll(d[5], 1)


@pytest.mark.parametrize("change", [moved, score_off, swapped, turned])
def test_a_changed_output_fails(change: Callable[[np.ndarray, np.ndarray, np.ndarray], None]) -> None:
    k, s, d = reference()
    change(k, s, d)
    with pytest.raises(AssertionError):
        assert_matches_fixture(CASE, k, s, d)


def test_a_missing_point_fails() -> None:
    k, s, d = reference()
    with pytest.raises(AssertionError):
        assert_matches_fixture(CASE, k[1:], s[1:], d[1:])
