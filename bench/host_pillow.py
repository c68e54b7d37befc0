"""Times the host pre-processing of the reference port's server in Python: Pillow decodes the
image to RGB, resizes it to the network frame with BILINEAR and NumPy scales it to [0, 1] as
the float32 [1, 3, H, W] input (`server/app.py::_preprocess` of the port; the network then reads
channel 0). Prints one line per file: `<path>: median <ms> ms (<runs> runs)`.

    bench/.venv/bin/python bench/host_pillow.py FILE... [--runs 20] [--warmup 3] [--frame 640x480]
"""

import argparse
import io
import statistics
import time

import numpy as np
from PIL import Image


def preprocess(data: bytes, size: tuple[int, int]) -> np.ndarray:
    image = Image.open(io.BytesIO(data)).convert("RGB")
    image = image.resize(size, Image.BILINEAR)
    return (np.asarray(image, dtype=np.float32) / 255.0).transpose(2, 0, 1)[None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("files", nargs="+")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--frame", default="640x480")
    args = parser.parse_args()
    size = tuple(int(v) for v in args.frame.split("x"))
    for path in args.files:
        with open(path, "rb") as f:
            data = f.read()
        times = []
        for i in range(args.warmup + args.runs):
            start = time.perf_counter()
            preprocess(data, size)
            if i >= args.warmup:
                times.append((time.perf_counter() - start) * 1e3)
        print(f"{path}: median {statistics.median(times):.2f} ms ({args.runs} runs)")


if __name__ == "__main__":
    main()
