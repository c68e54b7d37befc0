"""The Tensix backend (the p150a emulator on this build) on one fixture: the 640x480 reference
input plane of `astronaut_default`, so the device runs the checked-in program (identity resize).
The package's output equals, bit for bit, what the Rust CLI writes with `--backend tensix` for
the same plane saved as a gray PNG. A frame takes seconds on the emulator: each side runs one."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from PIL import Image

from helpers import WEIGHTS, case, run_cli
from superpoint import DeviceError, SuperPoint

CASE = case("astronaut_default")


@pytest.fixture(scope="module")
def tensix() -> Iterator[SuperPoint]:
    with SuperPoint.from_pretrained(WEIGHTS, backend="tensix", warmup_variants="minimal") as m:
        yield m


def test_the_emulator_gives_what_the_rust_cli_gives(tensix: SuperPoint, tmp_path: Path) -> None:
    plane = CASE.array("input_plane")
    assert plane.dtype == np.uint8 and plane.shape == (480, 640)
    out = tensix(plane, **CASE.options())
    assert (out.backend, out.device_nms, out.device) == ("tensix", True, 0)
    assert out.original_size == out.image_size == (640, 480)
    png = tmp_path / "plane.png"
    Image.fromarray(plane, mode="L").save(png)
    want = run_cli(png, tmp_path / "out", CASE.options(), backend="tensix")
    assert want.summary["backend"] == "tensix"
    assert len(out) == CASE.num_keypoints
    np.testing.assert_array_equal(out.keypoints, want.keypoints)
    np.testing.assert_array_equal(out.scores, want.scores)
    np.testing.assert_array_equal(out.descriptors, want.descriptors)


def test_a_frame_the_device_programs_do_not_take_is_a_device_error(tensix: SuperPoint) -> None:
    with pytest.raises(DeviceError, match="multiples of 32"):
        tensix(CASE.array("input_plane"), frame=(320, 248))
