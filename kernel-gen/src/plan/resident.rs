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
//!
//! The plan is then made again leaving the copies room beside the arena's reserve
//! ([`super::plan`]), and its decisions may differ from the first plan's: with the larger
//! reserve, dropping a conv's second stream stage may no longer make room for the arena, so the
//! conv keeps both stages and its shifted views, and its step outgrows what the choice took
//! (SuperPoint at 640×512 on 12×10 with 1468 KiB of L1: conv3b, after which the arena leaves
//! conv1b's output in DRAM). So [`check`] holds the second plan to the choice: every chosen conv
//! keeps its copy (still unsliced, unfused and alone in its step), and the arena's estimate (the
//! most the second plan's steps have alive at once), the copies and its largest step's CBs fit
//! the usable L1. Where either fails, the plan is the first, without copies: the simplest sound
//! rule (dropping only the convs at fault would take a third plan, to be checked in turn).

use std::collections::BTreeSet;

use super::conv::{BIAS_CB_NAME, WEIGHTS_CB_NAME};
use super::{cbs_l1_bytes, largest_cbs_l1_bytes, BufferPlan, NodePlan, OpPlan, Plan};

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

/// How a plan made again with resident copies breaks what [`choose`] took on the first plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lapse {
    /// Conv `node` was chosen but does not keep its weights in L1 copies (its step is sliced,
    /// fused or gone).
    NotResident { node: String },
    /// The arena's estimate, the copies and the largest step's CBs take `needed` bytes of the
    /// `usable`: an activation the first plan left room for in the arena would spill to DRAM.
    Overflow { needed: u64, usable: u64 },
}

/// Checks `second`, planned with the convs `chosen` keeping their weights in L1 and the most its
/// steps have alive at once `reserve` (the arena's estimate), against what [`choose`] took on the
/// first plan: every chosen conv keeps its weights in L1 copies, and the arena's estimate, the
/// copies and the largest step's CBs fit the usable L1.
pub fn check(second: &Plan, chosen: &BTreeSet<String>, reserve: u32) -> Result<(), Lapse> {
    let keeps = |name: &str| {
        second
            .nodes
            .iter()
            .any(|n| n.name == name && matches!(&n.op, OpPlan::Conv2d(c) if c.weights_in_l1))
    };
    if let Some(node) = chosen.iter().find(|n| !keeps(n)) {
        return Err(Lapse::NotResident { node: node.clone() });
    }
    let align = second.limits.l1_alignment;
    let largest = largest_cbs_l1_bytes(second.nodes.iter().map(|n| n.cbs.as_slice()), align);
    let needed = u64::from(reserve) + u64::from(l1_bytes(&second.buffers, align)) + largest;
    let usable = u64::from(second.limits.l1_usable());
    if needed > usable {
        return Err(Lapse::Overflow { needed, usable });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Grid, Limits};
    use crate::plan::{plan, plan_with, with_copies, PlanParams};
    use crate::variants::main_program;
    use superpoint_graph::Graph;

    /// The shipped SuperPoint program at `width`×`height` on 12×10, with `l1_size` bytes of L1.
    fn program(width: u32, height: u32, l1_size: u32) -> (Graph, PlanParams) {
        let variant = main_program(width, height, None, Grid::ETH_DISPATCH);
        let params = PlanParams {
            limits: Limits {
                l1_size,
                ..variant.params.limits
            },
            ..variant.params
        };
        (variant.graph, params)
    }

    /// The first plan, the convs chosen on it, and the plan made again with their copies and
    /// the most its steps have alive at once, as [`crate::plan::plan`] makes them.
    fn passes(graph: &Graph, params: &PlanParams) -> (Plan, BTreeSet<String>, Plan, u32) {
        let (first, reserve) =
            plan_with(graph, params, &BTreeSet::new(), &Default::default(), None).expect("plans");
        let chosen = choose(&first, reserve);
        let (second, steps_reserve, _) =
            with_copies(graph, params, &first, &chosen, reserve).expect("plans");
        (first, chosen, second, steps_reserve)
    }

    /// SuperPoint at 768×480 on 12×10 with 1558 KiB of L1: the first plan leaves room for a
    /// copy, but in the plan made with it a step outgrows what the choice took, so that the
    /// arena, packed on that plan ([`crate::arena`]), leaves in DRAM an activation the first
    /// plan's arena holds. The check finds it and the plan is the first, without copies.
    #[test]
    fn a_second_plan_that_spills_the_arena_gives_way_to_the_first() {
        let (graph, params) = program(768, 480, 1558 * 1024);
        let (first, chosen, second, steps_reserve) = passes(&graph, &params);
        assert!(!chosen.is_empty());
        let arena = |p: &Plan| crate::lower::lower(p).expect("lowers").arena;
        let (kept, with) = (arena(&first), arena(&second));
        assert!(kept.offsets.keys().any(|b| !with.holds(b)));
        assert!(matches!(
            check(&second, &chosen, steps_reserve),
            Err(Lapse::Overflow { .. })
        ));
        let planned = plan(&graph, &params).expect("plans");
        assert!(planned.buffers.iter().all(|b| !b.resident));
        assert_eq!(planned, first);
    }

    /// The shipped 640×480 plan on 12×10 keeps its copies; made by hand with a chosen conv that
    /// no longer keeps its weights in L1 (sliced, as the planner would make it), or with one
    /// more byte than fits, it breaks the choice. The fit counted by hand: the resident buffers'
    /// bytes and the largest step's CBs outside them (whole 2 KiB tiles and 16-byte pages, no
    /// alignment padding).
    #[test]
    fn the_check_finds_a_lost_copy_and_an_overflow() {
        let (graph, params) = program(640, 480, Limits::BLACKHOLE.l1_size);
        let (_, chosen, second, steps_reserve) = passes(&graph, &params);
        assert!(chosen.contains("conv1b"));
        assert_eq!(check(&second, &chosen, steps_reserve), Ok(()));

        let mut sliced = second.clone();
        for node in sliced.nodes.iter_mut().filter(|n| n.name == "conv1b") {
            if let OpPlan::Conv2d(c) = &mut node.op {
                c.slices = 2;
                c.weights_in_l1 = c.may_keep_weights_in_l1();
            }
        }
        assert_eq!(
            check(&sliced, &chosen, steps_reserve),
            Err(Lapse::NotResident {
                node: "conv1b".to_string()
            })
        );

        let copies: u64 = second
            .buffers
            .iter()
            .filter(|b| b.resident)
            .map(|b| u64::from(b.pages * b.page_bytes))
            .sum();
        let largest: u64 = second
            .nodes
            .iter()
            .map(|n| {
                n.cbs
                    .iter()
                    .filter(|c| c.buffer.is_none())
                    .map(|c| u64::from(c.pages * c.page_bytes))
                    .sum()
            })
            .max()
            .expect("steps");
        let usable = u64::from(second.limits.l1_usable());
        let full = u32::try_from(usable - copies - largest).expect("fits u32");
        assert_eq!(check(&second, &chosen, full), Ok(()));
        assert_eq!(
            check(&second, &chosen, full + 1),
            Err(Lapse::Overflow {
                needed: usable + 1,
                usable
            })
        );
    }
}
