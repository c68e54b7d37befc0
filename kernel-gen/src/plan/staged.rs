//! Weights staged in the L1 arena's dead space (issue 18): a conv that could keep its weights
//! and bias in L1 ([`super::ConvPlan::may_keep_weights_in_l1`]) but has no resident copy
//! ([`super::resident`]: no room beside the arena) takes them from arena slots that an earlier
//! step, its stager, fills: the stager's writers on a few cores read them from DRAM and
//! multicast them into the same slot on every core (`ops::stage`, `conv2d/stage.cpp.tera`),
//! and the conv's CBs live in the slots ([`super::CbPlan::buffer`]) as in resident copies, with
//! no senders or semaphores (the program boundary orders the stager's writes before the conv's
//! reads).
//!
//! The rule, kept simple:
//! * The candidates are the convs that may keep their weights in L1 and do not, in step order.
//! * A candidate's stager is the closest earlier step that is a conv step on every core of the
//!   grid (one rectangle, which the staging multicasts to), not reading the frame and computing
//!   no fused convs ([`stager`]): the add-on lives in the conv writers, and the frame conv's and
//!   fused steps' writers are the busiest. A stager stages one conv; a candidate with none is
//!   not staged.
//! * Each staged buffer ([`super::BufferPlan::staged_by`]) takes a whole copy (its bytes aligned,
//!   as [`super::resident::copy_bytes`]) at one arena offset on every core, alive from the
//!   stager's step to the conv's, placed after every activation ([`crate::arena`]), so it only
//!   takes space no activation takes then. The stager has a CB in each slot
//!   ([`STAGE_WEIGHTS_CB`], [`STAGE_BIAS_CB`]: the consumer's CB with another id and name, which
//!   gives its kernels the slot's address) that no kernel reserves or pushes.
//! * The plan made with the staged convs in L1 (`crate::staging::plan`, which needs the arena's
//!   placement) stands only where `crate::staging::check` finds every staged buffer in the
//!   arena and every activation the plan without staging keeps in L1 still there; else that
//!   plan stands, without staging.

use super::{BufferPlan, CbKind, CbPlan, NodePlan, OpPlan, Plan, PlanError};
use crate::device::Grid;

/// The id and name of the stager's CB in the slot of the staged weights.
pub const STAGE_WEIGHTS_CB: (u32, &str) = (24, "cb_stage_weights");
/// The id and name of the stager's CB in the slot of the staged bias.
pub const STAGE_BIAS_CB: (u32, &str) = (25, "cb_stage_bias");

/// Whether the step of `node` can stage another conv's weights on `grid`: a conv step on every
/// core of the grid (one rectangle) that does not read the frame and computes no fused convs.
fn can_stage(node: &NodePlan, grid: Grid) -> bool {
    let whole_grid = matches!(node.split.ranges.as_slice(), [r] if r.len() == grid.cores())
        && node.split.work.len() as u32 == grid.cores();
    whole_grid && matches!(&node.op, OpPlan::Conv2d(c) if !c.frame_rows && c.fused.is_empty())
}

/// The stager of the step at `index` of `plan`: the closest earlier step that can stage
/// ([`can_stage`]).
pub fn stager(plan: &Plan, index: usize) -> Option<&NodePlan> {
    plan.nodes
        .get(..index)?
        .iter()
        .rev()
        .find(|n| can_stage(n, plan.grid))
}

/// The convs of `plan` whose weights and bias may be staged, in step order: those that may keep
/// them in L1 and do not. None without L1 activations.
pub fn candidates(plan: &Plan) -> Vec<String> {
    if !plan.l1_activations {
        return Vec::new();
    }
    plan.nodes
        .iter()
        .filter(|n| {
            matches!(&n.op, OpPlan::Conv2d(c) if c.may_keep_weights_in_l1() && !c.weights_in_l1)
        })
        .map(|n| n.name.clone())
        .collect()
}

/// Gives each stager among `nodes` a CB in the slot of each buffer of `buffers` it stages: the
/// format of the CB its conv has there, the buffer's DRAM pages (which the stager reads into it
/// as they are), [`STAGE_WEIGHTS_CB`]'s or [`STAGE_BIAS_CB`]'s id and name and no ring use
/// ([`CbKind::Scratch`]). A staged buffer that no conv's CB lives in, or whose stager is not a
/// step of `nodes`, is an error: its slot would be read unfilled, or filled for no one.
pub fn add_stage_cbs(nodes: &mut [NodePlan], buffers: &[BufferPlan]) -> Result<(), PlanError> {
    for b in buffers {
        let Some(stager) = &b.staged_by else { continue };
        let unstageable = |why| PlanError::Unstageable {
            buffer: b.name.clone(),
            why,
        };
        let (cb, weights) = nodes
            .iter()
            .find_map(|n| {
                let OpPlan::Conv2d(c) = &n.op else {
                    return None;
                };
                let cb = n
                    .cbs
                    .iter()
                    .find(|cb| cb.buffer.as_deref() == Some(b.name.as_str()))?;
                Some((cb.clone(), c.weights == b.name))
            })
            .ok_or_else(|| unstageable("no conv's CB lives in its slot"))?;
        let (id, name) = if weights {
            STAGE_WEIGHTS_CB
        } else {
            STAGE_BIAS_CB
        };
        let node = nodes
            .iter_mut()
            .find(|n| &n.name == stager)
            .ok_or_else(|| unstageable("its stager is not a step of the plan"))?;
        node.cbs.push(CbPlan {
            id,
            name: name.to_string(),
            pages: b.pages,
            page_bytes: b.page_bytes,
            kind: CbKind::Scratch,
            ..cb
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::device::Grid;
    use crate::kir::Kir;
    use crate::plan::conv::{BIAS_CB_NAME, WEIGHTS_CB_NAME};
    use crate::plan::{plan, plan_with, Content};
    use crate::staging::{check, Lapse};
    use crate::variants::main_program;

    /// SuperPoint at 640×480 on `grid`: the plan without staging, the staged plan (the shipped
    /// program's) and its lowering.
    fn staged(grid: Grid) -> (Plan, Plan, Kir) {
        let mut variant = main_program(640, 480, None, grid);
        assert!(variant.params.stage_weights);
        let with = crate::staging::plan(&variant.graph, &variant.params).expect("plans");
        variant.params.stage_weights = false;
        let base = plan(&variant.graph, &variant.params).expect("plans");
        assert_eq!(
            crate::staging::plan(&variant.graph, &variant.params).expect("plans"),
            base
        );
        let kir = crate::lower::lower(&with).expect("lowers");
        (base, with, kir)
    }

    /// The convs `plan` stages, with their stagers.
    fn staged_convs(plan: &Plan) -> BTreeMap<String, String> {
        plan.nodes
            .iter()
            .filter_map(|n| match &n.op {
                OpPlan::Conv2d(c) => {
                    let b = plan.buffers.iter().find(|b| b.name == c.weights)?;
                    Some((n.name.clone(), b.staged_by.clone()?))
                }
                _ => None,
            })
            .collect()
    }

    /// Every staged buffer of `plan` sits in the arena of `kir` overlapping no other buffer
    /// alive at any step from its stager's to its conv's (lifetimes recounted from the kernels'
    /// buffer args), as a whole aligned copy; its conv takes its weights from L1 through CBs
    /// living in the staged buffers, which are not resident copies.
    fn assert_slots_sound(plan: &Plan, kir: &Kir) {
        let lives = crate::arena::lifetimes(kir);
        let banks = plan.grid.cores();
        let align = plan.limits.l1_alignment;
        let size = |name: &str| {
            let b = plan
                .buffers
                .iter()
                .find(|b| b.name == name)
                .expect("buffer");
            match b.staged_by {
                Some(_) => crate::plan::resident::copy_bytes(b, align),
                None => crate::plan::arena_room::bank_bytes(b.pages, b.page_bytes, banks, align),
            }
        };
        for b in plan.buffers.iter().filter(|b| b.staged_by.is_some()) {
            assert!(!b.resident, "{}", b.name);
            let life = crate::arena::staged_life(kir, plan, &b.name).expect("life");
            let at = kir.arena.offsets[&b.name];
            let end = at + size(&b.name);
            assert!(end <= kir.arena.bytes);
            for (other, &o) in kir.arena.offsets.iter().filter(|(n, _)| **n != b.name) {
                let other_life = match plan.buffers.iter().find(|x| &x.name == other) {
                    Some(x) if x.staged_by.is_some() => {
                        crate::arena::staged_life(kir, plan, other).expect("life")
                    }
                    _ if plan.outlive.iter().any(|n| n == other) => {
                        (lives[other].0, kir.nodes.len() - 1)
                    }
                    _ => lives[other],
                };
                let meets = other_life.0 <= life.1 && life.0 <= other_life.1;
                let overlaps = o < end && at < o + size(other);
                assert!(!(meets && overlaps), "{} overlaps {other}", b.name);
            }
        }
        for n in &plan.nodes {
            let OpPlan::Conv2d(c) = &n.op else { continue };
            let staged = plan
                .buffers
                .iter()
                .any(|b| b.name == c.weights && b.staged_by.is_some());
            if staged {
                assert!(c.weights_in_l1 && c.slices == 1, "{}", n.name);
                let in_buffer = |cb: &str, buffer: &str| {
                    n.cbs
                        .iter()
                        .any(|x| x.name == cb && x.buffer.as_deref() == Some(buffer))
                };
                assert!(in_buffer(WEIGHTS_CB_NAME, &c.weights), "{}", n.name);
                assert!(in_buffer(BIAS_CB_NAME, &c.bias), "{}", n.name);
            }
        }
    }

    /// A staged buffer whose conv does not take it from L1, or whose stager is no step, is
    /// refused by name instead of leaving a slot unfilled.
    #[test]
    fn a_slot_no_step_fills_or_reads_is_refused() {
        let (base, with, _) = staged(Grid::ETH_DISPATCH);
        let marked = |plan: &Plan, stager: &str| {
            let mut buffers = plan.buffers.clone();
            for b in buffers.iter_mut().filter(|b| b.name == "conv3a.weight") {
                b.staged_by = Some(stager.to_string());
            }
            let mut nodes = plan.nodes.clone();
            add_stage_cbs(&mut nodes, &buffers)
        };
        let refused = |why| {
            Err(PlanError::Unstageable {
                buffer: "conv3a.weight".to_string(),
                why,
            })
        };
        assert_eq!(
            marked(&base, "conv2b"),
            refused("no conv's CB lives in its slot")
        );
        assert_eq!(
            marked(&with, "nope"),
            refused("its stager is not a step of the plan")
        );
        assert_eq!(marked(&with, "conv2b"), Ok(()));
    }

    /// conv3a's weights (k tiles 64·9/32 = 18 by 128/32 = 4 output tiles of 2048 B: 147,456 B)
    /// and bias (4 tiles: 8,192 B) in bf16.
    fn assert_conv3a_sizes(plan: &Plan) {
        let bytes = |name: &str| {
            let b = plan
                .buffers
                .iter()
                .find(|b| b.name == name)
                .expect("buffer");
            assert!(matches!(
                b.content,
                Content::ConvWeights { .. } | Content::ConvBias { .. }
            ));
            b.pages * b.page_bytes
        };
        assert_eq!(bytes("conv3a.weight"), 147_456);
        assert_eq!(bytes("conv3a.bias"), 8_192);
    }

    /// 12×10: conv1b, conv2a, conv2b and convPb keep resident copies; of the other unsliced
    /// convs, conv3a is staged by conv2b (the step before it, conv2b with pool2 fused) and
    /// conv4a by conv3b (with pool3 fused, in two slices: its stage multicast reaches both
    /// slices' cores); conv4b's weights (294,912 B) find no room beside the activations and
    /// conv4a's slots in conv4a's step and stay in DRAM. conv3a's slots start where the activations alive from conv2b to conv3a
    /// end: conv2a's output (4800 pages of 2048 B over 120 banks: 81,920 B a bank) and pool2's
    /// (1200 pages: 20,480 B) are alive in conv2b, one above the other, and conv3a's output
    /// (40,960 B) fits below them once conv2a's is dead: 102,400, then its bias after its
    /// weights at 102,400 + 147,456 = 249,856. Without `stage_weights` the plan is unchanged.
    #[test]
    fn conv3a_is_staged_by_conv2b_on_12x10() {
        let (base, with, kir) = staged(Grid::ETH_DISPATCH);
        assert!(base.buffers.iter().all(|b| b.staged_by.is_none()));
        let expected: BTreeMap<String, String> = [("conv3a", "conv2b"), ("conv4a", "conv3b")]
            .into_iter()
            .map(|(c, s)| (c.to_string(), s.to_string()))
            .collect();
        assert_eq!(staged_convs(&with), expected);
        assert_conv3a_sizes(&with);
        assert_eq!(kir.arena.offsets["conv3a.weight"], 102_400);
        assert_eq!(kir.arena.offsets["conv3a.bias"], 249_856);
        let (s, c) = crate::arena::staged_life(&kir, &with, "conv3a.weight").expect("life");
        assert_eq!(
            (kir.nodes[s].node.as_str(), kir.nodes[c].node.as_str()),
            ("conv2b", "conv3a")
        );
        let highest_alive = kir
            .arena
            .offsets
            .iter()
            .filter(|(n, _)| ["conv2a", "pool2", "conv3a"].contains(&n.as_str()))
            .map(|(n, &o)| {
                let b = with.buffers.iter().find(|b| &b.name == n).expect("buffer");
                o + b.pages / 120 * b.page_bytes
            })
            .max();
        assert_eq!(highest_alive, Some(102_400));
        assert_eq!(kir.arena.bytes, 409_600);
        assert_slots_sound(&with, &kir);
    }

    /// 11×10: with conv1b and conv2b taking their pools there too, the copies and slots of
    /// 12×10: conv1b, conv2a, conv2b and convPb resident, conv3a staged by conv2b and conv4a by
    /// conv3b. conv3a's slots start above conv2a's output (4800 pages over 110 banks: 44 pages of
    /// 2048 B a bank, 90,112 B) and pool2's (1200 pages: 11 a bank, 22,528 B), alive in conv2b's
    /// step: 112,640, its bias after its weights at 112,640 + 147,456 = 260,096.
    #[test]
    fn staging_on_11x10() {
        let (base, with, kir) = staged(Grid { x: 11, y: 10 });
        let resident: Vec<&str> = base
            .buffers
            .iter()
            .filter(|b| b.resident)
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(
            resident,
            [
                "conv1b.weight",
                "conv1b.bias",
                "conv2a.weight",
                "conv2a.bias",
                "conv2b.weight",
                "conv2b.bias",
                "convPb.weight",
                "convPb.bias"
            ]
        );
        let expected: BTreeMap<String, String> = [("conv3a", "conv2b"), ("conv4a", "conv3b")]
            .into_iter()
            .map(|(c, s)| (c.to_string(), s.to_string()))
            .collect();
        assert_eq!(staged_convs(&with), expected);
        assert_conv3a_sizes(&with);
        assert_eq!(kir.arena.offsets["conv3a.weight"], 112_640);
        assert_eq!(kir.arena.offsets["conv3a.bias"], 260_096);
        assert_slots_sound(&with, &kir);
    }

    /// A slot that finds no room is refused: conv4b's weights (294,912 B) staged by conv4a on
    /// 12×10 beside conv4a's own slots (staged by conv3b, 51,200 to 354,304 B, alive in conv4a's
    /// step) would end past the 409,600 B arena.
    #[test]
    fn a_slot_without_room_is_refused() {
        let variant = main_program(640, 480, None, Grid::ETH_DISPATCH);
        let base = crate::plan::with_resident(&variant.graph, &variant.params).expect("plans");
        let trial: BTreeMap<String, String> = [("conv4a", "conv3b"), ("conv4b", "conv4a")]
            .into_iter()
            .map(|(c, s)| (c.to_string(), s.to_string()))
            .collect();
        let (tried, _) = plan_with(
            &variant.graph,
            &variant.params,
            &base.chosen,
            &trial,
            base.reserve,
        )
        .expect("plans");
        assert_eq!(
            check(&base.plan, &tried, &trial),
            Err(Lapse::Unplaced {
                buffer: "conv4b.weight".to_string()
            })
        );
    }
}
