"""What a caller may pass, turned into what the compiled module takes.

The compiled module takes a ``str`` path, ``bytes`` of an image file, or a numpy pixel array
(H, W) or (H, W, C). This module only changes containers and memory layouts: ``os.PathLike`` to
``str``, a PIL image to its pixel array, a tensor (anything with ``__dlpack__`` or ``__array__``)
from (C, H, W) to (H, W, C), and a list, tuple or 4-D batch to its images. Neither PIL nor torch
is imported here: an object is recognised as a PIL image only if PIL is already loaded.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any, List, Tuple, Union

import numpy as np

Image = Union[str, bytes, np.ndarray]

#: Pillow modes whose pixels numpy gives as gray, gray + alpha, RGB or RGBA bytes; other modes
#: (palette, 1-bit, 16-bit, CMYK, ...) are converted to RGB first, as Pillow would.
_PIL_DIRECT_MODES = ("L", "LA", "RGB", "RGBA")


def prepare(obj: Any) -> Tuple[List[Any], bool]:
    """The images ``obj`` stands for, and whether it is a batch (so the caller gets a list)."""
    if isinstance(obj, (list, tuple)):
        return [_single(item) for item in obj], True
    if isinstance(obj, np.ndarray):
        if obj.ndim == 4:
            return [_pixels(frame) for frame in obj], True
        return [_pixels(obj)], False
    if _is_tensor(obj) and not _is_pil_image(obj):
        array = _tensor_array(obj)
        if array.ndim == 4:
            return [_pixels(_channels_last(frame)) for frame in array], True
        return [_pixels(_channels_last(array))], False
    return [_single(obj)], False


def is_stream(obj: Any) -> bool:
    """True for generators and other one-pass iterators (``model.iter`` takes those)."""
    return isinstance(obj, Iterator)


def prepare_one(obj: Any) -> Any:
    """The one image ``obj`` stands for (an element of a list or of a stream)."""
    return _single(obj)


def _single(obj: Any) -> Any:
    """The image ``obj`` stands for, or ``obj`` itself when it is not one (the compiled module
    then raises ``TypeError`` naming the accepted kinds)."""
    if isinstance(obj, str):
        return obj
    if isinstance(obj, os.PathLike):
        return os.fsdecode(os.fspath(obj))
    if isinstance(obj, bytes):
        return obj
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, np.ndarray):
        return _pixels(_one_frame(obj))
    if _is_pil_image(obj):
        mode = obj.mode if obj.mode in _PIL_DIRECT_MODES else "RGB"
        return np.asarray(obj if obj.mode == mode else obj.convert(mode))
    if _is_tensor(obj):
        return _pixels(_channels_last(_one_frame(_tensor_array(obj))))
    return obj


def _one_frame(array: np.ndarray) -> np.ndarray:
    if array.ndim == 4:
        raise ValueError(
            f"a batch of shape {array.shape} inside a list or a stream: pass the batch itself, "
            "or its images one by one"
        )
    return array


def _pixels(array: np.ndarray) -> np.ndarray:
    """float16 widened to float32 (exactly); other dtypes go as they are."""
    return array.astype(np.float32) if array.dtype == np.float16 else array


def _is_pil_image(obj: Any) -> bool:
    pil = sys.modules.get("PIL.Image")
    return pil is not None and isinstance(obj, pil.Image)


def _is_tensor(obj: Any) -> bool:
    return not isinstance(obj, np.ndarray) and (
        hasattr(obj, "__dlpack__") or hasattr(obj, "__array__")
    )


def _tensor_array(obj: Any) -> np.ndarray:
    """A CPU tensor's data as numpy: through DLPack (no copy) when it offers it, else
    ``__array__``."""
    if hasattr(obj, "__dlpack__"):
        try:
            return np.from_dlpack(obj)
        except (BufferError, RuntimeError, TypeError, ValueError) as dlpack_error:
            if not hasattr(obj, "__array__"):
                raise TypeError(
                    f"cannot read the {type(obj).__name__} through DLPack ({dlpack_error}); "
                    "move it to the CPU first (e.g. tensor.cpu())"
                ) from dlpack_error
    try:
        return np.asarray(obj)
    except (RuntimeError, TypeError, ValueError) as e:
        raise TypeError(
            f"cannot read the {type(obj).__name__} as an array ({e}); move it to the CPU and "
            "detach it first (e.g. tensor.detach().cpu())"
        ) from e


def _channels_last(array: np.ndarray) -> np.ndarray:
    """A tensor image (H, W), (C, H, W) or (H, W, C), with C at most 4, as (H, W[, C])."""
    if array.ndim == 3 and array.shape[0] <= 4 < array.shape[2]:
        return np.moveaxis(array, 0, -1)
    return array
