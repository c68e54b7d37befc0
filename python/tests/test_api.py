"""The reference port's API surface: signatures and their defaults (the options' defaults are the
Rust library's `Options::default()`), construction, the `with` block, `warmup`."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from helpers import IMAGES, WEIGHTS
from superpoint import DecodeError, SuperPoint, __version__
from superpoint._superpoint import Options


def test_call_options_default_to_the_library_defaults() -> None:
    defaults = Options()
    signature = inspect.signature(SuperPoint.__call__)
    documented = {
        name: p.default for name, p in signature.parameters.items() if p.kind is p.KEYWORD_ONLY
    }
    assert documented == {
        "max_keypoints": 1024,
        "keypoint_threshold": 0.005,
        "nms_radius": 4,
        "return_descriptors": True,
        "bgr": False,
        "channel": "red",
        "num_workers": 4,
        "frame": (640, 480),
    }
    for name, value in documented.items():
        got = getattr(defaults, name)
        if name == "keypoint_threshold":
            assert np.float32(got) == np.float32(value)
        else:
            assert got == value, name


def test_from_pretrained_has_the_port_signature() -> None:
    parameters = inspect.signature(SuperPoint.from_pretrained).parameters
    assert {name: p.default for name, p in parameters.items()} == {
        "weights": None,
        "backend": "auto",
        "device_id": 0,
        "grid": None,
        "precision": "port",
        "warmup_variants": "common",
        "precompile_sizes": None,
    }


def test_construction_and_the_with_block() -> None:
    assert __version__ == "0.1.0"
    with SuperPoint.from_pretrained(weights=WEIGHTS, precompile_sizes=[(800, 600)]) as model:
        assert model.backend == "cpu"  # auto without a card
        assert model.weights == str(WEIGHTS)
        assert "backend='cpu'" in repr(model)
        out = model(str(IMAGES / "coffee.png"))
        assert out.image_size == (640, 480) and len(out) > 0
    assert model.closed and "closed" in repr(model)


def test_warmup_on_the_cpu_checks_its_arguments(model: SuperPoint) -> None:
    model.warmup(size=(1920, 1080), nms_radius=0)
    model.warmup()
    with pytest.raises(DecodeError, match="the image is 4x480"):
        model.warmup(size=(4, 480))
    with pytest.raises(ValueError, match="invalid option nms_radius = -1"):
        model.warmup(nms_radius=-1)
