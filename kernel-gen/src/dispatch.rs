//! What dispatching a node's program puts in each core's kernel-config region and in the
//! prefetcher's command queue, sized as the pinned tt-metal sizes them
//! (`tt_metal/impl/program/dispatch.cpp`, `tt_metal/impl/dispatch/device_command_calculator.hpp`,
//! `tt_metal/impl/dispatch/kernels/cq_commands.hpp`).
//!
//! **Kernel-config region** ([`KernelConfig`], `finalize_rt_args` / `finalize_sems` /
//! `finalize_cbs`): the cores running the same kernels form a kernel group; each kernel's
//! runtime-arg slot is as large as its most args on a core of the group (4 B each), the slots
//! back to back and the group's total aligned to 16 B, the region's share the largest group's;
//! then 16 B per semaphore id and 16 B (`UINT32_WORDS_PER_LOCAL_CIRCULAR_BUFFER_CONFIG` words)
//! per CB id up to the highest. On Blackhole the kernel binaries follow in the same region
//! ([`crate::device::Limits::kernel_config_bytes`]); their RISC-V size is only known to
//! tt-metal's JIT, so [`KernelConfig::bytes`] leaves them out (the report shows what remains).
//!
//! **Program-configuration command** ([`config_command_bytes`]): the semaphores and CB configs
//! (and common runtime args, which these programs do not use) go out as one
//! `CQ_DISPATCH_CMD_WRITE_PACKED_LARGE` sub-command per destination rectangle whose data rides
//! in the command: the semaphore words and the CB configs are adjacent in the region, so they
//! merge into one span of `16·semaphores + 16·(highest CB id + 1)` bytes (gaps of at most 16 B
//! are filled, `BatchedTransferGenerator::construct_commands`). Each command of up to 35
//! sub-commands (`CQ_DISPATCH_CMD_PACKED_WRITE_LARGE_MAX_SUB_CMDS`) takes
//! `16 (CQPrefetchCmd) + align16(16 (CQDispatchCmd) + 12·sub-commands) + align16(data)` bytes,
//! aligned to the 64-byte PCIe alignment (`DeviceCommandCalculator::add_dispatch_write_packed_large`).
//! At the pinned tt-metal these commands are concatenated into one prefetch-queue entry, which
//! must fit `max_prefetch_command_size` ([`crate::device::Grid::max_prefetch_command_bytes`]:
//! 32 KiB with Ethernet dispatch); tt-metal PR #53988 (open) splits them. The unique runtime
//! args go separately, in unicast `WRITE_PACKED` commands that tt-metal already chunks to fit.

use crate::device::{Core, CoreRange};
use crate::kir::NodeKir;

/// L1 alignment of the region's parts.
const ALIGN: u32 = 16;
/// Bytes of one semaphore and of one CB id's config in the region.
const SEMAPHORE_BYTES: u32 = 16;
const CB_CONFIG_BYTES: u32 = 16;
/// Command sizes of `cq_commands.hpp`.
const PREFETCH_CMD_BYTES: u32 = 16;
const DISPATCH_CMD_BYTES: u32 = 16;
const PACKED_LARGE_SUB_CMD_BYTES: u32 = 12;
const PACKED_LARGE_MAX_SUB_CMDS: usize = 35;
/// Blackhole's PCIe alignment, which every prefetch command is padded to.
const PCIE_ALIGN: u32 = 64;

fn align(x: u32, to: u32) -> u32 {
    x.div_ceil(to) * to
}

fn contains(r: &CoreRange, c: Core) -> bool {
    (r.start.x..=r.end.x).contains(&c.x) && (r.start.y..=r.end.y).contains(&c.y)
}

fn cores(ranges: &[CoreRange]) -> impl Iterator<Item = Core> + '_ {
    ranges.iter().flat_map(|r| {
        (r.start.y..=r.end.y).flat_map(move |y| (r.start.x..=r.end.x).map(move |x| Core { x, y }))
    })
}

/// A node's share of a core's kernel-config region, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelConfig {
    /// The core whose kernel group needs the most runtime-arg bytes.
    pub core: Core,
    pub runtime_args: u32,
    pub semaphores: u32,
    pub cbs: u32,
}

impl KernelConfig {
    /// Everything but the kernel binaries.
    pub fn bytes(&self) -> u32 {
        self.runtime_args + self.semaphores + self.cbs
    }
}

/// The kernel-config bytes of `node`'s program on every core.
pub fn kernel_config(node: &NodeKir) -> KernelConfig {
    let kernels_on = |c: Core| -> Vec<usize> {
        (0..node.kernels.len())
            .filter(|&k| node.kernels[k].ranges.iter().any(|r| contains(r, c)))
            .collect()
    };
    let args_on = |k: usize, c: Core| -> u32 {
        node.kernels[k]
            .runtime_args
            .iter()
            .find(|a| a.core == c)
            .map_or(0, |a| a.args.len() as u32)
    };
    let mut groups: Vec<(Vec<usize>, Vec<Core>)> = Vec::new();
    for c in cores(&node.ranges) {
        let ks = kernels_on(c);
        match groups.iter_mut().find(|(g, _)| *g == ks) {
            Some((_, members)) => members.push(c),
            None => groups.push((ks, vec![c])),
        }
    }
    let first = cores(&node.ranges).next().unwrap_or(Core { x: 0, y: 0 });
    let (core, runtime_args) = groups
        .iter()
        .map(|(ks, members)| {
            let slots: u32 = ks
                .iter()
                .map(|&k| members.iter().map(|&c| args_on(k, c)).max().unwrap_or(0) * 4)
                .sum();
            (members[0], align(slots, ALIGN))
        })
        .fold(
            (first, 0),
            |most, group| if group.1 > most.1 { group } else { most },
        );
    KernelConfig {
        core,
        runtime_args,
        semaphores: node.semaphores * SEMAPHORE_BYTES,
        cbs: node.cbs.iter().map(|c| c.id + 1).max().unwrap_or(0) * CB_CONFIG_BYTES,
    }
}

/// Bytes of the prefetch-queue entry holding `node`'s program-configuration commands (the
/// semaphore and CB configs to each of its core rectangles); 0 when it has neither.
pub fn config_command_bytes(node: &NodeKir) -> u32 {
    let config = kernel_config(node);
    let span = config.semaphores + config.cbs;
    if span == 0 {
        return 0;
    }
    node.ranges
        .chunks(PACKED_LARGE_MAX_SUB_CMDS)
        .map(|rects| {
            let sub_cmds = rects.len() as u32;
            let header = align(
                DISPATCH_CMD_BYTES + PACKED_LARGE_SUB_CMD_BYTES * sub_cmds,
                ALIGN,
            );
            let data = align(sub_cmds * align(span, ALIGN), ALIGN);
            align(PREFETCH_CMD_BYTES + header + data, PCIE_ALIGN)
        })
        .sum()
}
