"""SuperPoint keypoints and descriptors, computed by the Rust ``superpoint`` library.

>>> from superpoint import SuperPoint
>>> with SuperPoint.from_pretrained() as model:           # doctest: +SKIP
...     out = model("photo.jpg", max_keypoints=1024)
...     out.keypoints, out.scores, out.descriptors        # (N, 2), (N,), (N, 256) float32

The API is the reference port's (``tt_superpoint``): see ``SuperPoint`` and
``SuperPointOutput``; errors are in ``superpoint.errors``.
"""

from ._model import SuperPoint
from ._output import SuperPointOutput
from ._superpoint import __version__
from .errors import DecodeError, DeviceError, ReadError, SuperPointError, WeightsError

__all__ = [
    "SuperPoint",
    "SuperPointOutput",
    "SuperPointError",
    "DecodeError",
    "ReadError",
    "WeightsError",
    "DeviceError",
    "__version__",
]
