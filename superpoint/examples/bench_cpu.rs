//! Times the CPU backend on the full SuperPoint graph (DESIGN §6): median ms per frame over N
//! runs after a warm-up, the convolutions' GFLOP/s, and a per-node breakdown (the executor's node timings).
//!
//! `cargo run --release -p superpoint --example bench_cpu -- [--runs N] [--warmup N]
//! [--width W] [--height H] [--threads T] [--weights PATH]` (defaults: 10 runs, 3 warm-up,
//! 640×480, all cores, the fixture weights). See `bench/README.md` for the ONNX Runtime side.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use superpoint::backend::cpu::{CpuKernels, Isa};
use superpoint_graph::{Dim, Graph, Op, Tensor, ValueType};

struct Args {
    runs: usize,
    warmup: usize,
    width: usize,
    height: usize,
    threads: usize,
    weights: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        runs: 10,
        warmup: 3,
        width: 640,
        height: 480,
        threads: 0,
        weights: PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/weights/random-seed1.safetensors"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("{flag} {value}: {e}"))
        };
        match flag.as_str() {
            "--runs" => args.runs = number()?.max(1),
            "--warmup" => args.warmup = number()?,
            "--width" => args.width = number()?,
            "--height" => args.height = number()?,
            "--threads" => args.threads = number()?,
            "--weights" => args.weights = PathBuf::from(value),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(args)
}

/// 2 × multiply-adds of the graph's convolutions, from its inferred shapes.
fn conv_flops(graph: &Graph) -> Result<f64, superpoint_graph::GraphError> {
    let typed = graph.validate()?;
    Ok(graph
        .nodes
        .iter()
        .zip(&typed.types)
        .map(|(node, ty)| match (&node.op, ty) {
            (
                Op::Conv2d {
                    in_channels,
                    out_channels,
                    kernel,
                    ..
                },
                ValueType::Dense {
                    height: Dim::Known(h),
                    width: Dim::Known(w),
                    ..
                },
            ) => 2.0 * (h * w * in_channels * out_channels * kernel * kernel) as f64,
            _ => 0.0,
        })
        .sum())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let weights = superpoint::weights::load_safetensors(&args.weights)?;
    let graph = superpoint_graph::superpoint(args.width, args.height);
    let kernels = CpuKernels::with_isa(Isa::from_env()?).with_threads(args.threads)?;
    // A deterministic pseudo-random plane at the frame size (the resize is then a copy).
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let data = (0..args.width * args.height)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect();
    let input = Tensor::from_vec(1, args.height, args.width, data).ok_or("bad frame size")?;

    let mut frames = Vec::new();
    let mut logs = Vec::new();
    let mut keypoints = 0;
    for i in 0..args.warmup + args.runs {
        let t = Instant::now();
        let values = superpoint_graph::run(&kernels, &graph, &weights, &input, &[])?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if i >= args.warmup {
            frames.push(ms);
            logs.push(values.timings.clone());
        }
        keypoints = values.keypoints("keypoints").map_or(0, <[_]>::len);
    }
    let med = median(frames.clone());
    let min = frames.iter().copied().fold(f64::INFINITY, f64::min);
    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let flops = conv_flops(&graph)?;
    println!(
        "superpoint CPU backend, {} ({threads} threads), {}x{}: median {med:.1} ms/frame (min {min:.1}, {} runs), \
         {:.1} GFLOP/s on {:.1} GFLOP of convolutions, {keypoints} keypoints",
        kernels.isa(),
        args.width,
        args.height,
        args.runs,
        flops / med / 1e6,
        flops / 1e9,
    );

    // Per-node breakdown: the median over runs of each node's time.
    let mut per_op: BTreeMap<usize, (String, Vec<f64>)> = BTreeMap::new();
    for log in &logs {
        for (i, (label, dt)) in log.iter().enumerate() {
            per_op
                .entry(i)
                .or_insert_with(|| (label.clone(), Vec::new()))
                .1
                .push(dt.as_secs_f64() * 1e3);
        }
    }
    println!("{:>9}  node", "ms");
    for (label, times) in per_op.into_values() {
        println!("{:>9.2}  {label}", median(times));
    }
    Ok(())
}
