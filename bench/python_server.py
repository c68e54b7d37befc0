"""A minimal Python SuperPoint server, the baseline of bench/serve_side_by_side.sh: what a Python
user would write with Pillow, ONNX Runtime and NumPy. `POST /predict_raw` takes an image file as
the body and answers JSON like `superpoint serve` does (keypoints in original pixels, scores,
descriptors as a base64 NPZ of float16), with DESIGN §2's defaults: R plane, Pillow BILINEAR
resize to 640x480, /255; the network (bench/onnx_baseline.py's ONNX graph, with the softmax and
the L2 normalisation) on ONNX Runtime's CPU provider on all cores; dustbin drop and fold, NMS
with radius 4 (separable window maxima), threshold 0.005, 4-pixel border, the best 1024 by
score (ties in raster order), descriptors sampled bilinearly (SuperGlue/HF formula) and
normalised. `GET /health` answers `{"status": "ok"}`.

    bench/.venv/bin/python bench/python_server.py [--port 20402] [--weights PATH]
"""

import argparse
import base64
import io
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as ort
from PIL import Image
from safetensors.numpy import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from onnx_baseline import DEFAULT_WEIGHTS, build  # noqa: E402

WIDTH, HEIGHT, CELL = 640, 480, 8
THRESHOLD, RADIUS, BORDER, MAX_KEYPOINTS = 0.005, 4, 4, 1024


def preprocess(data):
    image = Image.open(io.BytesIO(data)).convert("RGB")
    original = image.size
    x = np.asarray(image.resize((WIDTH, HEIGHT), Image.BILINEAR), dtype=np.float32) / 255.0
    return np.ascontiguousarray(x[None, None, :, :, 0]), original


def window_max(scores, r):
    h, w = scores.shape
    padded = np.full((h + 2 * r, w + 2 * r), -np.inf, np.float32)
    padded[r : r + h, r : r + w] = scores
    rows = padded[:, :w].copy()
    for dx in range(1, 2 * r + 1):
        np.maximum(rows, padded[:, dx : dx + w], out=rows)
    out = rows[:h].copy()
    for dy in range(1, 2 * r + 1):
        np.maximum(out, rows[dy : dy + h], out=out)
    return out


def postprocess(scores, descriptors, original):
    hc, wc = scores.shape[1:]
    heat = scores[: CELL * CELL].reshape(CELL, CELL, hc, wc).transpose(2, 0, 3, 1)
    heat = heat.reshape(hc * CELL, wc * CELL)
    kept = np.where(heat == window_max(heat, RADIUS), heat, 0.0)
    kept[:BORDER], kept[-BORDER:], kept[:, :BORDER], kept[:, -BORDER:] = 0, 0, 0, 0
    ys, xs = np.nonzero(kept > THRESHOLD)
    values = kept[ys, xs]
    order = np.argsort(-values, kind="stable")[:MAX_KEYPOINTS]
    ys, xs, values = ys[order], xs[order], values[order]
    # Bilinear sampling on the coarse grid (align corners), zero outside, then L2 normalisation.
    u = (xs - CELL / 2 + 0.5) / (wc * CELL - CELL / 2 - 0.5) * (wc - 1)
    v = (ys - CELL / 2 + 0.5) / (hc * CELL - CELL / 2 - 0.5) * (hc - 1)
    x0, y0 = np.floor(u).astype(int), np.floor(v).astype(int)
    fx, fy = u - x0, v - y0
    sampled = np.zeros((len(xs), descriptors.shape[0]), np.float64)
    for dx, dy, weight in ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)),
                           (0, 1, (1 - fx) * fy), (1, 1, fx * fy)):
        cx, cy = x0 + dx, y0 + dy
        inside = (cx >= 0) & (cx < wc) & (cy >= 0) & (cy < hc)
        corner = descriptors[:, np.clip(cy, 0, hc - 1), np.clip(cx, 0, wc - 1)].T
        sampled += (weight * inside)[:, None] * corner
    sampled /= np.maximum(np.linalg.norm(sampled, axis=1, keepdims=True), 1e-12)
    w0, h0 = original
    keypoints = np.stack([xs * (w0 / WIDTH), ys * (h0 / HEIGHT)], axis=1).astype(np.float32)
    npz = io.BytesIO()
    np.savez(npz, descriptors=sampled.astype(np.float16))
    return {
        "num_keypoints": len(xs),
        "keypoints": keypoints.tolist(),
        "scores": values.astype(np.float32).tolist(),
        "original_size": [w0, h0],
        "image_size": [WIDTH, HEIGHT],
        "descriptors": {
            "data": base64.b64encode(npz.getvalue()).decode(),
            "shape": list(sampled.shape),
            "dtype": "float16",
        },
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=20402)
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--weights", default=DEFAULT_WEIGHTS)
    args = ap.parse_args()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count()
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    model = build(load_file(args.weights), HEIGHT, WIDTH, postprocess=True)
    session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def answer(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                self.answer(200, {"status": "ok"})
            else:
                self.answer(404, {"error": "not found"})

        def do_POST(self):
            if not self.path.startswith("/predict_raw"):
                self.answer(404, {"error": "not found"})
                return
            data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            try:
                image, original = preprocess(data)
            except Exception as e:  # a user's server answers bad images with 400
                self.answer(400, {"error": str(e)})
                return
            scores, descriptors = session.run(None, {"image": image})
            self.answer(200, postprocess(scores[0], descriptors[0], original))

    ThreadingHTTPServer((args.host, args.port), Handler).serve_forever()


if __name__ == "__main__":
    main()
