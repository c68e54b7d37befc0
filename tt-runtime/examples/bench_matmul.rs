//! Emulator throughput on a grid-wide matmul (in0 multicast along rows, HiFi2, fp32 DST, the
//! configuration SuperPoint uses): prints emulated 32x32x32 tile products per second and the
//! projected time of the full SuperPoint program (~1.5 M tile products at 640x480).
//!
//! `cargo run --release -p tt-runtime --example bench_matmul [kt] [reps]`

use std::time::Instant;

use tt_runtime::host::to_bf16_bytes;
use tt_runtime::{DataFormat, Device, Dispatch, GridMatmul, MathFidelity, TileOp};

const SUPERPOINT_TILE_MATMULS: f64 = 1.5e6;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let kt: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(64);
    let reps: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(3);
    let dev = Device::open(Dispatch::Auto)?;
    let info = dev.info()?;
    let shape = GridMatmul {
        rows: info.grid_y,
        cols: info.grid_x,
        kt,
        ct: 4,
        fidelity: MathFidelity::HiFi2,
        fp32_dest: true,
        out_format: DataFormat::Float16B,
    };
    let run = shape.build(&dev)?;
    let a: Vec<f32> = (0..run.a.size() / 2)
        .map(|i| ((i % 17) as f32 - 8.0) / 8.0)
        .collect();
    let b: Vec<f32> = (0..run.b.size() / 2)
        .map(|i| ((i % 13) as f32 - 6.0) / 16.0)
        .collect();
    run.a.write(&to_bf16_bytes(&a))?;
    run.b.write(&to_bf16_bytes(&b))?;
    // The first run compiles the kernels (or loads them from the cache).
    dev.enqueue(&run.program)?;
    let trace = dev.capture_trace(|d| d.enqueue(&run.program))?;
    let start = Instant::now();
    for _ in 0..reps {
        dev.replay(&trace)?;
    }
    let secs = start.elapsed().as_secs_f64();
    let tiles = shape.tile_matmuls() as f64 * f64::from(reps);
    let rate = tiles / secs;
    let counters = run.program.counters(None)?;
    println!(
        "grid {}x{} cores, kt {}, {} output tiles per core, HiFi2, fp32 DST",
        shape.cols, shape.rows, shape.kt, shape.ct
    );
    println!(
        "{} tile matmuls in {:.3} s over {} replays",
        tiles, secs, reps
    );
    println!("emulated throughput: {:.0} tile matmuls/s", rate);
    println!(
        "projected SuperPoint ({:.1} M tile matmuls): {:.1} s",
        SUPERPOINT_TILE_MATMULS / 1e6,
        SUPERPOINT_TILE_MATMULS / rate
    );
    println!(
        "counted: {} matmul tiles, {} multicasts, {} DRAM bytes read, {} CB waits ({} blocked)",
        counters.tile_ops(TileOp::Matmul),
        counters.noc_mcasts,
        counters.dram_read_bytes,
        counters.cb_waits,
        counters.cb_blocked
    );
    Ok(())
}
