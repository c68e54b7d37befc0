#!/usr/bin/env python3
"""ONNX Runtime baseline for the SuperPoint CPU backend (see bench/README.md).

Builds the SuperPoint network (DESIGN.md §2) as an ONNX graph from an HF-format safetensors file with
the `onnx` package — 12 convolutions with bias, ReLU, 2×2 max-pools, the detector head's softmax over
the 65 channels and the descriptor head's L2 normalisation over channels — and times `onnxruntime` on
the CPU execution provider with all cores: warm-up runs, then N timed runs, median printed in ms.
"""

import argparse
import os
import statistics
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_WEIGHTS = os.path.join(HERE, "..", "tests", "fixtures", "weights", "random-seed1.safetensors")

# (HF prefix, relu, followed by a 2×2 max-pool)
ENCODER = [
    ("encoder.conv_blocks.0.conv_a", True, False),
    ("encoder.conv_blocks.0.conv_b", True, True),
    ("encoder.conv_blocks.1.conv_a", True, False),
    ("encoder.conv_blocks.1.conv_b", True, True),
    ("encoder.conv_blocks.2.conv_a", True, False),
    ("encoder.conv_blocks.2.conv_b", True, True),
    ("encoder.conv_blocks.3.conv_a", True, False),
    ("encoder.conv_blocks.3.conv_b", True, False),
]
DETECTOR = [("keypoint_decoder.conv_score_a", True), ("keypoint_decoder.conv_score_b", False)]
DESCRIPTOR = [("descriptor_decoder.conv_descriptor_a", True), ("descriptor_decoder.conv_descriptor_b", False)]


def build(weights, height, width, postprocess):
    nodes, inits = [], []

    def conv(x, prefix, relu):
        w = weights[prefix + ".weight"].astype(np.float32)
        b = weights[prefix + ".bias"].astype(np.float32)
        inits.append(numpy_helper.from_array(w, prefix + ".weight"))
        inits.append(numpy_helper.from_array(b, prefix + ".bias"))
        k = w.shape[2]
        y = prefix + ".out"
        nodes.append(
            helper.make_node(
                "Conv", [x, prefix + ".weight", prefix + ".bias"], [y],
                kernel_shape=[k, k], pads=[k // 2] * 4, strides=[1, 1],
            )
        )
        if relu:
            nodes.append(helper.make_node("Relu", [y], [y + ".relu"]))
            y = y + ".relu"
        return y

    x = "image"
    for i, (prefix, relu, pool) in enumerate(ENCODER):
        x = conv(x, prefix, relu)
        if pool:
            p = f"pool{i}"
            nodes.append(helper.make_node("MaxPool", [x], [p], kernel_shape=[2, 2], strides=[2, 2]))
            x = p
    shared = x
    for prefix, relu in DETECTOR:
        x = conv(x, prefix, relu)
    logits = x
    x = shared
    for prefix, relu in DESCRIPTOR:
        x = conv(x, prefix, relu)
    desc = x
    hc, wc = height // 8, width // 8
    if postprocess:
        nodes.append(helper.make_node("Softmax", [logits], ["scores"], axis=1))
        nodes.append(helper.make_node("LpNormalization", [desc], ["descriptors"], axis=1, p=2))
        outputs = [("scores", 65), ("descriptors", 256)]
    else:
        nodes.append(helper.make_node("Identity", [logits], ["scores"]))
        nodes.append(helper.make_node("Identity", [desc], ["descriptors"]))
        outputs = [("scores", 65), ("descriptors", 256)]
    graph = helper.make_graph(
        nodes,
        "superpoint",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, height, width])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, c, hc, wc]) for n, c in outputs],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=DEFAULT_WEIGHTS)
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="intra-op threads (default: all cores)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--no-postprocess", action="store_true", help="leave out softmax and L2 normalisation")
    ap.add_argument("--save", help="also write the ONNX model to this path")
    args = ap.parse_args()

    import onnxruntime as ort

    model = build(load_file(args.weights), args.height, args.width, not args.no_postprocess)
    if args.save:
        onnx.save(model, args.save)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    image = np.random.default_rng(0).random((1, 1, args.height, args.width), dtype=np.float32)
    for _ in range(args.warmup):
        sess.run(None, {"image": image})
    times = []
    for _ in range(args.runs):
        t = time.perf_counter()
        sess.run(None, {"image": image})
        times.append((time.perf_counter() - t) * 1e3)
    med = statistics.median(times)
    flops = network_flops(args.height, args.width)
    print(
        f"onnxruntime {ort.__version__} CPU EP, {args.threads} threads, {args.width}x{args.height}: "
        f"median {med:.1f} ms/frame (min {min(times):.1f}, max {max(times):.1f}, {args.runs} runs), "
        f"{flops / med / 1e6:.1f} GFLOP/s"
    )


def network_flops(height, width):
    """Multiply-adds ×2 of the 12 convolutions at a height×width frame."""
    layers = [  # (cin, cout, k, downscale)
        (1, 64, 3, 1), (64, 64, 3, 1), (64, 64, 3, 2), (64, 64, 3, 2), (64, 128, 3, 4), (128, 128, 3, 4),
        (128, 128, 3, 8), (128, 128, 3, 8), (128, 256, 3, 8), (256, 65, 1, 8), (128, 256, 3, 8), (256, 256, 1, 8),
    ]
    return sum(2 * (height // s) * (width // s) * ci * co * k * k for ci, co, k, s in layers)


if __name__ == "__main__":
    main()
