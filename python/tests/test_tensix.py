"""The Tensix backend (the p150a emulator on this build) on one fixture: the 640x480 reference
input plane of `astronaut_default`, so the device runs the checked-in program (identity resize).
The package's output equals, bit for bit, what the Rust CLI writes with `--backend tensix` for
the same plane saved as a gray PNG. A frame takes seconds on the emulator: each side runs one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from PIL import Image

from helpers import FIXTURES, WEIGHTS, case, run_cli
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


def test_device_id_names_a_device_the_runtime_must_have() -> None:
    with pytest.raises(DeviceError, match="include device 1, but the runtime has 1 device"):
        SuperPoint.from_pretrained(WEIGHTS, backend="tensix", device_id=1, warmup_variants="none")


def test_device_id_picks_the_device_and_none_takes_them_all(tensix: SuperPoint) -> None:
    # Devices are counted when the runtime starts, so a second process emulates two of them.
    script = (
        "import json, sys\n"
        "import numpy as np\n"
        "from superpoint import SuperPoint\n"
        "plane = np.load(sys.argv[2])\n"
        "outs = {}\n"
        "for device_id in (1, None):\n"
        "    with SuperPoint.from_pretrained(sys.argv[1], backend='tensix', device_id=device_id,\n"
        "                                    warmup_variants='none') as m:\n"
        "        runs = m([plane] * 4, max_keypoints=64)\n"
        "    outs[str(device_id)] = [[o.device, o.keypoints.tolist()] for o in runs]\n"
        "print(json.dumps(outs))\n"
    )
    plane_file = FIXTURES / "cases" / CASE.name / "input_plane.npy"
    env = {**os.environ, "TTR_EMU_DEVICES": "2"}
    done = subprocess.run(
        [sys.executable, "-c", script, str(WEIGHTS), str(plane_file)],
        env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    outs = json.loads(done.stdout)
    want = tensix(CASE.array("input_plane"), max_keypoints=64).keypoints.tolist()
    assert [device for device, _ in outs["1"]] == [1, 1, 1, 1]
    assert {device for device, _ in outs["None"]} == {0, 1}
    assert all(keypoints == want for _, keypoints in outs["1"] + outs["None"])
