//! The stager's add-on to a conv writer (`conv2d/stage.cpp.tera`): a step that stages a later
//! conv's weights and bias in the arena ([`crate::plan::staged`]) has a CB in each slot
//! ([`STAGE_WEIGHTS_CB`], [`STAGE_BIAS_CB`]) and a few stage senders ([`senders`]: as many as
//! a weight multicast of those pages would have, [`senders_of`], over the step's cores in split
//! order but its own weights' senders); each reads its share of the weights' DRAM pages (sender `s` of `S`: pages
//! [`share`]`(n, S, s)`; the first also the bias) into its own slots and multicasts them to the
//! same address on every core of the grid, the step's one rectangle. That happens in the
//! writer's prologue, before its output blocks, while the compute starts on its first block (on
//! cores that send no weights, so it does not hold the weights' multicast); the writes complete
//! before the writer ends, so the next programs find the slots filled. No core of the step
//! waits for them: the cost model counts them as the writer's work, not as a multicast the
//! step's start-up waits for (`crate::phases`).

use crate::device::{Core, CoreRange};
use crate::kir::{args, Arg, Call, CompileArg, KirError, Trips};
use crate::multicast::senders_of;
use crate::plan::split::share;
use crate::plan::staged::{STAGE_BIAS_CB, STAGE_WEIGHTS_CB};
use crate::plan::NodePlan;

/// What a stager's writer stages: the CBs in the weights' and the bias's slots (their pages are
/// the buffers' DRAM pages), its senders and the rectangle of cores the slots are filled on.
#[derive(Debug, Clone)]
pub(crate) struct Stage {
    weights: Slot,
    bias: Slot,
    senders: Vec<Core>,
    rect: CoreRange,
}

/// A stager's CB in the slot of a staged buffer.
#[derive(Debug, Clone)]
struct Slot {
    cb: u32,
    buffer: String,
    pages: u32,
    page_bytes: u32,
}

/// The CB of `node` with id and name `(id, name)`, if it has one in a buffer.
fn slot_cb(node: &NodePlan, (id, name): (u32, &str)) -> Option<Slot> {
    node.cbs.iter().find_map(|c| match &c.buffer {
        Some(buffer) if c.id == id && c.name == name => Some(Slot {
            cb: c.id,
            buffer: buffer.clone(),
            pages: c.pages,
            page_bytes: c.page_bytes,
        }),
        _ => None,
    })
}

/// The stage senders of `node`, whose own weights' multicast senders are `taken`: none unless
/// it stages ([`crate::plan::staged`]), else one per equal run of its other cores in split
/// order, in each the core with the fewest output blocks ([`senders_of`]). Apart from the
/// weights' senders, the staging neither delays the multicast the step's cores wait for nor
/// counts in it.
pub fn senders(node: &NodePlan, taken: &[Vec<Core>]) -> Vec<Core> {
    match slot_cb(node, STAGE_WEIGHTS_CB) {
        Some(weights) => {
            let cores: Vec<(Core, u32)> = node
                .split
                .work
                .iter()
                .filter(|w| !taken.iter().flatten().any(|c| *c == w.core))
                .map(|w| (w.core, w.count))
                .collect();
            senders_of(&cores, weights.pages)
        }
        None => Vec::new(),
    }
}

impl Stage {
    /// The staging `node`'s writer does, if it stages (it has [`STAGE_WEIGHTS_CB`]), its own
    /// weights' multicast senders `taken` ([`senders`]).
    pub(crate) fn of(node: &NodePlan, taken: &[Vec<Core>]) -> Result<Option<Stage>, KirError> {
        let Some(weights) = slot_cb(node, STAGE_WEIGHTS_CB) else {
            return Ok(None);
        };
        let bias = slot_cb(node, STAGE_BIAS_CB).ok_or(KirError::MissingCb {
            node: node.name.clone(),
            cb: STAGE_BIAS_CB.1,
        })?;
        let [rect] = node.split.ranges.as_slice() else {
            return Err(KirError::MulticastRects {
                node: node.name.clone(),
                rects: node.split.ranges.len(),
                max: 1,
            });
        };
        Ok(Some(Stage {
            weights,
            bias,
            senders: senders(node, taken),
            rect: *rect,
        }))
    }

    /// The compile args the stage adds: the DRAM page sizes of the weights and the bias.
    pub(crate) fn compile_args(&self) -> Vec<CompileArg> {
        args(&[
            ("stage_weights_page_bytes", self.weights.page_bytes),
            ("stage_bias_page_bytes", self.bias.page_bytes),
        ])
    }

    /// The names of [`Stage::args`].
    pub(crate) fn arg_names() -> Vec<String> {
        [
            "stage_weights_addr",
            "stage_bias_addr",
            "stage_weights_first",
            "stage_weights_pages",
            "stage_bias_pages",
            "stage_x0",
            "stage_y0",
            "stage_x1",
            "stage_y1",
            "stage_dests",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    }

    /// The runtime args of `core`: the buffers' DRAM addresses, its share of the weights' pages
    /// and of the bias's (none on a core that is no sender), and the rectangle's NoC corners and
    /// cores.
    pub(crate) fn args(&self, core: Core) -> Vec<Arg> {
        let index = self.senders.iter().position(|s| *s == core);
        let (first, end) = index.map_or((0, 0), |s| {
            share(self.weights.pages, self.senders.len() as u32, s as u32)
        });
        vec![
            Arg::BufferAddress(self.weights.buffer.clone()),
            Arg::BufferAddress(self.bias.buffer.clone()),
            Arg::Const(first),
            Arg::Const(end - first),
            Arg::Const(if index == Some(0) { self.bias.pages } else { 0 }),
            Arg::NocX(self.rect.start),
            Arg::NocY(self.rect.start),
            Arg::NocX(self.rect.end),
            Arg::NocY(self.rect.end),
            Arg::Const(self.rect.len()),
        ]
    }

    /// The writer's calls on each stage sender, the busiest's (the largest share, and the
    /// bias): each buffer's pages read from DRAM into its slot, then multicast to the
    /// rectangle's other cores.
    pub(crate) fn calls(&self) -> Vec<Call> {
        let senders = self.senders.len() as u32;
        let largest = (0..senders)
            .map(|s| {
                let (start, end) = share(self.weights.pages, senders, s);
                end - start
            })
            .max()
            .unwrap_or(0);
        let dests = self.rect.len().saturating_sub(1);
        let copy = |slot: &Slot, pages: u32| {
            [
                Call::DramRead {
                    buffer: slot.buffer.clone(),
                    pages,
                    page_bytes: slot.page_bytes,
                    cb: slot.cb,
                },
                Call::McastWrite {
                    cb: slot.cb,
                    pages,
                    page_bytes: slot.page_bytes,
                    dests,
                    rects: 1,
                },
            ]
        };
        vec![Call::Loop {
            trips: Trips::OnStager,
            body: [
                copy(&self.weights, largest),
                copy(&self.bias, self.bias.pages),
            ]
            .concat(),
        }]
    }
}

#[cfg(test)]
mod tests {
    use crate::device::Grid;
    use crate::kir::{Arg, Role};
    use crate::variants::main_program;

    /// SuperPoint at 640×480 on 12×10 with staging: conv3b, which multicasts its own weights
    /// from its senders, stages conv4a's (128 → 128 channels, 3×3: 36 k tiles by 4 output tiles
    /// of 2 KiB, 294,912 B, and 4 bias tiles) from 4 stage senders, other cores than its own
    /// weights' senders; their shares of the weights' DRAM pages are contiguous and cover them
    /// once, only the first stages the bias, and every core's multicast reaches the grid's 120
    /// cores.
    #[test]
    fn conv3b_stages_conv4a_from_cores_that_send_no_weights() {
        let variant = main_program(640, 480, None, Grid::ETH_DISPATCH);
        let plan = crate::staging::plan(&variant.graph, &variant.params).expect("plans");
        let kir = crate::lower::lower(&plan).expect("lowers");
        let node = kir
            .nodes
            .iter()
            .find(|n| n.node == "conv3b")
            .expect("conv3b");
        let senders: Vec<_> = node.senders.iter().flatten().copied().collect();
        assert_eq!(node.stagers.len(), 4);
        assert!(node.stagers.iter().all(|s| !senders.contains(s)));
        // Cores that are taken are never stage senders, whichever they are.
        let step = plan
            .nodes
            .iter()
            .find(|n| n.name == "conv3b")
            .expect("conv3b");
        let first = super::senders(step, &[]);
        let apart = super::senders(step, std::slice::from_ref(&first));
        assert_eq!(apart.len(), 4);
        assert!(apart.iter().all(|s| !first.contains(s)));
        let writer = node
            .kernels
            .iter()
            .find(|k| k.role == Role::Writer)
            .expect("a writer");
        let at = |name: &str| {
            writer
                .runtime_arg_names
                .iter()
                .position(|n| n == name)
                .expect("an arg")
        };
        let value = |args: &[Arg], name: &str| match &args[at(name)] {
            Arg::Const(v) => *v,
            other => panic!("{name} is {other:?}"),
        };
        let mut shares = Vec::new();
        let mut bias = 0;
        for core in &writer.runtime_args {
            let pages = value(&core.args, "stage_weights_pages");
            assert_eq!(pages > 0, node.stagers.contains(&core.core));
            if pages > 0 {
                shares.push((value(&core.args, "stage_weights_first"), pages));
            }
            bias += value(&core.args, "stage_bias_pages");
            assert_eq!(value(&core.args, "stage_dests"), 120);
        }
        shares.sort();
        let mut next = 0;
        for (first, pages) in shares {
            assert_eq!(first, next);
            next += pages;
        }
        let cb = node
            .cbs
            .iter()
            .find(|c| c.name == "cb_stage_weights")
            .expect("the weights' slot CB");
        assert_eq!(next, cb.pages);
        assert_eq!(cb.pages * cb.page_bytes, 294_912);
        assert_eq!(bias, 4);
    }
}
