//! Calibration of the timeline cost model ([`TimelineModel`]) against published Blackhole
//! measurements: programs like the published ones, built with this runtime (kernels in
//! `kernels/calibrate/`), run on the emulator, their counters through the model, and the modeled
//! figure printed beside the published one (`superpoint bench --calibrate`).
//!
//! * **GEMM** (tt-metal `tech_reports/GEMM_FLOPS`, P150 manually tuned, BF16, HiFi2, in0 sharded
//!   in L1, in1 in DRAM, output in L1, 13×10 grid, device-based utilization): a 2D multicast
//!   matmul ([`programs::matmul`]) in tt-metal's shape: in0 multicast along each row from the
//!   row's L1 shard, in1 read from DRAM by each column's top core and multicast down the column,
//!   K in blocks with the partial sums spilled and reloaded between blocks. Every core of the
//!   published 13×10 run does the same work (M/10 × N/13 output tiles), so the program runs that
//!   per-core work on a [`GEMM_GRID`] of cores, which has every role (the corner sends both
//!   operands, the edges one, the rest receive); the aggregate DRAM bound uses the full shape's
//!   bytes. The modeled utilization is the ideal cycles over the modeled kernel time plus the
//!   device profiler's overhead per op (the published figures are profiler measurements).
//! * **DRAM read / write** (tt-low-level-documentation `ideal_performance.md`, one core): 64
//!   pages of 8 KiB between DRAM and a ring in L1, one barrier; bytes over the modeled cycles.
//! * **Multicast** (one to all, not linked): 64 multicasts from one core to the other 109 of an
//!   11×10 rectangle; bytes over the modeled cycles. Of 16 KiB (the NoC's largest packet)
//!   against the table's 24 B/cycle, which is the large-packet rate (the directed test's sweep,
//!   `perf_plots/blackhole/csv/One to All Multicast 11x10 Packet Sizes without Loopback.csv`,
//!   gives 23.2 at 16 KiB and 24.6 at 64 KiB); of 2 KiB against that sweep's 4.98 B/cycle
//!   (2048 B × 64 transactions), where the fixed cost per multicast dominates. The model's
//!   multicast constants come from other rows of the same sweeps (64 B and 64 KiB × 256).
//! * **Linked multicast**: the same 64 multicasts of 16 KiB as one linked transaction (all but
//!   the last `linked = true`) to all 110 cores, the sender included, against `One to All
//!   Multicast Linked 11x10 Packet Sizes with Loopback.csv`'s 16 KiB × 64 row (40.75 B/cycle;
//!   the model's linked constants come from its 64 B and 64 KiB × 256 rows).
//! * **SFPU** (tt-metal PR #49820, a one-instruction unary op, `BitwiseNot`, 135.43 cycles/tile
//!   on Blackhole): 64 tiles through one relu pass each, the math thread's SFPU cycles per tile.
//!   This checks that the emulator counts one SFPU pass per tile and the model's per-pass floor
//!   (from a different measurement, PR #54317) against an op of the same shape.

pub mod programs;

use crate::cost::TimelineModel;
use crate::device::Device;
use crate::error::Result;

/// The device profiler's overhead per op in a trace replay, seconds (tenstorrent/tt-metal issue
/// #26436, TENSIX_FACTS): the published GEMM figures are profiler measurements.
pub const PROFILER_SECONDS: f64 = 0.8e-6;

/// Logical cores (columns, rows) the GEMM calibration runs its per-core work on.
pub const GEMM_GRID: (u32, u32) = (3, 3);

/// What a published figure measures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A P150 BF16 HiFi2 matmul M×K×N on 13×10 cores: device-based utilization, %.
    Gemm { m: u32, k: u32, n: u32 },
    /// One core reading DRAM, B/cycle.
    DramRead,
    /// One core writing DRAM, B/cycle.
    DramWrite,
    /// One core multicasting pages of `page` bytes to the 109 other cores of 11×10, or with
    /// `linked` as one linked transaction to all 110 (the sender included), B/cycle.
    Multicast { page: u32, linked: bool },
    /// A one-instruction unary SFPU op, cycles per tile.
    Sfpu,
}

/// One published measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reference {
    pub name: &'static str,
    pub kind: Kind,
    pub published: f64,
    pub unit: &'static str,
    pub source: &'static str,
}

/// The published measurements the model is calibrated against.
pub const REFERENCES: [Reference; 9] = [
    Reference {
        name: "GEMM 640x832x832 BF16 HiFi2",
        kind: Kind::Gemm {
            m: 640,
            k: 832,
            n: 832,
        },
        published: 21.94,
        unit: "% util",
        source: "tt-metal tech_reports/GEMM_FLOPS, P150 manually tuned",
    },
    Reference {
        name: "GEMM 640x1664x3328 BF16 HiFi2",
        kind: Kind::Gemm {
            m: 640,
            k: 1664,
            n: 3328,
        },
        published: 52.52,
        unit: "% util",
        source: "tt-metal tech_reports/GEMM_FLOPS, P150 manually tuned",
    },
    Reference {
        name: "GEMM 1280x1664x1664 BF16 HiFi2",
        kind: Kind::Gemm {
            m: 1280,
            k: 1664,
            n: 1664,
        },
        published: 74.07,
        unit: "% util",
        source: "tt-metal tech_reports/GEMM_FLOPS, P150 manually tuned",
    },
    Reference {
        name: "DRAM read, one core",
        kind: Kind::DramRead,
        published: 33.0,
        unit: "B/cycle",
        source: "tt-low-level-documentation ideal_performance.md",
    },
    Reference {
        name: "DRAM write, one core",
        kind: Kind::DramWrite,
        published: 34.0,
        unit: "B/cycle",
        source: "tt-low-level-documentation ideal_performance.md",
    },
    Reference {
        name: "multicast 16 KiB to 109 cores",
        kind: Kind::Multicast {
            page: 16384,
            linked: false,
        },
        published: 24.0,
        unit: "B/cycle",
        source: "tt-low-level-documentation ideal_performance.md",
    },
    Reference {
        name: "multicast 2 KiB to 109 cores",
        kind: Kind::Multicast {
            page: 2048,
            linked: false,
        },
        published: 4.98,
        unit: "B/cycle",
        source: "tt-low-level-documentation One to All Multicast 11x10 csv",
    },
    Reference {
        name: "linked multicast 16 KiB to 110",
        kind: Kind::Multicast {
            page: 16384,
            linked: true,
        },
        published: 40.75,
        unit: "B/cycle",
        source: "tt-low-level-documentation One to All Multicast Linked 11x10 csv",
    },
    Reference {
        name: "SFPU unary op (BitwiseNot)",
        kind: Kind::Sfpu,
        published: 135.43,
        unit: "cycles/tile",
        source: "tt-metal PR #49820",
    },
];

/// One reference with the model's figure for the program like it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    pub reference: Reference,
    pub modeled: f64,
}

impl Calibration {
    /// |modeled − published| / published.
    pub fn error(&self) -> f64 {
        (self.modeled - self.reference.published).abs() / self.reference.published
    }
}

/// Runs every reference's program on `dev` and models it.
pub fn calibrate(dev: &Device, model: &TimelineModel) -> Result<Vec<Calibration>> {
    REFERENCES
        .iter()
        .map(|r| {
            let modeled = match r.kind {
                Kind::Gemm { m, k, n } => {
                    programs::matmul(dev, model, programs::GemmShape::on_p150(m, k, n))?
                }
                Kind::DramRead => programs::dram_stream(dev, model, false)?,
                Kind::DramWrite => programs::dram_stream(dev, model, true)?,
                Kind::Multicast { page, linked } => programs::multicast(dev, model, page, linked)?,
                Kind::Sfpu => programs::sfpu(dev, model)?,
            };
            Ok(Calibration {
                reference: *r,
                modeled,
            })
        })
        .collect()
}
