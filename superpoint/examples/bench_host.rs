//! Times the host pre-processing of the CPU backend (DESIGN §6): an encoded image file's bytes
//! decoded to the input plane (R, as `superpoint detect` does by default) and resized to the
//! network frame with Pillow's BILINEAR filter, as f32 in [0, 1]. Prints one line per file:
//! `<path>: median <ms> ms (<runs> runs)`; `bench/host_side_by_side.sh` runs it beside Pillow.
//!
//! `cargo run --release -p superpoint --example bench_host -- FILE... [--runs N] [--warmup N]
//! [--frame WxH]` (defaults: 20 runs, 3 warm-up, 640×480, all cores).

use std::time::Instant;

use superpoint::backend::cpu::{CpuKernels, Isa};
use superpoint::decode::{decode_plane, PlaneSpec};
use superpoint::Input;
use superpoint_graph::Kernels;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut files, mut runs, mut warmup, mut frame) = (Vec::new(), 20, 3, (640, 480));
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => runs = value()?.parse::<usize>()?.max(1),
            "--warmup" => warmup = value()?.parse()?,
            "--frame" => {
                let v = value()?;
                let (w, h) = v.split_once('x').ok_or(format!("--frame {v}: use WxH"))?;
                frame = (w.parse()?, h.parse()?);
            }
            _ => files.push(arg),
        }
    }
    let kernels = CpuKernels::with_isa(Isa::from_env()?);
    for path in &files {
        let bytes = std::fs::read(path)?;
        let mut times = Vec::with_capacity(runs);
        for i in 0..warmup + runs {
            let start = Instant::now();
            let plane = decode_plane(&Input::from(&bytes[..]), PlaneSpec::default())?;
            let input = kernels.resize(&plane, frame.0, frame.1);
            std::hint::black_box(&input);
            if i >= warmup {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        times.sort_by(f64::total_cmp);
        let median = if runs % 2 == 1 {
            times[runs / 2]
        } else {
            (times[runs / 2 - 1] + times[runs / 2]) / 2.0
        };
        println!("{path}: median {median:.2} ms ({runs} runs)");
    }
    Ok(())
}
