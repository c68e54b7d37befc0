"""One model shared by threads gives every thread the single-threaded result, and the GIL is
released while the library works, so Python threads keep running during a call."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from helpers import IMAGES, WEIGHTS
from superpoint import SuperPoint

IMAGES_USED = [str(IMAGES / n) for n in ("astronaut.png", "coffee.png", "rocket.jpg", "hubble_1600x900.jpg")]
OPTIONS = {"frame": (320, 240)}


def test_threads_sharing_a_model_get_the_single_threaded_results(model: SuperPoint) -> None:
    want = [model(path, **OPTIONS) for path in IMAGES_USED]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda p: model(p, **OPTIONS), IMAGES_USED * 2))
    for out, expected in zip(got, want * 2):
        np.testing.assert_array_equal(out.keypoints, expected.keypoints)
        np.testing.assert_array_equal(out.scores, expected.scores)
        np.testing.assert_array_equal(out.descriptors, expected.descriptors)


# The child reads an image through a named pipe that a Python thread writes. Opening the pipe
# blocks the reading call inside the library until the writer opens it, and the writer then
# needs the GIL to write: if the library held the GIL, the two would wait for each other
# forever (the timeout turns that into a failure).
GIL_PROBE = """
import os, sys, threading
from superpoint import SuperPoint

fifo, image, weights = sys.argv[1:4]
data = open(image, "rb").read()

def write():
    with open(fifo, "wb") as pipe:
        pipe.write(data)

with SuperPoint(weights, backend="cpu", warmup_variants="none") as model:
    for call in (lambda: model(fifo), lambda: model([fifo])):
        writer = threading.Thread(target=write)
        writer.start()
        call()
        writer.join()
print("released")
"""


def test_the_gil_is_released_inside_the_library(tmp_path: Path) -> None:
    fifo = tmp_path / "image.pipe"
    os.mkfifo(fifo)
    done = subprocess.run(
        [sys.executable, "-c", GIL_PROBE, str(fifo), IMAGES_USED[1], str(WEIGHTS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "released"
