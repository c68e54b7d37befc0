"""One model shared by threads gives every thread the single-threaded result, and the GIL is
released while the library works, so Python threads keep running during a call."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

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


# The child makes the interpreter switch threads only when one blocks (a switch interval of an
# hour). The main thread waits for the worker to start, then counts its own waits until the
# worker's call is done. If the library held the GIL through a call, the main thread could not
# even return from its first wait before the call ended, and would count no wait at all.
GIL_PROBE = """
import sys, threading
from superpoint import SuperPoint

image, weights = sys.argv[1:3]
sys.setswitchinterval(3600)

with SuperPoint(weights, backend="cpu", warmup_variants="none") as model:
    for name, call in (("one image", lambda: model(image)), ("a list", lambda: model([image, image]))):
        started, done = threading.Event(), threading.Event()

        def work():
            started.set()
            call()
            done.set()

        worker = threading.Thread(target=work)
        worker.start()
        started.wait()
        waits = 0
        while not done.wait(0.001):
            waits += 1
        worker.join()
        print(name, waits)
"""


def test_the_gil_is_released_inside_the_library() -> None:
    done = subprocess.run(
        [sys.executable, "-c", GIL_PROBE, IMAGES_USED[3], str(WEIGHTS)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    counts = dict(line.rsplit(" ", 1) for line in done.stdout.strip().splitlines())
    assert counts.keys() == {"one image", "a list"}, done.stdout
    for name, waits in counts.items():
        assert int(waits) > 0, f"{name}: the main thread never ran during the call"
