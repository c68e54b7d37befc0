"""Bad input raises the right exception with the library's message, and leaves the model usable:
ValueError for options and pixel arrays, TypeError for unsupported objects, and the
SuperPointError hierarchy for images, weights and devices."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import IMAGES, WEIGHTS
from superpoint import (
    DecodeError,
    ReadError,
    SuperPoint,
    SuperPointError,
    WeightsError,
)

IMAGE = str(IMAGES / "coffee.png")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"max_keypoints": -2}, "invalid option max_keypoints = -2: use -1 to keep all keypoints, or a count >= 0"),
        ({"nms_radius": -1}, "invalid option nms_radius = -1: must be between 0 (no NMS) and 64"),
        ({"nms_radius": 65}, "invalid option nms_radius = 65: must be between 0 (no NMS) and 64"),
        ({"keypoint_threshold": float("nan")}, "invalid option keypoint_threshold = NaN: must be a finite number"),
        ({"frame": (641, 480)}, "invalid option frame = 641x480: width and height must be positive multiples of 8"),
        ({"channel": "blue"}, 'invalid option channel = blue: use "red"'),
        ({"num_workers": 0}, "invalid option num_workers = 0: must be at least 1"),
    ],
)
def test_bad_options_raise_value_error(model: SuperPoint, options: dict, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        model(IMAGE, **options)
    assert str(raised.value).startswith(message)
    assert not isinstance(raised.value, SuperPointError)


def test_option_types_are_checked(model: SuperPoint) -> None:
    with pytest.raises(TypeError):
        model(IMAGE, max_keypoints="many")
    with pytest.raises(TypeError):
        model(IMAGE, unknown_option=1)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"backend": "gpu"}, 'invalid option backend = gpu: use "auto", "cpu" or "tensix"'),
        ({"grid": "10x10"}, 'invalid option grid = 10x10: use "12x10" or "11x10"'),
        ({"precision": "fp8"}, 'invalid option precision = fp8: use "port" or "accurate"'),
        ({"device_id": -1}, "invalid option device_id = -1: use a device index"),
        ({"warmup_variants": "all"}, 'invalid option warmup_variants = all: use "common", "minimal", "none"'),
    ],
)
def test_bad_model_arguments_raise_value_error(arguments: dict, message: str) -> None:
    with pytest.raises(ValueError) as raised:
        SuperPoint(WEIGHTS, **{"backend": "cpu", **arguments})
    assert str(raised.value).startswith(message)


def test_a_missing_file_is_a_read_error_and_an_os_error(model: SuperPoint, tmp_path: Path) -> None:
    missing = tmp_path / "missing.png"
    with pytest.raises(ReadError) as raised:
        model(missing)
    assert isinstance(raised.value, (DecodeError, SuperPointError, OSError))
    assert str(raised.value).startswith(f"cannot read {missing}: ")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"", "the image data is empty"),
        (b"hello, world", "unsupported image format: the data is not a recognised image file"),
        ((IMAGES / "rocket.jpg").read_bytes()[:600], "cannot decode the image: JPEG"),
    ],
)
def test_undecodable_bytes_are_decode_errors(model: SuperPoint, data: bytes, message: str) -> None:
    with pytest.raises(DecodeError) as raised:
        model(data)
    assert str(raised.value).startswith(message)
    assert not isinstance(raised.value, OSError)


def test_images_out_of_the_size_range_are_decode_errors(model: SuperPoint) -> None:
    with pytest.raises(DecodeError, match="the image is 4x6: both sides must be at least 8 pixels"):
        model(np.zeros((6, 4), np.uint8))


@pytest.mark.parametrize(
    "array, message",
    [
        (np.zeros((32, 32, 5), np.uint8), r"\(H, W\) or \(H, W, C\) with C = 1"),
        (np.zeros((3, 32, 32, 3, 1), np.uint8), r"got shape \[3, 32, 32, 3, 1\]"),
        (np.zeros((32, 32), np.int64), "pixel arrays are uint8, or float"),
        (np.full((32, 32), 255.0), r"float pixels must lie in \[0, 1\]; found 255"),
        (np.full((32, 32), np.nan, np.float32), r"float pixels must lie in \[0, 1\]; found NaN"),
    ],
)
def test_bad_pixel_arrays_raise_value_error(model: SuperPoint, array: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        model(array)


@pytest.mark.parametrize("obj", [42, {"image": IMAGE}, None, 3.5])
def test_unsupported_objects_raise_type_error(model: SuperPoint, obj: object) -> None:
    with pytest.raises(TypeError, match=f"cannot detect keypoints in a {type(obj).__name__}"):
        model(obj)


def test_a_list_raises_its_first_failure(model: SuperPoint, tmp_path: Path) -> None:
    with pytest.raises(ReadError, match="missing.png"):
        model([IMAGE, str(tmp_path / "missing.png"), b"hello"])
    with pytest.raises(ValueError, match="a batch of shape"):
        model([np.zeros((2, 32, 32, 3), np.uint8)])


def test_bad_weights_are_weights_errors(tmp_path: Path) -> None:
    with pytest.raises(WeightsError, match="missing.safetensors"):
        SuperPoint(tmp_path / "missing.safetensors", backend="cpu")
    with pytest.raises(WeightsError):
        SuperPoint(IMAGE, backend="cpu")


def test_no_pretrained_weights_offline_says_how_to_get_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    with pytest.raises(WeightsError, match="not in the HF cache and HF_HUB_OFFLINE is set"):
        SuperPoint.from_pretrained(backend="cpu")


def test_the_model_still_works_after_errors(model: SuperPoint) -> None:
    for bad in (b"", 42, np.zeros((4, 4), np.uint8)):
        with pytest.raises((DecodeError, TypeError)):
            model(bad)
    assert len(model(IMAGE)) > 0


def test_a_closed_model_raises(tmp_path: Path) -> None:
    with SuperPoint(WEIGHTS, backend="cpu") as m:
        assert len(m(IMAGE)) > 0
    assert m.closed
    with pytest.raises(SuperPointError, match="the model is closed") as raised:
        m(IMAGE)
    assert type(raised.value) is SuperPointError
    m.close()  # closing twice is harmless

