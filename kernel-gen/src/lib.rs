//! kernel-gen: the compiler from the SuperPoint graph to Tensix kernels and a dispatch program.
//!
//! Pipeline, each stage a module with its own typed error:
//! [`Graph`](superpoint_graph::Graph) → [`plan`] (cores, tensor placement and layout, CBs,
//! weight distribution) → [`kir`] (reader / compute / writer as typed calls) → [`check`] (L1,
//! DST, CB protocol, runtime args, CB ids, NoC alignment, semaphores) → [`render`] (Tera
//! templates of `templates/`) → [`program`] (the [`DeviceProgram`] and the kernel sources).
//!
//! # Current state of the device design
//!
//! Supported ops: `conv2d` (any odd kernel with "same" padding, bias, fused ReLU) and
//! `max_pool2`. The input plane and the resize still run on the host: the resize node's output
//! is the frame the host uploads. Every other op is rejected by the planner, so no program here
//! claims to be the full network.
//!
//! * **Layout**: every activation lives in DRAM, interleaved, channels-last as a (pixels ×
//!   channels) matrix of bf16 tiles (32 pixels × 32 channels, 4-face), see [`layout`].
//!   Every other tensor (image plane, score maps, keypoint candidates, descriptor rows) has one
//!   layout too, and one rule gives each op's output layout ([`layout::DeviceTensor::of`]), so
//!   separately compiled programs agree on them.
//! * **Graph cuts**: [`PlanParams::external`] names nodes whose outputs are already in DRAM
//!   when a program starts (uploaded by the host, or left by an earlier program, e.g. the score
//!   map an NMS-variant program starts from); only the nodes the graph's outputs need from
//!   there on are planned.
//! * **Work split**: output pixel blocks of 32 pixels (one tile row) are split over the first
//!   cores of the grid (row-major) in contiguous runs; the first `blocks % cores` cores take one
//!   more. Block ranges are runtime args; shapes are compile-time args.
//! * **conv2d**: the reader reads the weights (K × out tiles, K = k²·in padded to 32) and the bias
//!   rows once into resident CBs, then per block fetches the input tiles each row of taps can
//!   touch into a scratch window CB and gathers the im2col tiles (zero at the borders). The
//!   compute kernel starts DST at the bias (copy of a 32-identical-row tile), accumulates
//!   `matmul_block` over K in DST (groups of output tiles within the half-sync DST capacity),
//!   applies `relu_tile` and packs bf16; the writer stores the tiles. Precision is per node in
//!   the plan (default bf16, HiFi2, fp32 DST).
//! * **max_pool2**: the reader gathers the four tap tiles of each (block, channel tile) through a
//!   small tile cache, the compute kernel takes their maximum with `binary_max_tile`.
//! * **sample_descriptors** ([`ops::sample`]): region `i` of the candidates on core `i`. Its
//!   count is only known at run time: the reader reads it from the counts buffer and pushes that
//!   page through `cb_count`, the compute kernel reads it with `read_tile_value`, the writer reads
//!   it itself; the loops over tiles of 16 candidates are [`kir::Trips::Counted`] (bounded by
//!   `capacity / 16`, the figure the checks and the report use). The reader computes the
//!   bilinear taps in integers (the formula ×2 is a ratio of integers; weights by long division
//!   to f32, no FPU needed), gathers the four corners' 256-channel rows as 32-byte half rows
//!   (each with its partner row in one 64-byte aligned DRAM read, straight into 4 × 8 bf16
//!   tiles: candidate `c` on odd row `2c + 1`, the partner on a spare even row) and writes the
//!   weights into column 0 of four fp32 tiles (zero on spare rows). The compute
//!   kernel (fp32 DST, HiFi4 by default since weights and sums pass SrcA/SrcB as tf32) sums
//!   `mul_tiles_bcast_cols` products by packing with L1 accumulation, squares, `reduce_tile` row
//!   sums, adds 1e-24, `rsqrt_tile`, and scales; the writer writes each candidate's fp32 values
//!   as 64-byte face rows into its descriptor row. CBs: `cb_neighbours` (0, 2 × 33 tiles),
//!   `cb_weights` (1, fp32), `cb_scaler` (2), `cb_count` (3), scratch `cb_records` and
//!   `cb_writer_count` (4, 5), `cb_out` (16, fp32), `cb_sum`, `cb_sq`, `cb_inv` (24–26, fp32
//!   intermediates).
//! * CBs: conv `cb_im2col` (0, 2·K tiles), `cb_weights` (1), `cb_bias` (2), `cb_window` (3,
//!   scratch), `cb_out` (16, 2 groups); pool `cb_taps` (0, 2×4), `cb_cache` (1), `cb_out` (16).
//!
//! Next steps (DESIGN §3 hints): keep activations in L1 sharded by rows with halo exchange
//! instead of the DRAM round trip; multicast each layer's weights instead of every core reading
//! them; fuse conv+ReLU+pool; im2col by 32-byte row copies when in_channels is a multiple of 32;
//! then the remaining ops (resize, softmax+fold, NMS, L2 norm, candidates, sampling).

pub mod check;
pub mod device;
pub mod kir;
pub mod layout;
pub mod ops;
pub mod plan;
pub mod program;
pub mod render;
pub mod report;

use superpoint_graph::Graph;
use thiserror::Error;

pub use check::CheckError;
pub use device::{Core, CoreRange, Fidelity, Format, Grid, Limits, Precision};
pub use kir::KirError;
pub use plan::{PlanError, PlanParams};
pub use program::{Compiled, DeviceProgram, ProgramError};
pub use render::RenderError;

/// Any failure of the pipeline.
#[derive(Debug, Error)]
pub enum CompileError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Kir(#[from] KirError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Program(#[from] ProgramError),
}

/// Compiles `graph`: plan, lower, check, render and assemble.
pub fn compile(graph: &Graph, params: &PlanParams) -> Result<Compiled, CompileError> {
    let plan = plan::plan(graph, params)?;
    let kir = kir::lower(&plan)?;
    check::check(&kir, &plan.limits)?;
    Ok(program::assemble(plan.grid, &plan.buffers, &kir)?)
}
