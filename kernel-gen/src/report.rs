//! Static per-node figures of a compiled program, read off the kernel IR: cores used, the L1
//! peak per core (CBs plus the L1 arena, [`crate::arena`]), the kernel-config bytes per core and
//! the program-configuration dispatch command ([`crate::dispatch`]), tile operations by fidelity, and
//! DRAM bytes summed over all cores (pages of buffers in the L1 arena move over the NoC
//! between cores instead and are not counted). They are the static inputs of the cost model (§6).
//! Reader DRAM reads are upper bounds where the kernel skips work at run time: the conv input
//! ring's full prologue and one block per output block (the blocks outside the image, which
//! the reader skips, included), pool taps without tile-cache hits. Loops over run-time counts
//! ([`crate::kir::Trips::Counted`], descriptor sampling) count their bound (every region full):
//! the whole report is the worst case, and says so. [`crate::model`] charges a run's counts.

use std::fmt::Write;

use crate::device::Fidelity;
use crate::dispatch::{config_command_bytes, kernel_config};
use crate::kir::Arena;
use crate::kir::{walk, Call, Kir, NodeKir};
use crate::plan::cbs_l1_bytes;

/// The figures of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeReport {
    pub node: String,
    pub op: String,
    pub cores: usize,
    pub cb_bytes_per_core: u64,
    /// Runtime args, semaphore and CB configs in the kernel-config region (binaries not included).
    pub kernel_config_bytes: u32,
    /// The prefetch-queue entry of the semaphore and CB configuration.
    pub dispatch_command_bytes: u32,
    pub fidelity: Fidelity,
    pub matmul_tiles: u64,
    pub copy_tiles: u64,
    pub sfpu_tiles: u64,
    pub reduce_tiles: u64,
    pub binary_tiles: u64,
    pub pack_tiles: u64,
    pub dram_read_bytes: u64,
    pub dram_write_bytes: u64,
    pub l1_gather_bytes: u64,
}

fn node_report(node: &NodeKir, arena: &Arena) -> NodeReport {
    let mut r = NodeReport {
        node: node.node.clone(),
        op: node.op.clone(),
        cores: node.blocks.len(),
        // The checker holds every CB to whole L1 alignment units, so no rounding is needed.
        cb_bytes_per_core: cbs_l1_bytes(&node.cbs, 1) + u64::from(arena.bytes),
        kernel_config_bytes: kernel_config(node).bytes(),
        dispatch_command_bytes: config_command_bytes(node),
        fidelity: node
            .kernels
            .iter()
            .find_map(|k| k.precision)
            .map_or(Fidelity::HiFi4, |p| p.fidelity),
        matmul_tiles: 0,
        copy_tiles: 0,
        sfpu_tiles: 0,
        reduce_tiles: 0,
        binary_tiles: 0,
        pack_tiles: 0,
        dram_read_bytes: 0,
        dram_write_bytes: 0,
        l1_gather_bytes: 0,
    };
    for (_, on) in node.cores() {
        for kernel in &node.kernels {
            walk(&kernel.body, on, 1, &mut |call, times| match call {
                Call::Matmul { ct, rt, .. } => r.matmul_tiles += times * u64::from(ct * rt),
                Call::Copy { tiles } => r.copy_tiles += times * u64::from(*tiles),
                Call::Sfpu { tiles, .. } => r.sfpu_tiles += times * u64::from(*tiles),
                Call::Reduce { tiles, .. } => r.reduce_tiles += times * u64::from(*tiles),
                Call::Binary { tiles, .. } => r.binary_tiles += times * u64::from(*tiles),
                Call::Pack { tiles, .. } => r.pack_tiles += times * u64::from(*tiles),
                Call::DramRead {
                    buffer,
                    pages,
                    page_bytes,
                    ..
                } if !arena.holds(buffer) => {
                    r.dram_read_bytes += times * u64::from(*pages) * u64::from(*page_bytes)
                }
                Call::DramWrite {
                    buffer,
                    pages,
                    page_bytes,
                    ..
                } if !arena.holds(buffer) => {
                    r.dram_write_bytes += times * u64::from(*pages) * u64::from(*page_bytes)
                }
                Call::L1Gather { bytes } => r.l1_gather_bytes += times * u64::from(*bytes),
                Call::DramPart {
                    buffer,
                    write,
                    transfers,
                    bytes,
                    ..
                } if !arena.holds(buffer) => {
                    let moved = times * u64::from(*transfers) * u64::from(*bytes);
                    if *write {
                        r.dram_write_bytes += moved;
                    } else {
                        r.dram_read_bytes += moved;
                    }
                }
                // A transpose is the unpacker's datacopy into DST with the transpose flag.
                Call::Transpose { tiles } => r.copy_tiles += times * u64::from(*tiles),
                _ => {}
            });
        }
    }
    r
}

/// The figures of every node, in launch order.
pub fn report(kir: &Kir) -> Vec<NodeReport> {
    kir.nodes
        .iter()
        .map(|n| node_report(n, &kir.arena))
        .collect()
}

/// A fixed-width table of the figures, under a line saying they are the worst case.
pub fn table(rows: &[NodeReport]) -> String {
    let mut out = String::from(
        "worst case: DRAM reads without tile-cache hits, loops over run-time counts at their bound (full candidate regions)\n\
         node        op         cores  CB/L1 peak B  cfg B  fidelity  matmul tiles  copy  sfpu  reduce  binary  pack  DRAM read B  DRAM write B  L1 gather B  dispatch B\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{:<11} {:<10} {:>5}  {:>12}  {:>5}  {:<8}  {:>12}  {:>4}  {:>4}  {:>6}  {:>6}  {:>4}  {:>11}  {:>12}  {:>11}  {:>10}",
            r.node,
            r.op,
            r.cores,
            r.cb_bytes_per_core,
            r.kernel_config_bytes,
            format!("{:?}", r.fidelity),
            r.matmul_tiles,
            r.copy_tiles,
            r.sfpu_tiles,
            r.reduce_tiles,
            r.binary_tiles,
            r.pack_tiles,
            r.dram_read_bytes,
            r.dram_write_bytes,
            r.l1_gather_bytes,
            r.dispatch_command_bytes
        );
    }
    out
}
