//! Times the CPU backend on the full SuperPoint graph (DESIGN §6): median ms per frame over N
//! runs after a warm-up, the convolutions' GFLOP/s, and a per-op breakdown of the median run.
//!
//! `cargo run --release -p superpoint --example bench_cpu -- [--runs N] [--warmup N]
//! [--width W] [--height H] [--threads T] [--weights PATH]` (defaults: 10 runs, 3 warm-up,
//! 640×480, all cores, the fixture weights). See `bench/README.md` for the ONNX Runtime side.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use superpoint::backend::cpu::{CpuKernels, Hwc};
use superpoint_graph::{ConvWeights, Kernels, Keypoint, Tensor, CONV_LAYERS};

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

/// The CPU kernels, recording the wall time of every op under a descriptive label.
struct Timed {
    inner: CpuKernels,
    log: Mutex<Vec<(String, Duration)>>,
}

impl Timed {
    fn time<R>(&self, label: impl FnOnce() -> String, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        let dt = t.elapsed();
        if let Ok(mut log) = self.log.lock() {
            log.push((label(), dt));
        }
        r
    }
}

fn shape(x: &Hwc) -> String {
    format!("{}x{}x{}", x.height(), x.width(), x.channels())
}

impl Kernels for Timed {
    type Dense = Hwc;

    fn resize(&self, input: &Tensor<u8>, width: usize, height: usize) -> Hwc {
        self.time(
            || "resize".into(),
            || self.inner.resize(input, width, height),
        )
    }
    fn conv2d(&self, x: &Hwc, w: &ConvWeights, pad: usize, relu: bool) -> Hwc {
        self.time(
            || {
                format!(
                    "conv{}x{} {}->{} @{}",
                    w.kernel,
                    w.kernel,
                    w.in_channels,
                    w.out_channels,
                    shape(x)
                )
            },
            || self.inner.conv2d(x, w, pad, relu),
        )
    }
    fn max_pool2(&self, x: &Hwc) -> Hwc {
        self.time(
            || format!("maxpool @{}", shape(x)),
            || self.inner.max_pool2(x),
        )
    }
    fn softmax(&self, x: &Hwc) -> Hwc {
        self.time(|| "softmax".into(), || self.inner.softmax(x))
    }
    fn dustbin_fold(&self, x: &Hwc, cell: usize) -> Hwc {
        self.time(
            || "dustbin_fold".into(),
            || self.inner.dustbin_fold(x, cell),
        )
    }
    fn nms(&self, x: &Hwc, radius: usize) -> Hwc {
        self.time(|| "nms".into(), || self.inner.nms(x, radius))
    }
    fn l2_normalize(&self, x: &Hwc) -> Hwc {
        self.time(|| "l2_normalize".into(), || self.inner.l2_normalize(x))
    }
    fn select_keypoints(
        &self,
        x: &Hwc,
        threshold: f32,
        border: usize,
        max_keypoints: i64,
    ) -> Vec<Keypoint> {
        self.time(
            || "select_keypoints".into(),
            || {
                self.inner
                    .select_keypoints(x, threshold, border, max_keypoints)
            },
        )
    }
    fn sample_descriptors(&self, x: &Hwc, keypoints: &[Keypoint], cell: usize) -> Vec<f32> {
        self.time(
            || "sample_descriptors".into(),
            || self.inner.sample_descriptors(x, keypoints, cell),
        )
    }
    fn channels(&self, x: &Hwc) -> usize {
        self.inner.channels(x)
    }
    fn to_planar(&self, x: &Hwc) -> Tensor<f32> {
        self.inner.to_planar(x)
    }
}

/// 2 × multiply-adds of the 12 convolutions at a width×height frame.
fn network_flops(width: usize, height: usize) -> f64 {
    let scale = [1, 1, 2, 2, 4, 4, 8, 8, 8, 8, 8, 8];
    CONV_LAYERS
        .iter()
        .zip(scale)
        .map(|(l, s)| {
            2.0 * ((height / s)
                * (width / s)
                * l.in_channels
                * l.out_channels
                * l.kernel
                * l.kernel) as f64
        })
        .sum()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let weights = superpoint::weights::load_safetensors(&args.weights)?;
    let graph = superpoint_graph::superpoint(args.width, args.height);
    graph.validate()?;
    let kernels = Timed {
        inner: CpuKernels::with_threads(args.threads)?,
        log: Mutex::new(Vec::new()),
    };
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
        if let Ok(mut log) = kernels.log.lock() {
            log.clear();
        }
        let t = Instant::now();
        let values = superpoint_graph::run(&kernels, &graph, &weights, &input, &[])?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if i >= args.warmup {
            frames.push(ms);
            if let Ok(log) = kernels.log.lock() {
                logs.push((ms, log.clone()));
            }
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
    let flops = network_flops(args.width, args.height);
    println!(
        "superpoint CPU backend, {threads} threads, {}x{}: median {med:.1} ms/frame (min {min:.1}, {} runs), \
         {:.1} GFLOP/s on {:.1} GFLOP of convolutions, {keypoints} keypoints",
        args.width,
        args.height,
        args.runs,
        flops / med / 1e6,
        flops / 1e9,
    );

    // Per-op breakdown: the median over runs of each op's time.
    let mut per_op: BTreeMap<usize, (String, Vec<f64>)> = BTreeMap::new();
    for (_, log) in &logs {
        for (i, (label, dt)) in log.iter().enumerate() {
            per_op
                .entry(i)
                .or_insert_with(|| (label.clone(), Vec::new()))
                .1
                .push(dt.as_secs_f64() * 1e3);
        }
    }
    println!("{:>9}  op", "ms");
    for (label, times) in per_op.into_values() {
        println!("{:>9.2}  {label}", median(times));
    }
    Ok(())
}
