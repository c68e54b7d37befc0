//! The L1 the activation arena ([`crate::arena`]) will take, for the planner to leave it room
//! where a node can choose (a conv's stream depth, shifted views): the bytes one L1 bank holds of
//! a buffer, and the most any node has alive at once.

use std::collections::{BTreeMap, BTreeSet};

use crate::layout::DeviceTensor;

/// Bytes one bank holds of an L1-interleaved buffer of `pages` pages of `page_bytes`.
pub fn bank_bytes(pages: u32, page_bytes: u32, banks: u32, alignment: u32) -> u32 {
    pages.div_ceil(banks) * page_bytes.div_ceil(alignment) * alignment
}

/// The L1 the arena will need at least (per core), for the planner to leave it room: the most
/// any one node has alive at once in buffers that may move to L1 (its inputs and its output),
/// from the nodes' output layouts in launch order, `None` for a node without a layout.
pub fn reserve<'a>(
    nodes: impl Iterator<Item = (&'a str, &'a [String], Option<DeviceTensor>)>,
    keep_in_dram: &BTreeSet<String>,
    outlive: &BTreeSet<String>,
    banks: u32,
    alignment: u32,
) -> u32 {
    let mut bytes: BTreeMap<&str, u32> = BTreeMap::new();
    // The outputs that stay alive to the program's end, once written.
    let mut kept = 0;
    let mut most = 0;
    for (name, inputs, tensor) in nodes {
        let own = tensor
            .filter(|_| !keep_in_dram.contains(name))
            .map_or(0, |t| {
                t.parts()
                    .into_iter()
                    .map(|(_, pages, page_bytes)| bank_bytes(pages, page_bytes, banks, alignment))
                    .sum()
            });
        bytes.insert(name, own);
        let alive = own
            + kept
            + inputs
                .iter()
                .filter(|i| !outlive.contains(i.as_str()))
                .map(|i| bytes.get(i.as_str()).copied().unwrap_or(0))
                .sum::<u32>();
        most = most.max(alive);
        if outlive.contains(name) {
            kept += own;
        }
    }
    most
}
