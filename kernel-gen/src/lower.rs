//! The lowering stage: every planned node to kernel IR ([`crate::kir`]) through its op's
//! [`Lowering`] (in [`crate::ops`], chosen by [`lowering`]), then the activations placed in the
//! L1 arena ([`crate::arena::place`]).

use crate::arena;
use crate::kir::{Kir, KirError, Lowering, NodeKir};
use crate::plan::conv_pool::walked;
use crate::plan::{OpPlan, Plan};

/// The lowering of a planned op: the table the stage dispatches on.
pub fn lowering(op: &OpPlan) -> &dyn Lowering {
    match op {
        OpPlan::Conv2d(c) => c,
        OpPlan::MaxPool2(p) => p,
        OpPlan::SoftmaxFold(p) => p,
        OpPlan::L2Normalize(p) => p,
        OpPlan::Resize(r) => r,
        OpPlan::ResizeCopy(r) => r,
        OpPlan::Nms(p) => p,
        OpPlan::SelectKeypoints(p) => p,
        OpPlan::SampleDescriptors(s) => s,
    }
}

/// Lowers every planned node to kernel IR and places the activations in L1.
pub fn lower(plan: &Plan) -> Result<Kir, KirError> {
    let mut nodes = Vec::with_capacity(plan.nodes.len());
    for node in &plan.nodes {
        for buffer in node.inputs.iter().chain([&node.output]) {
            if !plan.buffers.iter().any(|b| &b.name == buffer) {
                return Err(KirError::MissingBuffer {
                    node: node.name.clone(),
                    buffer: buffer.clone(),
                });
            }
        }
        let op = lowering(&node.op);
        let (semaphores, senders) = op.sync(node)?;
        let stagers = crate::ops::stage::senders(node, &senders);
        nodes.push(NodeKir {
            node: node.name.clone(),
            op: op.op().to_string(),
            ranges: node.split.ranges.clone(),
            cbs: node.cbs.clone(),
            semaphores,
            blocks: node
                .split
                .work
                .iter()
                .map(|w| (w.core, walked(node, w).1))
                .collect(),
            units: match &node.op {
                OpPlan::Conv2d(c) if c.pooled => {
                    node.split.work.iter().map(|w| (w.core, w.count)).collect()
                }
                _ => Vec::new(),
            },
            senders,
            stagers,
            counted: op.counted(),
            kernels: op.kernels(node)?,
        });
    }
    let mut kir = Kir {
        nodes,
        arena: Default::default(),
    };
    arena::place(&mut kir, plan)?;
    Ok(kir)
}
