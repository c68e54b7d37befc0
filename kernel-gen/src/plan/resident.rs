//! Which convs keep their weights and bias in L1 from load on ([`super::ConvPlan::weights_in_l1`]):
//! a copy in every core, written once by the host, which the conv's resident CBs live in
//! (tt-metal's globally allocated CBs), instead of every frame reading them from DRAM on a few
//! senders and multicasting them before the first block can start (the weights' start-up, 4–8 µs
//! a conv by the v2 model on 12×10).
//!
//! The copies stay for the whole program, beside the activation arena, below which every step's
//! CBs must still fit. So the choice is made on a plan without them: the unsliced convs that are
//! alone in their step and do not read the frame are candidates, smallest weights first (each
//! saves about one start-up whatever its size), taken while the arena's reserve, the copies and
//! the largest step's CBs (a step's own weights no longer among them) fit the usable L1.

use std::collections::BTreeSet;

use super::conv::{BIAS_CB_NAME, WEIGHTS_CB_NAME};
use super::{cbs_l1_bytes, BufferPlan, NodePlan, OpPlan, Plan};

/// The bytes of every core's copy of `buffer`, aligned as the allocator places it.
pub fn copy_bytes(buffer: &BufferPlan, alignment: u32) -> u32 {
    (buffer.pages * buffer.page_bytes).div_ceil(alignment) * alignment
}

/// The L1 bytes per core of `buffers`' resident copies.
pub fn l1_bytes(buffers: &[BufferPlan], alignment: u32) -> u32 {
    buffers
        .iter()
        .filter(|b| b.resident)
        .map(|b| copy_bytes(b, alignment))
        .sum()
}

/// The weight and bias buffers of a candidate conv node, `None` for any other node.
fn candidate(node: &NodePlan) -> Option<[&str; 2]> {
    match &node.op {
        OpPlan::Conv2d(c) if c.may_keep_weights_in_l1() => {
            Some([c.weights.as_str(), c.bias.as_str()])
        }
        _ => None,
    }
}

/// The CB bytes of `node` with its weights in L1 copies when `resident` names it.
fn step_cbs(node: &NodePlan, resident: &BTreeSet<String>, alignment: u32) -> u64 {
    let own = candidate(node).is_some() && resident.contains(&node.name);
    let cbs: Vec<_> = node
        .cbs
        .iter()
        .filter(|c| !own || (c.name != WEIGHTS_CB_NAME && c.name != BIAS_CB_NAME))
        .cloned()
        .collect();
    cbs_l1_bytes(&cbs, alignment)
}

/// The conv nodes of `first` (planned without resident weights, leaving the arena `reserve`
/// bytes) whose weights and bias stay in L1, by name.
pub fn choose(first: &Plan, reserve: u32) -> BTreeSet<String> {
    let align = first.limits.l1_alignment;
    let usable = u64::from(first.limits.l1_usable());
    let buffer = |name: &str| first.buffers.iter().find(|b| b.name == name);
    let mut candidates: Vec<(u32, &NodePlan)> = first
        .nodes
        .iter()
        .filter_map(|n| {
            let [weights, bias] = candidate(n)?;
            let bytes = copy_bytes(buffer(weights)?, align) + copy_bytes(buffer(bias)?, align);
            Some((bytes, n))
        })
        .collect();
    candidates.sort_by_key(|(bytes, _)| *bytes);
    let mut chosen = BTreeSet::new();
    let mut copies = 0u64;
    for (bytes, node) in candidates {
        let mut with = chosen.clone();
        with.insert(node.name.clone());
        let largest = first
            .nodes
            .iter()
            .map(|n| step_cbs(n, &with, align))
            .max()
            .unwrap_or(0);
        if u64::from(reserve) + copies + u64::from(bytes) + largest <= usable {
            copies += u64::from(bytes);
            chosen = with;
        }
    }
    chosen
}
