"""The exceptions of the ``superpoint`` package.

Bad options raise ``ValueError``, unsupported argument types ``TypeError`` and a frame that cannot
be allocated ``MemoryError``, with the Rust library's messages. Everything else the library can meet is a :class:`SuperPointError`:

* :class:`DecodeError` -- the image cannot be decoded, or its size is out of range;
  :class:`ReadError`, also an ``OSError``, when the file cannot be read at all (missing, not a
  regular file, over the 32 MiB limit);
* :class:`WeightsError` -- the weights file is missing, unreadable or not a SuperPoint checkpoint;
* :class:`DeviceError` -- the backend cannot run the request (no device, a device failure, a
  frame the device programs do not take).
"""

from __future__ import annotations

__all__ = ["SuperPointError", "DecodeError", "ReadError", "WeightsError", "DeviceError"]


class SuperPointError(Exception):
    """Base class of the package's errors (also raised alone for a closed model)."""


class DecodeError(SuperPointError):
    """The image cannot be decoded, or its size is out of range."""


class ReadError(DecodeError, OSError):
    """The image file cannot be read (missing, not readable)."""


class WeightsError(SuperPointError):
    """The weights cannot be found or loaded."""


class DeviceError(SuperPointError):
    """The backend or the device cannot run the request."""
