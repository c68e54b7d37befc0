"""Session-wide fixtures: one CPU model on the fixtures' weights, shared by the tests."""

from __future__ import annotations

from typing import Iterator

import pytest

from helpers import WEIGHTS
from superpoint import SuperPoint


@pytest.fixture(scope="session")
def model() -> Iterator[SuperPoint]:
    with SuperPoint(WEIGHTS, backend="cpu", warmup_variants="none") as m:
        yield m
