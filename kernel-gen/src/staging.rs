//! Weights staged in the L1 arena's dead space, planned ([`crate::plan::staged`] has the rule and
//! the stagers' CBs; `crate::ops::stage` the stagers' kernels): [`plan`] takes the candidates
//! one at a time and keeps each only where the arena, placed on the plan made with it
//! ([`crate::lower`]), still holds what it held without ([`check`]). A layer after the lowering,
//! since that check needs the placement.

use std::collections::BTreeMap;

use superpoint_graph::Graph;

use crate::kir::KirError;
use crate::plan::{
    plan_with, resident, staged, with_resident, OpPlan, Plan, PlanError, PlanParams,
};

/// [`crate::plan::plan`] and, with [`PlanParams::stage_weights`], the weights and bias of the
/// convs [`staged::candidates`] names on it staged in the arena's dead space by an earlier step
/// (`BufferPlan::staged_by`), one conv at a time in step order, each by its [`staged::stager`]
/// on the plan so far (which no other conv has taken): the plan made again with the convs
/// staged so far and this one in L1 stands only where [`check`] finds every staged buffer in
/// the arena and the arena still holding every activation the plan without staging held (and
/// the resident copies still hold, [`resident::check`]); else the conv is not staged.
pub fn plan(graph: &Graph, params: &PlanParams) -> Result<Plan, PlanError> {
    let base = with_resident(graph, params)?;
    if !params.stage_weights {
        return Ok(base.plan);
    }
    let mut staged: BTreeMap<String, String> = BTreeMap::new();
    let mut planned = base.plan.clone();
    for conv in staged::candidates(&base.plan) {
        let Some(index) = planned.nodes.iter().position(|n| n.name == conv) else {
            continue;
        };
        let Some(stager) = staged::stager(&planned, index).map(|n| n.name.clone()) else {
            continue;
        };
        if staged.values().any(|s| *s == stager) {
            continue;
        }
        let mut trial = staged.clone();
        trial.insert(conv, stager);
        let (with, steps_reserve) = plan_with(graph, params, &base.chosen, &trial, base.reserve)?;
        let copies_hold =
            base.chosen.is_empty() || resident::check(&with, &base.chosen, steps_reserve).is_ok();
        if copies_hold && check(&base.plan, &with, &trial).is_ok() {
            staged = trial;
            planned = with;
        }
    }
    Ok(planned)
}

/// How a plan made with staged weights breaks what [`plan`] took.
#[derive(Debug, Clone, PartialEq)]
pub enum Lapse {
    /// Conv `node` was to be staged but does not take its weights from L1 (its step is sliced,
    /// fused or gone).
    NotInL1 { node: String },
    /// Staged buffer `buffer` found no room in the arena.
    Unplaced { buffer: String },
    /// Activation `buffer`, in L1 without staging, is in DRAM with it.
    Spilled { buffer: String },
    /// A plan does not lower.
    Lower(KirError),
}

/// Checks `with`, planned with the convs `staged` names taking their weights from arena slots,
/// against `base`, the plan without staging: every staged conv takes its weights from L1, and
/// the arena packed on `with` holds every staged buffer and every buffer `base`'s holds.
pub fn check(base: &Plan, with: &Plan, staged: &BTreeMap<String, String>) -> Result<(), Lapse> {
    let in_l1 = |name: &str| {
        with.nodes
            .iter()
            .any(|n| n.name == name && matches!(&n.op, OpPlan::Conv2d(c) if c.weights_in_l1))
    };
    if let Some(node) = staged.keys().find(|n| !in_l1(n)) {
        return Err(Lapse::NotInL1 { node: node.clone() });
    }
    let arena = |p: &Plan| {
        crate::lower::lower(p)
            .map(|k| k.arena)
            .map_err(Lapse::Lower)
    };
    let (kept, packed) = (arena(base)?, arena(with)?);
    if let Some(b) = with
        .buffers
        .iter()
        .find(|b| b.staged_by.is_some() && !packed.holds(&b.name))
    {
        return Err(Lapse::Unplaced {
            buffer: b.name.clone(),
        });
    }
    if let Some(b) = kept.offsets.keys().find(|b| !packed.holds(b)) {
        return Err(Lapse::Spilled { buffer: b.clone() });
    }
    Ok(())
}
