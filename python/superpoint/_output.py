"""``SuperPointOutput``: the keypoints, scores and descriptors of one image, as numpy arrays."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import numpy as np

_FIELDS = (
    "keypoints",
    "scores",
    "descriptors",
    "image_size",
    "original_size",
    "scale",
    "device_nms",
    "timing_ms",
    "backend",
    "device",
)


class SuperPointOutput:
    """The detection of one image.

    Attributes:
        keypoints: float32 (N, 2), [x, y] in original image pixels, best first.
        scores: float32 (N,), descending.
        descriptors: float32 (N, 256), L2-normalised, in keypoint order; None when
            ``return_descriptors=False``.
        image_size: (width, height) of the network frame (640, 480 by default).
        original_size: (width, height) of the image.
        scale: original pixels per frame pixel, (x, y).
        device_nms: True when non-maximum suppression ran on the device.
        timing_ms: milliseconds: preprocess, device_forward, postprocess, queue (waiting for
            a device), compile (device programs no warm-up had prepared), total.
        backend: "cpu" or "tensix".
        device: the id of the Tensix device that ran it; None on the CPU.

    ``len(out)`` is N; ``out["keypoints"]`` is ``out.keypoints`` (any attribute);
    ``out.numpy()`` gives the three arrays; ``out.to_dict()`` the HTTP ``/predict`` fields.
    """

    __slots__ = _FIELDS

    keypoints: np.ndarray
    scores: np.ndarray
    descriptors: Optional[np.ndarray]
    image_size: Tuple[int, int]
    original_size: Tuple[int, int]
    scale: Tuple[float, float]
    device_nms: bool
    timing_ms: Dict[str, float]
    backend: str
    device: Optional[int]

    def __init__(self, **fields: Any) -> None:
        for name in _FIELDS:
            setattr(self, name, fields[name])

    def __len__(self) -> int:
        return len(self.keypoints)

    def __getitem__(self, key: str) -> Any:
        if key not in _FIELDS:
            raise KeyError(f"{key!r}: the output's fields are {', '.join(_FIELDS)}")
        return getattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in _FIELDS

    def keys(self) -> Tuple[str, ...]:
        """The field names ``out[...]`` takes."""
        return _FIELDS

    def numpy(self) -> Dict[str, Optional[np.ndarray]]:
        """The arrays: ``keypoints``, ``scores`` and ``descriptors`` (None when not computed)."""
        return {
            "keypoints": self.keypoints,
            "scores": self.scores,
            "descriptors": self.descriptors,
        }

    def to_dict(self) -> Dict[str, Any]:
        """The fields of the HTTP server's ``/predict`` response for the same image and options,
        as plain Python values; ``descriptors`` is the (N, 256) rows as lists of floats (the
        server sends them as a base64 NPZ of float16), or None. ``truncated`` is always False: the
        server cuts a response to its keypoint cap, the library returns every keypoint the options
        select."""
        return {
            "num_keypoints": len(self),
            "keypoints": self.keypoints.tolist(),
            "scores": self.scores.tolist(),
            "original_size": list(self.original_size),
            "image_size": list(self.image_size),
            "scale": list(self.scale),
            "descriptors": None if self.descriptors is None else self.descriptors.tolist(),
            "serving_path": self.backend,
            "device": self.device,
            "timing_ms": dict(self.timing_ms),
            "truncated": False,
        }

    def __repr__(self) -> str:
        described = "None" if self.descriptors is None else f"{self.descriptors.shape}"
        return (
            f"SuperPointOutput({len(self)} keypoints, descriptors {described}, "
            f"original_size={self.original_size}, image_size={self.image_size}, "
            f"backend={self.backend!r}, device_nms={self.device_nms})"
        )
