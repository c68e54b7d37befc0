//! The checks that run on the kernel IR before anything is rendered (DESIGN §3): L1 per core
//! (above the firmware and the kernel-config region), the kernel-config region, the dispatch
//! command's size, DST capacity, CB protocol, runtime-arg count, CB ids, NoC alignment (DRAM
//! transfers and L1 → L1 row copies), semaphore count and ids, and multicasts that reach every
//! other core of the node.
//! Each failure names the node and the numbers.

use std::collections::BTreeMap;

use thiserror::Error;

use crate::device::{Core, Grid, Limits};
use crate::dispatch::{config_command_bytes, kernel_config};
use crate::kir::{walk, Call, Kernel, Kir, NodeKir, OnCore, Role};
use crate::plan::staged::{STAGE_BIAS_CB, STAGE_WEIGHTS_CB};
use crate::plan::{cbs_l1_bytes, CbKind};

/// A rule of the device that a node's program breaks.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CheckError {
    #[error("node `{node}`: CBs, the L1 arena and the resident weights need {used} bytes of L1 per core but {available} are usable ({size} bytes of L1 less the {base} below the base: firmware and the kernel-config region)")]
    L1Overflow {
        node: String,
        used: u64,
        available: u32,
        size: u32,
        base: u32,
    },
    #[error("node `{node}`: runtime args, semaphores and CB configs need {bytes} bytes of the {region}-byte kernel-config region on core ({x},{y}) (runtime args {runtime_args}, semaphores {semaphores}, CB configs {cbs}), and the kernel binaries share it", x = core.x, y = core.y)]
    KernelConfigOverflow {
        node: String,
        core: Core,
        bytes: u32,
        runtime_args: u32,
        semaphores: u32,
        cbs: u32,
        region: u32,
    },
    #[error("node `{node}`: its semaphore and CB configuration is a {bytes}-byte dispatch command, over the {limit}-byte prefetch entry of {dispatch} dispatch, which the pinned tt-metal does not split (tt-metal PR #53988); use fewer CB ids, semaphores or core rectangles, or dispatch from Tensix cores")]
    DispatchCommandTooLarge {
        node: String,
        bytes: u32,
        limit: u32,
        dispatch: &'static str,
    },
    #[error("node `{node}`: a DST block of the {role:?} kernel uses {tiles} tiles but one half-sync acquire holds {capacity} ({format} DST)")]
    DstOverflow {
        node: String,
        role: Role,
        tiles: u32,
        capacity: u32,
        format: &'static str,
    },
    #[error("node `{node}`: CB `{cb}` (id {id}) gets {pushed} pages pushed but {popped} popped on core ({x},{y})", x = core.x, y = core.y)]
    CbUnbalanced {
        node: String,
        cb: String,
        id: u32,
        core: Core,
        pushed: u64,
        popped: u64,
    },
    #[error("node `{node}`: the {role:?} kernel moves {pages} pages at a time on CB `{cb}` whose capacity of {capacity} pages they do not divide")]
    CbPagesDoNotDivide {
        node: String,
        role: Role,
        cb: String,
        pages: u32,
        capacity: u32,
    },
    #[error("node `{node}`: the {role:?} kernel pushes {pushed} pages on CB `{cb}` but reserved {reserved} on core ({x},{y})", x = core.x, y = core.y)]
    PushWithoutReserve {
        node: String,
        role: Role,
        cb: String,
        core: Core,
        pushed: u64,
        reserved: u64,
    },
    #[error(
        "node `{node}`: the {role:?} kernel uses CB id {id}, which the node does not configure"
    )]
    UnknownCb { node: String, role: Role, id: u32 },
    #[error("node `{node}`: CB `{cb}` has id {id}; ids must be below {max}")]
    CbIdOutOfRange {
        node: String,
        cb: String,
        id: u32,
        max: u32,
    },
    #[error("node `{node}`: the {role:?} kernel has {count} runtime args on core ({x},{y}); at most {max} are allowed", x = core.x, y = core.y)]
    TooManyRuntimeArgs {
        node: String,
        role: Role,
        core: Core,
        count: usize,
        max: u32,
    },
    #[error("node `{node}`: the {role:?} kernel names {names} runtime args but core ({x},{y}) gets {count}", x = core.x, y = core.y)]
    RuntimeArgCount {
        node: String,
        role: Role,
        core: Core,
        names: usize,
        count: usize,
    },
    #[error("node `{node}`: the {role:?} kernel's {transfer} of {bytes} bytes is not a multiple of the {alignment}-byte NoC alignment")]
    Misaligned {
        node: String,
        role: Role,
        transfer: &'static str,
        bytes: u32,
        alignment: u32,
    },
    #[error("node `{node}`: {count} semaphores per core; at most {max} exist")]
    TooManySemaphores { node: String, count: u32, max: u32 },
    #[error(
        "node `{node}`: the {role:?} kernel uses semaphore {sem} but the node configures {count}"
    )]
    UnknownSemaphore {
        node: String,
        role: Role,
        sem: u32,
        count: u32,
    },
    #[error("node `{node}`: the {role:?} kernel's {transfer} reaches {dests} cores but the node has {receivers} besides its sender")]
    MulticastDests {
        node: String,
        role: Role,
        transfer: &'static str,
        dests: u32,
        receivers: u32,
    },
}

fn l1(node: &NodeKir, arena: u32, limits: &Limits) -> Result<(), CheckError> {
    let used = cbs_l1_bytes(&node.cbs, limits.l1_alignment) + u64::from(arena);
    if used > u64::from(limits.l1_usable()) {
        return Err(CheckError::L1Overflow {
            node: node.node.clone(),
            used,
            available: limits.l1_usable(),
            size: limits.l1_size,
            base: limits.l1_base,
        });
    }
    Ok(())
}

fn kernel_config_region(node: &NodeKir, limits: &Limits) -> Result<(), CheckError> {
    let config = kernel_config(node);
    if config.bytes() > limits.kernel_config_bytes {
        return Err(CheckError::KernelConfigOverflow {
            node: node.node.clone(),
            core: config.core,
            bytes: config.bytes(),
            runtime_args: config.runtime_args,
            semaphores: config.semaphores,
            cbs: config.cbs,
            region: limits.kernel_config_bytes,
        });
    }
    Ok(())
}

fn dispatch_command(node: &NodeKir, grid: Grid) -> Result<(), CheckError> {
    let bytes = config_command_bytes(node);
    let limit = grid.max_prefetch_command_bytes();
    if bytes > limit {
        return Err(CheckError::DispatchCommandTooLarge {
            node: node.node.clone(),
            bytes,
            limit,
            dispatch: if grid.eth_dispatch() {
                "Ethernet"
            } else {
                "Tensix"
            },
        });
    }
    Ok(())
}

fn cb_ids(node: &NodeKir, limits: &Limits) -> Result<(), CheckError> {
    for cb in &node.cbs {
        if cb.id >= limits.max_cbs {
            return Err(CheckError::CbIdOutOfRange {
                node: node.node.clone(),
                cb: cb.name.clone(),
                id: cb.id,
                max: limits.max_cbs,
            });
        }
    }
    Ok(())
}

fn semaphores(node: &NodeKir, limits: &Limits) -> Result<(), CheckError> {
    if node.semaphores > limits.max_semaphores {
        return Err(CheckError::TooManySemaphores {
            node: node.node.clone(),
            count: node.semaphores,
            max: limits.max_semaphores,
        });
    }
    Ok(())
}

fn runtime_args(node: &NodeKir, kernel: &Kernel, limits: &Limits) -> Result<(), CheckError> {
    for core in &kernel.runtime_args {
        if core.args.len() > limits.max_runtime_args as usize {
            return Err(CheckError::TooManyRuntimeArgs {
                node: node.node.clone(),
                role: kernel.role,
                core: core.core,
                count: core.args.len(),
                max: limits.max_runtime_args,
            });
        }
        if core.args.len() != kernel.runtime_arg_names.len() {
            return Err(CheckError::RuntimeArgCount {
                node: node.node.clone(),
                role: kernel.role,
                core: core.core,
                names: kernel.runtime_arg_names.len(),
                count: core.args.len(),
            });
        }
    }
    Ok(())
}

/// DST capacity, NoC alignment, and CB page counts that must divide the capacity.
fn calls(node: &NodeKir, kernel: &Kernel, limits: &Limits) -> Result<(), CheckError> {
    let mut error = None;
    let mut f = |call: &Call, _: u64| {
        if error.is_some() {
            return;
        }
        error = call_rule(node, kernel, limits, call).err();
    };
    let every_call = OnCore {
        blocks: 1,
        units: 1,
        counted: 1,
        sender: true,
        other_senders: 1,
        stager: true,
        first_sender: false,
    };
    walk(&kernel.body, every_call, 1, &mut f);
    error.map_or(Ok(()), Err)
}

fn call_rule(
    node: &NodeKir,
    kernel: &Kernel,
    limits: &Limits,
    call: &Call,
) -> Result<(), CheckError> {
    let misaligned = |transfer: &'static str, bytes: u32, alignment: u32| CheckError::Misaligned {
        node: node.node.clone(),
        role: kernel.role,
        transfer,
        bytes,
        alignment,
    };
    // Every multicast group has as many cores (crate::multicast); a stager's multicasts into
    // the slots of a later conv's weights reach every core of its step (plan::staged).
    let groups = node.senders.len().max(1) as u32;
    let group_receivers = (node.blocks.len() as u32 / groups).saturating_sub(1);
    let multicast_dests = |transfer: &'static str, dests: u32, cb: Option<u32>| {
        let staging = cb.is_some_and(|cb| [STAGE_WEIGHTS_CB.0, STAGE_BIAS_CB.0].contains(&cb));
        let receivers = if staging {
            (node.blocks.len() as u32).saturating_sub(1)
        } else {
            group_receivers
        };
        if dests == receivers {
            Ok(())
        } else {
            Err(CheckError::MulticastDests {
                node: node.node.clone(),
                role: kernel.role,
                transfer,
                dests,
                receivers,
            })
        }
    };
    match call {
        Call::SemSet { sem, .. }
        | Call::SemWait { sem, .. }
        | Call::SemInc { sem }
        | Call::SemMcast { sem, .. }
            if *sem >= node.semaphores =>
        {
            return Err(CheckError::UnknownSemaphore {
                node: node.node.clone(),
                role: kernel.role,
                sem: *sem,
                count: node.semaphores,
            });
        }
        Call::SemMcast { dests, .. } => multicast_dests("semaphore multicast", *dests, None)?,
        Call::McastWrite {
            cb,
            pages,
            page_bytes,
            dests,
            ..
        } => {
            multicast_dests("multicast write", *dests, Some(*cb))?;
            if (pages * page_bytes) % limits.l1_alignment != 0 {
                return Err(misaligned(
                    "multicast write",
                    pages * page_bytes,
                    limits.l1_alignment,
                ));
            }
            cb_page_alignment(node, kernel, *cb, limits)?;
        }
        Call::Dst { tiles, .. } => {
            let precision = kernel.precision.unwrap_or(crate::device::Precision::PORT);
            if *tiles > precision.dst_tiles() {
                return Err(CheckError::DstOverflow {
                    node: node.node.clone(),
                    role: kernel.role,
                    tiles: *tiles,
                    capacity: precision.dst_tiles(),
                    format: if precision.fp32_dest { "fp32" } else { "bf16" },
                });
            }
        }
        Call::DramRead { page_bytes, cb, .. } => {
            if page_bytes % limits.dram_read_alignment != 0 {
                return Err(misaligned(
                    "DRAM read",
                    *page_bytes,
                    limits.dram_read_alignment,
                ));
            }
            cb_page_alignment(node, kernel, *cb, limits)?;
        }
        Call::DramPart {
            write,
            offset_step,
            cb,
            ..
        } => {
            let (transfer, alignment) = if *write {
                (
                    "DRAM write at page offsets in steps",
                    limits.dram_write_alignment,
                )
            } else {
                (
                    "DRAM read at page offsets in steps",
                    limits.dram_read_alignment,
                )
            };
            if offset_step % alignment != 0 {
                return Err(misaligned(transfer, *offset_step, alignment));
            }
            cb_page_alignment(node, kernel, *cb, limits)?;
        }
        Call::L1Copy {
            from,
            cb,
            row_bytes,
            ..
        } => {
            if row_bytes % limits.l1_alignment != 0 {
                return Err(misaligned("L1 row copy", *row_bytes, limits.l1_alignment));
            }
            cb_page_alignment(node, kernel, *from, limits)?;
            cb_page_alignment(node, kernel, *cb, limits)?;
        }
        Call::DramWrite { page_bytes, cb, .. } => {
            if page_bytes % limits.dram_write_alignment != 0 {
                return Err(misaligned(
                    "DRAM write",
                    *page_bytes,
                    limits.dram_write_alignment,
                ));
            }
            cb_page_alignment(node, kernel, *cb, limits)?;
        }
        Call::CbReserve { cb, pages }
        | Call::CbPush { cb, pages }
        | Call::CbWait { cb, pages }
        | Call::CbPop { cb, pages } => {
            let plan = node
                .cbs
                .iter()
                .find(|c| c.id == *cb)
                .ok_or(CheckError::UnknownCb {
                    node: node.node.clone(),
                    role: kernel.role,
                    id: *cb,
                })?;
            if *pages == 0 || *pages > plan.pages || plan.pages % pages != 0 {
                return Err(CheckError::CbPagesDoNotDivide {
                    node: node.node.clone(),
                    role: kernel.role,
                    cb: plan.name.clone(),
                    pages: *pages,
                    capacity: plan.pages,
                });
            }
        }
        _ => {}
    }
    Ok(())
}

fn cb_page_alignment(
    node: &NodeKir,
    kernel: &Kernel,
    cb: u32,
    limits: &Limits,
) -> Result<(), CheckError> {
    let plan = node
        .cbs
        .iter()
        .find(|c| c.id == cb)
        .ok_or(CheckError::UnknownCb {
            node: node.node.clone(),
            role: kernel.role,
            id: cb,
        })?;
    if plan.page_bytes % limits.l1_alignment != 0 {
        return Err(CheckError::Misaligned {
            node: node.node.clone(),
            role: kernel.role,
            transfer: "L1 CB page",
            bytes: plan.page_bytes,
            alignment: limits.l1_alignment,
        });
    }
    Ok(())
}

#[derive(Default)]
struct Totals {
    reserved: u64,
    pushed: u64,
    popped: u64,
}

/// On every core: pushes match pops for stream and resident CBs, and no kernel pushes more than it reserved.
fn protocol(node: &NodeKir) -> Result<(), CheckError> {
    for (core, on) in node.cores() {
        let mut per_cb: BTreeMap<u32, Totals> = BTreeMap::new();
        for kernel in &node.kernels {
            let mut mine: BTreeMap<u32, Totals> = BTreeMap::new();
            walk(&kernel.body, on, 1, &mut |call, times| match call {
                Call::CbReserve { cb, pages } => {
                    mine.entry(*cb).or_default().reserved += times * u64::from(*pages)
                }
                Call::CbPush { cb, pages } => {
                    mine.entry(*cb).or_default().pushed += times * u64::from(*pages)
                }
                Call::CbPop { cb, pages } => {
                    mine.entry(*cb).or_default().popped += times * u64::from(*pages)
                }
                _ => {}
            });
            for (id, t) in mine {
                let name = node
                    .cbs
                    .iter()
                    .find(|c| c.id == id)
                    .map_or_else(String::new, |c| c.name.clone());
                if t.pushed > t.reserved {
                    return Err(CheckError::PushWithoutReserve {
                        node: node.node.clone(),
                        role: kernel.role,
                        cb: name,
                        core,
                        pushed: t.pushed,
                        reserved: t.reserved,
                    });
                }
                let all = per_cb.entry(id).or_default();
                all.pushed += t.pushed;
                all.popped += t.popped;
            }
        }
        for cb in &node.cbs {
            let t = per_cb.remove(&cb.id).unwrap_or_default();
            if cb.kind != CbKind::Scratch && t.pushed != t.popped {
                return Err(CheckError::CbUnbalanced {
                    node: node.node.clone(),
                    cb: cb.name.clone(),
                    id: cb.id,
                    core,
                    pushed: t.pushed,
                    popped: t.popped,
                });
            }
        }
    }
    Ok(())
}

/// Runs every check on every node of a program for `grid`.
pub fn check(kir: &Kir, limits: &Limits, grid: Grid) -> Result<(), CheckError> {
    for node in &kir.nodes {
        cb_ids(node, limits)?;
        l1(node, kir.arena.bytes + kir.arena.resident, limits)?;
        kernel_config_region(node, limits)?;
        dispatch_command(node, grid)?;
        semaphores(node, limits)?;
        for kernel in &node.kernels {
            runtime_args(node, kernel, limits)?;
            calls(node, kernel, limits)?;
        }
        protocol(node)?;
    }
    Ok(())
}
