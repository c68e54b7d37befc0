//! Modeled device time of a program that ran on the emulator: each step's per-core counters
//! ([`crate::runner::Loaded::counters`]) plus the scalar RISC-V work read off the kernel IR (the
//! `L1Gather` bytes a data-movement or compute kernel rearranges in L1, which the emulator cannot
//! count) go through [`tt_runtime::CostModel`]. Every figure is a model, never a measurement.

use std::collections::BTreeMap;

use thiserror::Error;
use tt_runtime::{CostModel, KernelRole, KernelWork, StepEstimate};

use crate::kir::{self, Call, Kir, OnCore, Role};
use crate::runner::StepCounters;

/// The port's device time per trace replay on a p150a (device profiler, 23 ops; seed 000).
pub const PORT_MEASURED_US: f64 = 462.8;
/// DESIGN §6 goal for the modeled device program.
pub const GOAL_US: f64 = 250.0;

/// Counters and kernel IR that do not belong together.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    #[error("step `{0}` ran but has no kernel IR")]
    NoKir(String),
    #[error("step `{step}`: kernel `{kernel}` has no kernel IR of its role")]
    NoKernel { step: String, kernel: String },
}

/// One step's modeled time, with and without the scalar RISC-V work.
#[derive(Debug, Clone)]
pub struct NodeEstimate {
    pub node: String,
    pub op: String,
    pub with_scalar: StepEstimate,
    pub without_scalar: StepEstimate,
    /// DRAM bytes the static report expects (worst case: no cache hits, full candidate regions).
    pub static_dram_bytes: u64,
}

fn runtime_role(role: Role) -> KernelRole {
    match role {
        Role::Reader => KernelRole::Reader,
        Role::Writer => KernelRole::Writer,
        Role::Compute => KernelRole::Compute,
    }
}

/// L1 bytes a kernel body rearranges on its RISC-V on core `on`.
fn gather_bytes(body: &[Call], on: OnCore) -> u64 {
    let mut bytes = 0;
    kir::walk(body, on, 1, &mut |call, times| {
        if let Call::L1Gather { bytes: b } = call {
            bytes += times * u64::from(*b);
        }
    });
    bytes
}

/// Models every step that ran, in launch order.
pub fn estimate(
    kir: &Kir,
    steps: &[StepCounters],
    model: &CostModel,
) -> Result<Vec<NodeEstimate>, ModelError> {
    let static_dram: BTreeMap<String, u64> = crate::report::report(kir)
        .into_iter()
        .map(|r| (r.node, r.dram_read_bytes + r.dram_write_bytes))
        .collect();
    steps
        .iter()
        .map(|step| {
            let node = kir
                .nodes
                .iter()
                .find(|n| n.node == step.node)
                .ok_or_else(|| ModelError::NoKir(step.node.clone()))?;
            let mut cores: BTreeMap<(u32, u32), Vec<KernelWork>> = BTreeMap::new();
            for k in &step.kernels {
                let body = &node
                    .kernels
                    .iter()
                    .find(|kk| kk.role == k.role)
                    .ok_or_else(|| ModelError::NoKernel {
                        step: step.node.clone(),
                        kernel: k.kernel.clone(),
                    })?
                    .body;
                for (core, counters) in &k.cores {
                    let on = node.cores().find(|(c, _)| c == core).map_or(
                        OnCore {
                            blocks: 0,
                            sender: false,
                        },
                        |(_, on)| on,
                    );
                    cores.entry((core.x, core.y)).or_default().push(KernelWork {
                        role: runtime_role(k.role),
                        counters: *counters,
                        scalar_cycles: model.l1_rearrange_cycles(gather_bytes(body, on)),
                    });
                }
            }
            let with: Vec<Vec<KernelWork>> = cores.into_values().collect();
            let without: Vec<Vec<KernelWork>> = with
                .iter()
                .map(|ks| {
                    ks.iter()
                        .map(|k| KernelWork {
                            scalar_cycles: 0.0,
                            ..*k
                        })
                        .collect()
                })
                .collect();
            Ok(NodeEstimate {
                node: step.node.clone(),
                op: step.op.clone(),
                with_scalar: model.step(&with),
                without_scalar: model.step(&without),
                static_dram_bytes: static_dram.get(&step.node).copied().unwrap_or(0),
            })
        })
        .collect()
}

/// What the slowest core and DRAM spend, in modeled µs, for a report line.
pub fn why(e: &StepEstimate, clock_hz: f64) -> String {
    let s = &e.slowest;
    let us = |cycles: f64| cycles / clock_hz * 1e6;
    format!(
        "fpu {:.1} sfpu {:.1} pack {:.1} | rd noc {:.1} scalar {:.1} | wr noc {:.1} scalar {:.1} | dram {:.1}",
        us(s.fpu),
        us(s.sfpu),
        us(s.pack),
        us(s.reader_noc),
        us(s.reader_scalar),
        us(s.writer_noc),
        us(s.writer_scalar),
        e.dram_seconds * 1e6
    )
}
