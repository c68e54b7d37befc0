"""`SuperPointOutput`: arrays, fields, `out[...]`, `.numpy()`, and `.to_dict()` against the HTTP
server's `/predict` response for the same image and options (the Rust server, started here on a
loopback port the system picks)."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import threading
import urllib.request
from typing import Any, Dict, Iterator

import numpy as np
import pytest

from helpers import WEIGHTS, case, cli_binary
from superpoint import SuperPoint

CASE = case("hubble_1600x900_r8")


def test_arrays_have_the_documented_types_and_share_the_library_buffers(model: SuperPoint) -> None:
    out = model(CASE.image, **CASE.options())
    n = len(out)
    assert n == CASE.num_keypoints
    for array, shape in ((out.keypoints, (n, 2)), (out.scores, (n,)), (out.descriptors, (n, 256))):
        assert array.dtype == np.float32 and array.shape == shape
        assert array.flags.c_contiguous
        # numpy did not allocate (and fill) these: they are the Rust library's vectors.
        assert not array.flags.owndata and array.base is not None
    assert np.all(np.diff(out.scores) <= 0)
    np.testing.assert_allclose(np.linalg.norm(out.descriptors, axis=1), 1.0, rtol=1e-5)
    assert out.original_size == (1600, 900) and out.image_size == (640, 480)
    np.testing.assert_array_equal(np.float32(out.scale), np.float32([1600 / 640, 900 / 480]))
    assert set(out.timing_ms) == {
        "preprocess",
        "device_forward",
        "postprocess",
        "queue",
        "compile",
        "total",
    }
    assert out.device is None
    assert all(v >= 0 for v in out.timing_ms.values())


def test_fields_by_key_numpy_and_dict(model: SuperPoint) -> None:
    out = model(CASE.image, **CASE.options())
    for key in out.keys():
        assert out[key] is getattr(out, key)
        assert key in out
    with pytest.raises(KeyError, match="keypoints"):
        out["keypoint"]
    arrays = out.numpy()
    assert set(arrays) == {"keypoints", "scores", "descriptors"}
    assert arrays["keypoints"] is out.keypoints
    assert dict(out)["scores"] is out.scores
    assert "SuperPointOutput(480 keypoints" in repr(out)


def test_without_descriptors(model: SuperPoint) -> None:
    out = model(CASE.image, return_descriptors=False, **CASE.options())
    assert out.descriptors is None and out.numpy()["descriptors"] is None
    assert out.to_dict()["descriptors"] is None
    with_descriptors = model(CASE.image, **CASE.options())
    np.testing.assert_array_equal(out.keypoints, with_descriptors.keypoints)


def test_max_keypoints_cuts_the_best_first(model: SuperPoint) -> None:
    full = model(CASE.image, **CASE.options())
    cut = model(CASE.image, **{**CASE.options(), "max_keypoints": 100})
    assert len(cut) == 100
    np.testing.assert_array_equal(cut.keypoints, full.keypoints[:100])
    assert len(model(CASE.image, **{**CASE.options(), "max_keypoints": 0})) == 0


def test_an_empty_detection_has_empty_arrays(model: SuperPoint) -> None:
    out = model(np.zeros((64, 64), np.uint8), keypoint_threshold=1.0)
    assert len(out) == 0
    assert out.keypoints.shape == (0, 2) and out.scores.shape == (0,)
    assert out.descriptors.shape == (0, 256)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """`superpoint serve` on the fixtures' weights, on a loopback port; stopped at the end."""
    process = subprocess.Popen(
        [str(cli_binary()), "serve", "--host", "127.0.0.1", "--port", "0", "--weights", str(WEIGHTS)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line: Dict[str, str] = {}
    reader = threading.Thread(target=lambda: line.setdefault("text", process.stdout.readline()))
    reader.start()
    reader.join(timeout=120)
    try:
        text = line.get("text", "")
        assert "listening on http://" in text, f"the server did not start: {text!r}"
        yield text.strip().rsplit(" ", 1)[-1]
    finally:
        process.terminate()
        process.wait(timeout=60)


def predict(url: str, body: bytes, query: str) -> Dict[str, Any]:
    request = urllib.request.Request(f"{url}/predict_raw?{query}", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


@pytest.mark.parametrize("return_descriptors", [True, False])
def test_to_dict_is_the_predict_response(model: SuperPoint, server: str, return_descriptors: bool) -> None:
    body = CASE.image.read_bytes()
    query = f"nms_radius=8&max_keypoints=1024&return_descriptors={str(return_descriptors).lower()}"
    response = predict(server, body, query)
    mine = model(body, nms_radius=8, return_descriptors=return_descriptors).to_dict()
    assert mine.keys() == response.keys()
    assert mine["timing_ms"].keys() == response["timing_ms"].keys()
    for key in ("num_keypoints", "original_size", "image_size", "serving_path"):
        assert mine[key] == response[key], key
    for key in ("keypoints", "scores", "scale"):
        np.testing.assert_array_equal(np.float32(mine[key]), np.float32(response[key]), err_msg=key)
    if not return_descriptors:
        assert mine["descriptors"] is None and response["descriptors"] is None
        return
    served = response["descriptors"]
    assert served["shape"] == [mine["num_keypoints"], 256] and served["dtype"] == "float16"
    rows = np.load(io.BytesIO(base64.b64decode(served["data"])))["descriptors"]
    np.testing.assert_array_equal(rows, np.float16(mine["descriptors"]))
    json.dumps(mine)  # plain Python values
