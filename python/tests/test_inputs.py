"""Every kind of input gives the detection of the image file itself (whose outputs
test_fixtures.py checks against the Rust CLI and the reference): paths, bytes, PIL images, numpy
arrays (uint8 and float, gray, RGB, RGBA, BGR, non-contiguous), tensors, lists, tuples, 4-D
batches and streams.

Tensors: torch is a very large download, so these tests use small stand-ins that expose what a
CPU torch tensor does (`__dlpack__` and `__dlpack_device__`, or only `__array__`) over a numpy
array in torch's (C, H, W) layout; the package never imports torch."""

from __future__ import annotations

import io
import pathlib
import sys
from typing import Any, Iterator, List

import numpy as np
import pytest
from PIL import Image

from helpers import case
from superpoint import DecodeError, SuperPoint, SuperPointOutput

CASE = case("astronaut_320x240_r4")
OPTIONS = CASE.options()


@pytest.fixture(scope="module")
def want(model: SuperPoint) -> SuperPointOutput:
    return model(str(CASE.image), **OPTIONS)


@pytest.fixture(scope="module")
def rgb() -> np.ndarray:
    with Image.open(CASE.image) as image:
        assert image.mode == "RGB"
        return np.asarray(image)


def assert_same(got: SuperPointOutput, want: SuperPointOutput) -> None:
    assert isinstance(got, SuperPointOutput)
    np.testing.assert_array_equal(got.keypoints, want.keypoints)
    np.testing.assert_array_equal(got.scores, want.scores)
    np.testing.assert_array_equal(got.descriptors, want.descriptors)
    assert got.original_size == want.original_size


class DLPackTensor:
    """Stands in for a CPU torch tensor: DLPack export of a (C, H, W) array."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array
        self.shape = array.shape

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> Any:
        return self._array.__dlpack_device__()


class ArrayTensor:
    """A tensor-like that only offers `__array__`."""

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._array if dtype is None else self._array.astype(dtype)


def test_torch_is_not_imported() -> None:
    assert "torch" not in sys.modules


@pytest.mark.parametrize(
    "kind", ["str", "pathlib", "bytes", "bytearray", "memoryview"]
)
def test_paths_and_encoded_bytes(model: SuperPoint, want: SuperPointOutput, kind: str) -> None:
    data = CASE.image.read_bytes()
    image = {
        "str": str(CASE.image),
        "pathlib": pathlib.Path(CASE.image),
        "bytes": data,
        "bytearray": bytearray(data),
        "memoryview": memoryview(data),
    }[kind]
    assert_same(model(image, **OPTIONS), want)


def test_pil_images(model: SuperPoint, want: SuperPointOutput) -> None:
    with Image.open(CASE.image) as image:
        assert_same(model(image, **OPTIONS), want)
        assert_same(model(image.convert("RGBA"), **OPTIONS), want)
        # A mode numpy cannot give as bytes per channel goes through Pillow's RGB conversion;
        # CMYK -> RGB is exact for the R plane of an RGB image (R = 255 - C).
        assert_same(model(image.convert("CMYK"), **OPTIONS), want)
        # A palette image is its colours, not its palette indices.
        palette = image.convert("P")
        assert_same(model(palette, **OPTIONS), model(palette.convert("RGB"), **OPTIONS))


def test_a_gray_pil_image_is_its_luma_plane(model: SuperPoint) -> None:
    luma = {**OPTIONS, "channel": "luma"}
    from_file = model(str(CASE.image), **luma)
    with Image.open(CASE.image) as image:
        gray = image.convert("L")
    # A gray image is its own plane whatever the channel option says.
    assert_same(model(gray, **OPTIONS), from_file)
    assert_same(model(np.asarray(gray), **OPTIONS), from_file)


def test_numpy_uint8_arrays(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray) -> None:
    assert_same(model(rgb, **OPTIONS), want)
    rgba = np.concatenate([rgb, np.full(rgb.shape[:2] + (1,), 255, np.uint8)], axis=2)
    assert_same(model(rgba, **OPTIONS), want)
    # The R plane alone, (H, W) and (H, W, 1).
    assert_same(model(np.ascontiguousarray(rgb[..., 0]), **OPTIONS), want)
    assert_same(model(rgb[..., :1], **OPTIONS), want)
    # OpenCV order: a reversed (non-contiguous) view, with bgr=True.
    assert_same(model(rgb[..., ::-1], bgr=True, **OPTIONS), want)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_float_arrays_in_0_1(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray, dtype: Any) -> None:
    assert_same(model((rgb / 255.0).astype(dtype), **OPTIONS), want)


def test_tensors_through_dlpack_and_array(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray) -> None:
    chw = np.ascontiguousarray(rgb.transpose(2, 0, 1))
    assert_same(model(DLPackTensor(chw), **OPTIONS), want)
    assert_same(model(DLPackTensor((chw / 255.0).astype(np.float32)), **OPTIONS), want)
    assert_same(model(ArrayTensor(chw), **OPTIONS), want)
    assert_same(model(DLPackTensor(np.ascontiguousarray(rgb)), **OPTIONS), want)  # (H, W, C)
    assert_same(model(DLPackTensor(np.ascontiguousarray(rgb[..., 0])), **OPTIONS), want)  # (H, W)


def test_dlpack_is_read_without_a_copy(rgb: np.ndarray) -> None:
    from superpoint import _inputs

    chw = np.ascontiguousarray(rgb.transpose(2, 0, 1))
    [pixels], batch = _inputs.prepare(DLPackTensor(chw))
    assert not batch
    assert pixels.shape == rgb.shape and np.shares_memory(pixels, chw)


def test_lists_tuples_and_batches_give_lists(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray) -> None:
    with Image.open(CASE.image) as image:
        kinds: List[Any] = [str(CASE.image), CASE.image.read_bytes(), image.copy(), rgb]
    for images in (kinds, tuple(kinds)):
        outs = model(images, **OPTIONS)
        assert isinstance(outs, list) and len(outs) == len(kinds)
        for out in outs:
            assert_same(out, want)
    batch = np.stack([rgb, rgb])
    for images in (batch, DLPackTensor(np.ascontiguousarray(batch.transpose(0, 3, 1, 2)))):
        outs = model(images, **OPTIONS)
        assert isinstance(outs, list) and len(outs) == 2
        for out in outs:
            assert_same(out, want)
    assert model([], **OPTIONS) == []


def test_lists_keep_their_order_with_any_number_of_workers(model: SuperPoint) -> None:
    paths = [str(CASE.image.parent / n) for n in ("astronaut.png", "coffee.png", "rocket.jpg")]
    singles = [model(p, **OPTIONS) for p in paths]
    for workers in (1, 3):
        for out, single in zip(model(paths, num_workers=workers, **OPTIONS), singles):
            assert_same(out, single)


def test_iter_streams_a_generator_in_order(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray) -> None:
    other = model(str(CASE.image.parent / "coffee.png"), **OPTIONS)
    pulled: List[int] = []

    def frames() -> Iterator[Any]:
        for i in range(6):
            pulled.append(i)
            yield rgb if i % 2 == 0 else str(CASE.image.parent / "coffee.png")

    outs = list(model.iter(frames(), **OPTIONS))
    assert pulled == list(range(6)) and len(outs) == 6
    for i, out in enumerate(outs):
        assert_same(out, want if i % 2 == 0 else other)


def test_iter_takes_an_endless_generator_a_few_frames_ahead(model: SuperPoint, want: SuperPointOutput, rgb: np.ndarray) -> None:
    pulled = 0

    def camera() -> Iterator[np.ndarray]:
        nonlocal pulled
        while True:
            pulled += 1
            yield rgb

    outs = model.iter(camera(), num_workers=2, **OPTIONS)
    for _ in range(3):
        assert_same(next(outs), want)
    # Decoding runs ahead by a bounded number of frames (queues of a few frames per worker).
    assert 3 <= pulled <= 3 + 16


def test_iter_raises_after_the_frames_before_a_failure(model: SuperPoint, want: SuperPointOutput) -> None:
    def frames() -> Iterator[Any]:
        yield str(CASE.image)
        yield str(CASE.image)
        raise RuntimeError("camera unplugged")

    outs = model.iter(frames(), **OPTIONS)
    assert_same(next(outs), want)
    assert_same(next(outs), want)
    with pytest.raises(RuntimeError, match="camera unplugged"):
        next(outs)

    bad = model.iter(iter([str(CASE.image), 42, str(CASE.image)]), **OPTIONS)
    assert_same(next(bad), want)
    with pytest.raises(TypeError, match="int"):
        next(bad)

    broken = model.iter(iter([b"not an image", str(CASE.image)]), **OPTIONS)
    with pytest.raises(DecodeError):
        next(broken)
    assert_same(next(broken), want)


def test_a_generator_is_refused_with_a_pointer_to_iter(model: SuperPoint) -> None:
    with pytest.raises(TypeError, match="model.iter"):
        model(x for x in [str(CASE.image)])


def test_encoded_bytes_in_memory_like_a_file_upload(model: SuperPoint, want: SuperPointOutput) -> None:
    buffer = io.BytesIO()
    with Image.open(CASE.image) as image:
        image.save(buffer, format="PNG")
    assert_same(model(buffer.getvalue(), **OPTIONS), want)
