//! The calibration programs ([`super`]): each builds a small program with this runtime, runs it
//! on the device, and returns the timeline model's figure for it in the unit of its reference.

use crate::cost::{PhasedKernel, TimelineModel};
use crate::counters::Counters;
use crate::device::{CoreCoord, CoreRange, Device};
use crate::error::{Error, Result};
use crate::program::{CbSpec, DataFormat, KernelRole, KernelSpec, MathFidelity, Program};

const STREAM: &str = include_str!("../../kernels/calibrate/stream.cpp");
const MCAST: &str = include_str!("../../kernels/calibrate/mcast.cpp");
const SFPU: &str = include_str!("../../kernels/calibrate/sfpu.cpp");
const TILES_IN: &str = include_str!("../../kernels/calibrate/tiles_in.cpp");
const MM_IN0: &str = include_str!("../../kernels/calibrate/mm_in0.cpp");
const MM_IN1: &str = include_str!("../../kernels/calibrate/mm_in1.cpp");
const MM_COMPUTE: &str = include_str!("../../kernels/calibrate/mm_compute.cpp");

/// Pages of the DRAM and multicast streams, and page bytes of the DRAM streams (the directed
/// tests move 8 KiB packets).
const STREAM_PAGES: u32 = 64;
const STREAM_PAGE: u32 = 8192;
/// Tiles of the SFPU run.
const SFPU_TILES: u32 = 64;
const TILE: u32 = 2048;
/// Columns and rows of the published GEMM runs (P150, 13×10).
const PUBLISHED_GRID: (u32, u32) = (13, 10);

fn one_core() -> [CoreRange; 1] {
    [CoreRange::new(CoreCoord::new(0, 0), CoreCoord::new(0, 0))]
}

/// Runs `program` once and returns the counters of `kernel` on logical core `core`.
fn run_counters(
    dev: &Device,
    program: &Program,
    kernel: crate::KernelId,
    core: CoreCoord,
) -> Result<Counters> {
    dev.enqueue(program)?;
    dev.finish()?;
    program.core_counters(kernel, core)
}

/// Bytes per cycle of one kernel moving `bytes`, by the model.
fn rate(model: &TimelineModel, role: KernelRole, counters: Counters, bytes: u64) -> f64 {
    let cycles = model
        .kernel_cycles(&PhasedKernel::flat(role, counters))
        .total();
    bytes as f64 / cycles
}

/// One core streams 64 pages of 8 KiB from DRAM to L1 (or back, `write`): modeled B/cycle.
pub fn dram_stream(dev: &Device, model: &TimelineModel, write: bool) -> Result<f64> {
    let ring = 16;
    let dram = dev.dram_buffer(u64::from(STREAM_PAGES * STREAM_PAGE), STREAM_PAGE)?;
    let l1 = dev.l1_buffer(ring * STREAM_PAGE)?;
    let mut program = dev.program()?;
    let kernel = program.add_kernel(
        &KernelSpec::reader("calibrate_stream", STREAM, &one_core()).compile_args(&[
            u32::from(write),
            STREAM_PAGES,
            STREAM_PAGE,
            ring,
        ]),
    )?;
    let core = CoreCoord::new(0, 0);
    program.set_runtime_args(kernel, core, &[dram.address(), l1.address()])?;
    let counters = run_counters(dev, &program, kernel, core)?;
    Ok(rate(
        model,
        KernelRole::Reader,
        counters,
        u64::from(STREAM_PAGES * STREAM_PAGE),
    ))
}

/// Core (0, 0) multicasts 64 pages of `page` bytes to the rest of an 11×10 rectangle (with
/// `linked`, as one linked transaction to all of it, itself included): modeled B/cycle.
pub fn multicast(dev: &Device, model: &TimelineModel, page: u32, linked: bool) -> Result<f64> {
    let (cols, rows) = (11, 10);
    let l1 = dev.l1_buffer(page)?;
    let mut program = dev.program()?;
    let kernel = program.add_kernel(
        &KernelSpec::reader("calibrate_mcast", MCAST, &one_core()).compile_args(&[
            STREAM_PAGES,
            page,
            u32::from(linked),
        ]),
    )?;
    let lo = dev.worker_core(CoreCoord::new(0, 0))?;
    let hi = dev.worker_core(CoreCoord::new(cols - 1, rows - 1))?;
    let core = CoreCoord::new(0, 0);
    program.set_runtime_args(
        kernel,
        core,
        &[
            l1.address(),
            lo.x,
            lo.y,
            hi.x,
            hi.y,
            cols * rows - u32::from(!linked),
        ],
    )?;
    let counters = run_counters(dev, &program, kernel, core)?;
    Ok(rate(
        model,
        KernelRole::Reader,
        counters,
        u64::from(STREAM_PAGES * page),
    ))
}

/// 64 tiles through one relu pass each: the math thread's modeled SFPU cycles per tile.
pub fn sfpu(dev: &Device, model: &TimelineModel) -> Result<f64> {
    let cores = one_core();
    let l1 = dev.l1_buffer(TILE)?;
    let mut program = dev.program()?;
    program.add_cb(&CbSpec::tiles(0, &cores, 2, DataFormat::Float16B))?;
    program.add_cb(&CbSpec::tiles(16, &cores, 2, DataFormat::Float16B))?;
    let reader = program.add_kernel(
        &KernelSpec::reader("calibrate_tiles_in", TILES_IN, &cores).compile_args(&[SFPU_TILES]),
    )?;
    let compute = program.add_kernel(
        &KernelSpec::compute("calibrate_sfpu", SFPU, &cores).compile_args(&[SFPU_TILES]),
    )?;
    let core = CoreCoord::new(0, 0);
    program.set_runtime_args(reader, core, &[l1.address()])?;
    let counters = run_counters(dev, &program, compute, core)?;
    Ok(model.sfpu_cycles(&counters) / f64::from(SFPU_TILES))
}

/// A published GEMM's per-core work on a 13×10 P150 grid (device-based utilization counts all
/// 130 cores): each core computes `rt × ct` output tiles over `kt` K tiles, in K blocks of `kb`,
/// in `sh × sw` subblocks (at most 8 tiles: the bf16 DST half).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GemmShape {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub rt: u32,
    pub ct: u32,
    pub kt: u32,
    pub kb: u32,
    pub sh: u32,
    pub sw: u32,
}

impl GemmShape {
    /// The per-core work of M×K×N (multiples of 320 × 32 × 416) on 13×10 cores, K blocks of
    /// 2 tiles when K has 26 or fewer, else 4; subblocks 2 × (4 or fewer) output tiles.
    pub fn on_p150(m: u32, k: u32, n: u32) -> GemmShape {
        let (cols, rows) = PUBLISHED_GRID;
        let (rt, ct, kt) = (m / 32 / rows, n / 32 / cols, k / 32);
        GemmShape {
            m,
            k,
            n,
            rt,
            ct,
            kt,
            kb: if kt <= 26 { 2 } else { 4 },
            sh: 2.min(rt),
            sw: 4.min(ct),
        }
    }

    /// Ideal HiFi2 cycles of one core (32 cycles a tile product).
    pub fn ideal_cycles(&self) -> f64 {
        f64::from(self.rt * self.ct * self.kt) * 32.0
    }

    fn check(&self) -> Result<()> {
        let fits = self.rt > 0
            && self.ct > 0
            && self.kb > 0
            && self.kt % self.kb == 0
            && self.rt % self.sh == 0
            && self.ct % self.sw == 0
            && self.sh * self.sw <= 8;
        if fits {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "calibration GEMM {self:?} does not split into whole blocks and subblocks"
            )))
        }
    }
}

/// The 2D multicast matmul of `shape`'s per-core work on [`super::GEMM_GRID`]: modeled
/// device-based utilization, %.
pub fn matmul(dev: &Device, model: &TimelineModel, shape: GemmShape) -> Result<f64> {
    shape.check()?;
    let (cols, rows) = super::GEMM_GRID;
    let s = shape;
    let nb = s.kt / s.kb;
    let nt = cols * s.ct;
    let grid = [CoreRange::new(
        CoreCoord::new(0, 0),
        CoreCoord::new(cols - 1, rows - 1),
    )];
    let shard = dev.l1_buffer(s.rt * s.kt * TILE)?;
    let b = dev.dram_buffer(u64::from(s.kt * nt * TILE), TILE)?;
    let mut program = dev.program()?;
    let f = DataFormat::Float16B;
    program.add_cb(&CbSpec::tiles(0, &grid, 2 * s.rt * s.kb, f))?;
    program.add_cb(&CbSpec::tiles(1, &grid, 2 * s.kb * s.ct, f))?;
    program.add_cb(&CbSpec::tiles(16, &grid, s.rt * s.ct, f))?;
    program.add_cb(&CbSpec::tiles(24, &grid, s.rt * s.ct, f))?;
    for _ in 0..4 {
        program.add_semaphore(&grid, 0)?;
    }
    let in0 = program.add_kernel(
        &KernelSpec::reader("calibrate_mm_in0", MM_IN0, &grid).compile_args(&[s.rt, s.kb, nb]),
    )?;
    let compute = program.add_kernel(
        &KernelSpec::compute("calibrate_mm_compute", MM_COMPUTE, &grid)
            .compile_args(&[s.rt, s.ct, s.kb, nb, s.sh, s.sw])
            .fidelity(MathFidelity::HiFi2),
    )?;
    let in1 = program.add_kernel(
        &KernelSpec::writer("calibrate_mm_in1", MM_IN1, &grid)
            .compile_args(&[s.rt, s.ct, s.kb, nb]),
    )?;
    for y in 0..rows {
        for x in 0..cols {
            let at = CoreCoord::new(x, y);
            let row = (
                dev.worker_core(CoreCoord::new(0, y))?,
                dev.worker_core(CoreCoord::new(cols - 1, y))?,
            );
            let col = (
                dev.worker_core(CoreCoord::new(x, 0))?,
                dev.worker_core(CoreCoord::new(x, rows - 1))?,
            );
            program.set_runtime_args(
                in0,
                at,
                &[
                    shard.address(),
                    u32::from(x == 0),
                    row.0.x,
                    row.0.y,
                    row.0.x,
                    row.0.y,
                    row.1.x,
                    row.1.y,
                    cols - 1,
                ],
            )?;
            program.set_runtime_args(
                in1,
                at,
                &[
                    b.address(),
                    x * s.ct,
                    nt,
                    u32::from(y == 0),
                    col.0.x,
                    col.0.y,
                    col.0.x,
                    col.0.y,
                    col.1.x,
                    col.1.y,
                    rows - 1,
                ],
            )?;
        }
    }
    dev.enqueue(&program)?;
    dev.finish()?;
    // The published run's multicasts reach more cores than this grid's: in0 a row of 13 (the
    // sender included), in1 a column of 10 (the sender excluded).
    let (row, column) = PUBLISHED_GRID;
    let published = |mut c: Counters, destinations: u32| {
        c.noc_mcast_dests = c.noc_mcasts * u64::from(destinations);
        c
    };
    let blocks = u64::from(nb);
    let mut cores = Vec::new();
    for y in 0..rows {
        for x in 0..cols {
            let at = CoreCoord::new(x, y);
            let kernel = |role, counters| PhasedKernel {
                blocks,
                ..PhasedKernel::flat(role, counters)
            };
            cores.push(vec![
                kernel(
                    KernelRole::Reader,
                    published(program.core_counters(in0, at)?, row),
                ),
                kernel(KernelRole::Compute, program.core_counters(compute, at)?),
                kernel(
                    KernelRole::Writer,
                    published(program.core_counters(in1, at)?, column - 1),
                ),
            ]);
        }
    }
    let step = model.step(&cores);
    // The full shape's in1 is read from DRAM once.
    let dram = f64::from(s.k) * f64::from(s.n) * 2.0 / model.dram_bytes_per_second;
    let seconds = step.core_seconds.max(dram) + super::PROFILER_SECONDS;
    Ok(100.0 * s.ideal_cycles() / model.clock_hz / seconds)
}
