"""Every fixture case from its image file: against the reference outputs of the Hugging Face
implementation (the Rust tests' rules), and equal, bit for bit, to what the Rust CLI writes for
the same image and options."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import Case, assert_matches_fixture, cases, run_cli
from superpoint import SuperPoint

CASES = cases()


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_every_case_matches_the_reference_and_equals_the_rust_cli(
    model: SuperPoint, c: Case, tmp_path: Path
) -> None:
    out = model(c.image, **c.options())
    assert out.original_size == c.original_size
    assert out.image_size == c.frame_size
    assert len(out) == c.num_keypoints
    assert (out.backend, out.device_nms) == ("cpu", False)
    assert out.descriptors is not None
    assert_matches_fixture(c, out.keypoints, out.scores, out.descriptors)

    want = run_cli(c.image, tmp_path, c.options())
    np.testing.assert_array_equal(out.keypoints, want.keypoints)
    np.testing.assert_array_equal(out.scores, want.scores)
    np.testing.assert_array_equal(out.descriptors, want.descriptors)
    assert list(out.original_size) == want.summary["original_size"]
    assert list(out.image_size) == want.summary["image_size"]
    np.testing.assert_array_equal(np.float32(out.scale), np.float32(want.summary["scale"]))
