"""``SuperPoint``: the model, with the reference port's Python API over the Rust library."""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, List, Optional, Sequence, Tuple, Union, overload

from . import _inputs
from ._output import SuperPointOutput
from ._superpoint import Detections, Model, Options

#: Input sizes ``warmup_variants="common"`` prepares, with NMS radii 4 and 0 (the port's).
COMMON_SIZES: Tuple[Tuple[int, int], ...] = ((640, 480), (1920, 1080), (1600, 900), (1280, 720))
COMMON_RADII: Tuple[int, ...] = (4, 0)
#: What each ``warmup_variants`` value prepares, as (sizes, radii).
WARMUP_VARIANTS = {
    "common": (COMMON_SIZES, COMMON_RADII),
    "minimal": (((640, 480),), (4,)),
    "none": ((), ()),
}


class SuperPoint:
    """SuperPoint keypoints, scores and descriptors.

    ``SuperPoint(weights="model.safetensors")`` loads a checkpoint file;
    ``SuperPoint.from_pretrained()`` takes the pinned ``magic-leap-community/superpoint`` from
    the Hugging Face cache (downloading it when absent and online). ``backend`` is "auto" (the
    Tensix device when a card is present, else the CPU), "cpu" or "tensix" (on this build without
    a card: the p150a emulator). ``device_id`` picks the Tensix device; ``None`` loads the model
    on every device and spreads the frames over them (each output's ``device`` says which ran
    it). ``grid`` ("12x10" or "11x10") and ``precision`` ("port" or "accurate") configure the
    Tensix backend. ``warmup_variants`` prepares the device programs
    of common input sizes at load ("common"), only 640x480 ("minimal") or none ("none");
    ``precompile_sizes`` adds (width, height) sizes of your own. Use it in a ``with`` block, or
    call ``close()``; one model may be shared by threads.
    """

    def __init__(
        self,
        weights: Union[str, "os.PathLike[str]", None] = None,
        *,
        backend: str = "auto",
        device_id: Optional[int] = 0,
        grid: Optional[str] = None,
        precision: str = "port",
        warmup_variants: str = "common",
        precompile_sizes: Optional[Sequence[Tuple[int, int]]] = None,
    ) -> None:
        if warmup_variants not in WARMUP_VARIANTS:
            raise ValueError(
                f"invalid option warmup_variants = {warmup_variants}: use "
                + ", ".join(f'"{v}"' for v in WARMUP_VARIANTS)
            )
        self._model = Model(
            weights=None if weights is None else os.fspath(weights),
            backend=backend,
            device_id=device_id,
            grid=grid,
            precision=precision,
        )
        sizes, radii = WARMUP_VARIANTS[warmup_variants]
        for size in list(sizes) + list(precompile_sizes or ()):
            for radius in radii or (4,):
                self.warmup(size=size, nms_radius=radius)

    @classmethod
    def from_pretrained(
        cls,
        weights: Union[str, "os.PathLike[str]", None] = None,
        backend: str = "auto",
        device_id: Optional[int] = 0,
        grid: Optional[str] = None,
        precision: str = "port",
        warmup_variants: str = "common",
        precompile_sizes: Optional[Sequence[Tuple[int, int]]] = None,
    ) -> "SuperPoint":
        """The model with the pretrained weights (or ``weights``, a safetensors file)."""
        return cls(
            weights,
            backend=backend,
            device_id=device_id,
            grid=grid,
            precision=precision,
            warmup_variants=warmup_variants,
            precompile_sizes=precompile_sizes,
        )

    @property
    def backend(self) -> str:
        """The backend that runs the network: "cpu" or "tensix"."""
        return self._model.backend

    @property
    def weights(self) -> str:
        """The weights file the model loaded."""
        return self._model.weights

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._model.closed

    @overload
    def __call__(
        self,
        image: Union[str, "os.PathLike[str]", bytes],
        *,
        max_keypoints: int = ...,
        keypoint_threshold: float = ...,
        nms_radius: int = ...,
        return_descriptors: bool = ...,
        bgr: bool = ...,
        channel: str = ...,
        num_workers: int = ...,
        frame: Tuple[int, int] = ...,
    ) -> SuperPointOutput: ...

    @overload
    def __call__(
        self,
        image: Union[List[Any], Tuple[Any, ...]],
        *,
        max_keypoints: int = ...,
        keypoint_threshold: float = ...,
        nms_radius: int = ...,
        return_descriptors: bool = ...,
        bgr: bool = ...,
        channel: str = ...,
        num_workers: int = ...,
        frame: Tuple[int, int] = ...,
    ) -> List[SuperPointOutput]: ...

    @overload
    def __call__(
        self,
        image: Any,
        *,
        max_keypoints: int = ...,
        keypoint_threshold: float = ...,
        nms_radius: int = ...,
        return_descriptors: bool = ...,
        bgr: bool = ...,
        channel: str = ...,
        num_workers: int = ...,
        frame: Tuple[int, int] = ...,
    ) -> Union[SuperPointOutput, List[SuperPointOutput]]: ...

    def __call__(
        self,
        image: Any,
        *,
        max_keypoints: int = 1024,
        keypoint_threshold: float = 0.005,
        nms_radius: int = 4,
        return_descriptors: bool = True,
        bgr: bool = False,
        channel: str = "red",
        num_workers: int = 4,
        frame: Tuple[int, int] = (640, 480),
    ) -> Union[SuperPointOutput, List[SuperPointOutput]]:
        """Keypoints of ``image``: a path (``str`` or ``os.PathLike``), ``bytes`` of an image
        file, a PIL image, a numpy array (H, W) or (H, W, C), or a tensor (H, W), (C, H, W) or
        (H, W, C); uint8, or float in [0, 1]. A list (or tuple) of them, or a 4-D batch, gives a
        list of outputs, the next images decoding on ``num_workers`` threads meanwhile.

        ``max_keypoints`` (-1 keeps all above the threshold), ``keypoint_threshold`` (strict),
        ``nms_radius`` (0 = none), ``return_descriptors``, ``bgr`` (True for OpenCV arrays),
        ``channel`` ("red", the port's R plane, or "luma") and ``frame`` (the network frame,
        width and height, multiples of 8) are the library's options.
        """
        options = Options(
            max_keypoints=max_keypoints,
            keypoint_threshold=keypoint_threshold,
            nms_radius=nms_radius,
            return_descriptors=return_descriptors,
            bgr=bgr,
            channel=channel,
            frame=frame,
            num_workers=num_workers,
        )
        if _inputs.is_stream(image):
            raise TypeError(
                f"a {type(image).__name__} is not a list of images: use model.iter(frames) "
                "for generators and other iterators, or pass list(frames)"
            )
        images, batch = _inputs.prepare(image)
        if not batch:
            return SuperPointOutput(**self._model.detect(images[0], options))
        return [SuperPointOutput(**f) for f in self._model.detect_all(images, options)]

    def iter(self, frames: Iterable[Any], **options: Any) -> Iterator[SuperPointOutput]:
        """The outputs of the images ``frames`` yields (a generator of video frames, say), in
        order, as they come; the next frames decode on worker threads meanwhile. Takes the
        keyword options of ``model(...)``. An exception of ``frames`` is raised after the
        outputs of the frames before it; a frame that fails to decode raises at its turn, and
        the iteration can go on."""
        detections = self._model.stream(
            (_inputs.prepare_one(frame) for frame in frames), Options(**options)
        )
        return _Outputs(detections)

    def warmup(
        self,
        size: Tuple[int, int] = (640, 480),
        nms_radius: int = 4,
        frame: Tuple[int, int] = (640, 480),
    ) -> None:
        """Prepares images of ``size`` (width, height) with ``nms_radius``, so that the first
        such call is as fast as later ones: on the Tensix backend the device programs are
        compiled (unless shipped), loaded and run once on a frame of zeros (capturing their
        traces); the CPU backend has nothing to prepare."""
        width, height = size
        self._model.warmup((width, height), Options(nms_radius=nms_radius, frame=frame))

    def close(self) -> None:
        """Releases the model and its device; later calls raise ``SuperPointError``."""
        self._model.close()

    def __enter__(self) -> "SuperPoint":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"weights={self.weights!r}"
        return f"SuperPoint(backend={self.backend!r}, {state})"


class _Outputs(Iterator[SuperPointOutput]):
    """The outputs of ``SuperPoint.iter``; unlike a generator, it goes on after a frame's error."""

    def __init__(self, detections: Detections) -> None:
        self._detections = detections

    def __iter__(self) -> "_Outputs":
        return self

    def __next__(self) -> SuperPointOutput:
        return SuperPointOutput(**next(self._detections))
