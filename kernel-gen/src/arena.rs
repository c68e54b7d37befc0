//! The L1 arena: which activation buffers live in L1 instead of DRAM, and where.
//!
//! A buffer in the arena is L1-interleaved, as tt-metal lays out a `BufferType::L1` buffer:
//! page `p` in the L1 bank `p % banks` (one bank per worker core of the grid) at
//! `arena + offset + (p / banks) · page` (pages aligned to the L1 alignment), so the kernels read
//! and write it through `InterleavedAddrGen<false>` exactly as they do DRAM pages with `<true>`:
//! the same code, NoC transfers between cores instead of DRAM round trips. Each kernel gets a
//! compile-time arg `<name>_dram` (1 for DRAM, 0 for L1) for every `<name>_addr` runtime arg that
//! names an activation buffer, which its address generator takes as its template argument.
//!
//! The arena is one region at the top of every core's L1 (the runtime allocates L1 buffers top
//! down), so it must stay clear of the CBs of every step: its size is at most the usable L1
//! minus the largest step's CBs and the resident weights' copies (`plan::resident`), which the
//! runtime places below it. Inside it, buffers are packed by lifetime (the steps from the
//! first to the last that names the buffer): the largest first, each at the lowest offset that
//! no buffer alive at the same time overlaps; a buffer that does not fit stays in DRAM. Only
//! buffers a program writes and reads itself move: graph outputs, the host's input, weights and
//! the outputs the host or a program without this arena reads (`PlanParams::keep_in_dram`) stay
//! in DRAM. The buffers one address arg names on different cores (a fused conv step's outputs,
//! `plan::conv::FusedConv`) move together or not at all, since the arg's `<name>_dram` is one
//! for all cores. An L1 buffer holds its tensor only during its lifetime: later buffers reuse its
//! bytes. The outputs a later program reads from the same arena (`PlanParams::outlive`: the NMS
//! variants read the main program's score map and dense descriptors) live until the program
//! ends, and stay intact until the next program that packs its own buffers runs; that later
//! program names them as external inputs at the same offsets (`PlanParams::external_l1`), and
//! its kernels address them as L1 pages.
//!
//! Staged weights (`plan::staged`, [`BufferPlan::staged_by`]) are placed after every
//! activation, so they take only space no activation takes: a whole copy of the buffer (not a
//! bank's pages) at one offset, alive from its stager's step to its conv's; one that does not
//! fit stays out of the arena (the plan then gives way, `plan::staged::check`).

use std::collections::{BTreeMap, BTreeSet};

use crate::kir::{Arena, Arg, CompileArg, Kir, KirError};
use crate::plan::arena_room::bank_bytes;
use crate::plan::{largest_cbs_l1_bytes, resident, BufferPlan, Content, OpPlan, Plan};

/// Whether a buffer holds an activation-like tensor (read and written by kernels through an
/// interleaved address generator), as opposed to weights and filters.
fn is_tensor(content: &Content) -> bool {
    matches!(
        content,
        Content::Input { .. }
            | Content::Output { .. }
            | Content::External { .. }
            | Content::Scratch { .. }
    )
}

/// Whether buffer `b` may move to L1: a node's output unless that node's outputs stay in DRAM,
/// or a node's scratch (never read outside its node's programs).
fn movable(b: &BufferPlan, keep_in_dram: &BTreeSet<String>) -> bool {
    matches!(b.content, Content::Scratch { .. })
        || b.output_of().is_some_and(|n| !keep_in_dram.contains(n))
}

/// The first and last step (launch order) whose kernels name each buffer.
pub(crate) fn lifetimes(kir: &Kir) -> BTreeMap<String, (usize, usize)> {
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (step, node) in kir.nodes.iter().enumerate() {
        let args = node
            .kernels
            .iter()
            .flat_map(|k| &k.runtime_args)
            .flat_map(|c| &c.args);
        for arg in args {
            if let Arg::BufferAddress(name) = arg {
                let life = out.entry(name.clone()).or_insert((step, step));
                life.0 = life.0.min(step);
                life.1 = life.1.max(step);
            }
        }
    }
    out
}

/// The sets of tensor buffers (`tensors`) one address arg of a kernel names on different cores
/// (a fused conv's slices write their own outputs, `plan::conv::FusedConv`), merged where they
/// meet: each set's buffers are all placed in the arena or none, as the arg's `<name>_dram`
/// compile-time arg is one for every core.
fn linked(kir: &Kir, tensors: &BTreeSet<&str>) -> Vec<BTreeSet<String>> {
    let mut sets: Vec<BTreeSet<String>> = Vec::new();
    for kernel in kir.nodes.iter().flat_map(|n| &n.kernels) {
        let mut named: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for core in &kernel.runtime_args {
            for (i, arg) in core.args.iter().enumerate() {
                if let Arg::BufferAddress(name) = arg {
                    if tensors.contains(name.as_str()) {
                        named.entry(i).or_default().insert(name.clone());
                    }
                }
            }
        }
        for mut set in named.into_values().filter(|s| s.len() > 1) {
            sets.retain(|other| {
                let meets = !other.is_disjoint(&set);
                if meets {
                    set.extend(other.iter().cloned());
                }
                !meets
            });
            sets.push(set);
        }
    }
    sets
}

/// The lowest offset where `size` bytes overlap none of `taken` (offset, size), within `budget`.
fn first_fit(taken: &mut [(u32, u32)], size: u32, budget: u32) -> Option<u32> {
    taken.sort_unstable();
    let mut at = 0u32;
    for &(offset, len) in taken.iter() {
        if at.checked_add(size)? <= offset {
            break;
        }
        at = at.max(offset.saturating_add(len));
    }
    (at.checked_add(size)? <= budget).then_some(at)
}

/// Packs the movable buffers of `plan` into the arena (none unless [`Plan::l1_activations`]),
/// records it in `kir.arena`, and gives every kernel its `<name>_dram` compile-time args.
pub fn place(kir: &mut Kir, plan: &Plan) -> Result<(), KirError> {
    let buffers = &plan.buffers;
    let banks = plan.grid.cores();
    let align = plan.limits.l1_alignment;
    let largest_cbs = largest_cbs_l1_bytes(kir.nodes.iter().map(|n| n.cbs.as_slice()), align);
    kir.arena.resident = resident::l1_bytes(buffers, align);
    let budget = u32::try_from(
        u64::from(plan.limits.l1_usable())
            .saturating_sub(largest_cbs)
            .saturating_sub(u64::from(kir.arena.resident)),
    )
    .unwrap_or(0);
    let last = kir.nodes.len().saturating_sub(1);
    let mut lives = lifetimes(kir);
    for b in buffers {
        if b.output_of().is_some_and(|n| plan.outlive.contains(n)) {
            if let Some(life) = lives.get_mut(&b.name) {
                life.1 = last;
            }
        }
    }
    let mut candidates: Vec<(&BufferPlan, u32, (usize, usize))> = buffers
        .iter()
        .filter(|_| plan.l1_activations)
        .filter(|b| movable(b, &plan.keep_in_dram))
        .filter_map(|b| {
            lives
                .get(&b.name)
                .map(|&l| (b, bank_bytes(b.pages, b.page_bytes, banks, align), l))
        })
        .collect();
    candidates.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.name.cmp(&b.0.name)));
    let tensors: BTreeSet<&str> = buffers
        .iter()
        .filter(|b| is_tensor(&b.content))
        .map(|b| b.name.as_str())
        .collect();
    let linked = linked(kir, &tensors);
    let mut placed: Vec<(u32, u32, (usize, usize))> = Vec::new();
    let mut arena = Arena::default();
    // An earlier program's buffers this one reads in place: taken for the whole program.
    for (name, &offset) in &plan.external_l1 {
        let buffer = buffers
            .iter()
            .find(|b| &b.name == name && matches!(b.content, Content::External { .. }))
            .ok_or_else(|| KirError::NotExternal {
                buffer: name.clone(),
            })?;
        let size = bank_bytes(buffer.pages, buffer.page_bytes, banks, align);
        placed.push((offset, size, (0, last)));
        arena.offsets.insert(name.clone(), offset);
        arena.bytes = arena.bytes.max(offset.saturating_add(size));
    }
    // Each buffer in turn, or its linked set when the first of them comes up: all of the set
    // placed, or none.
    let mut tried: BTreeSet<&str> = BTreeSet::new();
    for &(buffer, _, _) in &candidates {
        if tried.contains(buffer.name.as_str()) {
            continue;
        }
        let set = linked.iter().find(|s| s.contains(&buffer.name));
        let members: Vec<&(&BufferPlan, u32, (usize, usize))> = candidates
            .iter()
            .filter(|c| set.map_or(c.0.name == buffer.name, |s| s.contains(&c.0.name)))
            .collect();
        tried.extend(members.iter().map(|c| c.0.name.as_str()));
        if set.is_some_and(|s| s.len() != members.len()) {
            // A buffer of the set stays in DRAM: so do the others.
            continue;
        }
        let mut trial = placed.clone();
        let mut offsets = Vec::new();
        for &&(b, size, life) in &members {
            let mut taken: Vec<(u32, u32)> = trial
                .iter()
                .filter(|(_, _, l)| l.0 <= life.1 && life.0 <= l.1)
                .map(|&(o, s, _)| (o, s))
                .collect();
            let Some(offset) = first_fit(&mut taken, size, budget) else {
                break;
            };
            trial.push((offset, size, life));
            offsets.push((b.name.clone(), offset + size, offset));
        }
        if offsets.len() == members.len() {
            placed = trial;
            for (name, end, offset) in offsets {
                arena.offsets.insert(name, offset);
                arena.bytes = arena.bytes.max(end);
            }
        }
    }
    for (name, offset, size) in staged_slots(kir, plan, &placed, budget) {
        arena.bytes = arena.bytes.max(offset + size);
        arena.offsets.insert(name, offset);
    }
    for node in &mut kir.nodes {
        for kernel in &mut node.kernels {
            let mut named: BTreeMap<usize, &str> = BTreeMap::new();
            let mut mixed = None;
            for core in &kernel.runtime_args {
                for (i, arg) in core.args.iter().enumerate() {
                    let Arg::BufferAddress(name) = arg else {
                        continue;
                    };
                    if !tensors.contains(name.as_str()) {
                        continue;
                    }
                    let first = *named.entry(i).or_insert(name);
                    if first != name && arena.holds(first) != arena.holds(name) {
                        mixed = Some((i, first.to_string(), name.clone()));
                    }
                }
            }
            if let Some((i, first, other)) = mixed {
                return Err(KirError::MixedBuffers {
                    node: node.node.clone(),
                    kernel: kernel.role.name().to_string(),
                    arg: kernel.runtime_arg_names.get(i).cloned().unwrap_or_default(),
                    first,
                    other,
                });
            }
            for (i, name) in named {
                let Some(stem) = kernel
                    .runtime_arg_names
                    .get(i)
                    .and_then(|a| a.strip_suffix("_addr"))
                else {
                    continue;
                };
                kernel.compile_args.push(CompileArg {
                    name: format!("{stem}_dram"),
                    value: u32::from(!arena.holds(name)),
                });
            }
        }
    }
    kir.arena = arena;
    Ok(())
}

/// The steps from the stager of staged buffer `name` to the conv whose weights or bias it holds.
pub(crate) fn staged_life(kir: &Kir, plan: &Plan, name: &str) -> Option<(usize, usize)> {
    let buffer = plan.buffers.iter().find(|b| b.name == name)?;
    let step = |node: &str| kir.nodes.iter().position(|n| n.node == node);
    let conv = plan
        .nodes
        .iter()
        .find(|n| matches!(&n.op, OpPlan::Conv2d(c) if c.weights == name || c.bias == name))?;
    Some((step(buffer.staged_by.as_deref()?)?, step(&conv.name)?))
}

/// The staged buffers of `plan` that fit within `budget` beside the `placed` buffers (offset,
/// size, lifetime), each at the lowest offset no buffer alive with it overlaps: (name, offset,
/// size), in the plan's buffer order. None without L1 activations.
fn staged_slots(
    kir: &Kir,
    plan: &Plan,
    placed: &[(u32, u32, (usize, usize))],
    budget: u32,
) -> Vec<(String, u32, u32)> {
    let align = plan.limits.l1_alignment;
    let mut placed = placed.to_vec();
    let mut slots = Vec::new();
    for b in plan
        .buffers
        .iter()
        .filter(|b| plan.l1_activations && b.staged_by.is_some())
    {
        let Some(life) = staged_life(kir, plan, &b.name) else {
            continue;
        };
        let size = resident::copy_bytes(b, align);
        let mut taken: Vec<(u32, u32)> = placed
            .iter()
            .filter(|(_, _, l)| l.0 <= life.1 && life.0 <= l.1)
            .map(|&(o, s, _)| (o, s))
            .collect();
        if let Some(offset) = first_fit(&mut taken, size, budget) {
            placed.push((offset, size, life));
            slots.push((b.name.clone(), offset, size));
        }
    }
    slots
}

#[cfg(test)]
mod tests {
    use super::first_fit;

    #[test]
    fn first_fit_takes_the_lowest_gap_that_fits() {
        assert_eq!(first_fit(&mut [], 64, 128), Some(0));
        assert_eq!(first_fit(&mut [(0, 32), (96, 32)], 64, 256), Some(32));
        assert_eq!(first_fit(&mut [(96, 32), (0, 32)], 80, 256), Some(128));
        assert_eq!(first_fit(&mut [(0, 32)], 128, 128), None);
    }
}
