//! Modeled device time of a profiled frame: each step's per-core kernel counters through
//! `tt_runtime::cost` (a roofline model of the Blackhole, never a measurement). Scalar RISC-V
//! loops the emulator cannot count are left out, so every figure is a lower bound for kernels
//! that loop over data on a data-movement core (the model's docs say which).

use std::collections::BTreeMap;

use kernel_gen::kir::Role;
use tt_runtime::{Bound, CostModel, KernelRole, KernelWork};

use super::session::StepCounters;

/// One node's modeled time.
#[derive(Debug, Clone)]
pub struct NodeTime {
    pub node: String,
    /// Cores that ran its kernels.
    pub cores: usize,
    /// Modeled seconds, launch overhead included.
    pub seconds: f64,
    /// What bounds it.
    pub bound: Bound,
}

fn role(r: Role) -> KernelRole {
    match r {
        Role::Reader => KernelRole::Reader,
        Role::Writer => KernelRole::Writer,
        Role::Compute => KernelRole::Compute,
    }
}

/// The modeled time of every step, in launch order.
pub fn modeled(steps: &[StepCounters], model: &CostModel) -> Vec<NodeTime> {
    steps
        .iter()
        .map(|step| {
            let mut cores: BTreeMap<(u32, u32), Vec<KernelWork>> = BTreeMap::new();
            for k in &step.kernels {
                for (core, counters) in &k.cores {
                    cores.entry((core.x, core.y)).or_default().push(KernelWork {
                        role: role(k.role),
                        counters: *counters,
                        scalar_cycles: 0.0,
                    });
                }
            }
            let per_core: Vec<Vec<KernelWork>> = cores.into_values().collect();
            let estimate = model.step(&per_core);
            NodeTime {
                node: step.node.clone(),
                cores: estimate.cores,
                seconds: estimate.seconds(),
                bound: estimate.bound(),
            }
        })
        .collect()
}
