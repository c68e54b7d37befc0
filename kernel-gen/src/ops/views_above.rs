//! The kernel IR of a shifted-view conv's ring work ([`RingCalls`]: block reads, view starts and
//! finishes, as the reader and the writer do them) and of the writer's share where it builds
//! the views of the row above ([`ViewsAbove`], `conv2d/views_above.cpp.tera`,
//! [`crate::plan::writer_views`]): its compile and runtime args and its calls, stage by stage.

use crate::kir::{args, blocks, cb_id, names, Arg, Call, CompileArg, CoreArgs, KirError, Trips};
use crate::plan::conv_pool::walked;
use crate::plan::writer_views::{ABOVE_CB, RING_READY_CB};
use crate::plan::{ConvPlan, NodePlan};

/// The calls of the ring's work on blocks of `c`'s input `input` into CB `ring`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RingCalls<'a> {
    pub c: &'a ConvPlan,
    pub input: &'a str,
    pub ring: u32,
}

impl RingCalls<'_> {
    /// `blocks` blocks read into their slots.
    pub fn fetch(&self, blocks: u32) -> Call {
        Call::DramRead {
            buffer: self.input.to_string(),
            pages: blocks * self.c.in_tiles,
            page_bytes: self.c.tile_bytes,
            cb: self.ring,
        }
    }

    /// The views of `blocks` blocks started: both moved by one face row (a read each,
    /// `start_views`).
    pub fn moves(&self, blocks: u32) -> Call {
        Call::L1Copy {
            from: self.ring,
            cb: self.ring,
            tiles: blocks * 2 * self.c.in_tiles,
            row_bytes: self.c.tile_bytes / 64,
            transfers: blocks * 2,
        }
    }

    /// The views of `blocks` blocks finished: the first or last row of each face of each view
    /// fixed (a read per 16-column half, `finish_views`).
    pub fn fixes(&self, blocks: u32) -> Call {
        Call::L1Copy {
            from: self.ring,
            cb: self.ring,
            tiles: 0,
            row_bytes: self.c.tile_bytes / 64,
            transfers: blocks * 2 * 2 * 2 * self.c.in_tiles,
        }
    }
}

/// What a conv's writer adds to build the views of the row above.
pub(crate) struct ViewsAbove<'a> {
    ring: RingCalls<'a>,
    /// `cb_ring_ready` and `cb_above`.
    ready: u32,
    above: u32,
    /// Blocks an image row (W/32): the views of the row above that it builds on a core with blocks.
    row_blocks: u32,
}

impl<'a> ViewsAbove<'a> {
    /// The writer's share of conv `c` reading `input` into CB `ring`, where the plan gives it
    /// one ([`ConvPlan::writer_views`]).
    pub fn of(
        node: &NodePlan,
        c: &'a ConvPlan,
        input: &'a str,
        ring: u32,
    ) -> Result<Option<Self>, KirError> {
        if !c.writer_views {
            return Ok(None);
        }
        Ok(Some(ViewsAbove {
            ring: RingCalls { c, input, ring },
            ready: cb_id(node, RING_READY_CB.1)?,
            above: cb_id(node, ABOVE_CB.1)?,
            row_blocks: c.width / 32,
        }))
    }

    /// Adds to a conv writer's compile args, runtime arg names and each core's runtime args
    /// what it needs to build the views ([`ViewsAbove::compile_args`],
    /// [`ViewsAbove::arg_names`], [`ViewsAbove::args`]).
    pub fn add_args(
        &self,
        node: &NodePlan,
        compile_args: &mut Vec<CompileArg>,
        arg_names: &mut Vec<String>,
        runtime_args: &mut Vec<CoreArgs>,
    ) {
        let missing = self.compile_args(compile_args);
        compile_args.extend(missing);
        arg_names.extend(Self::arg_names());
        *runtime_args = self.args(node, std::mem::take(runtime_args));
    }

    /// The writer's compile args for `conv2d/ring_views.cpp.tera` that `have` lacks (every conv
    /// writer has the activations' `tile_bytes` and `fp32`: its output's, the same format).
    fn compile_args(&self, have: &[CompileArg]) -> Vec<CompileArg> {
        let c = self.ring.c;
        let mut all = args(&[
            ("height", c.height),
            ("width", c.width),
            ("in_tiles", c.in_tiles),
            ("ring_blocks", c.ring_blocks()),
            ("shifted", u32::from(c.shifted)),
        ]);
        all.retain(|a| !have.iter().any(|h| h.name == a.name));
        all
    }

    /// The names of [`ViewsAbove::args`].
    fn arg_names() -> Vec<String> {
        names(&["input_addr", "ring_start", "ring_count"])
    }

    /// `runtime` (each core's writer args) followed by the input's address and the blocks the
    /// core's reader walks.
    fn args(&self, node: &NodePlan, runtime: Vec<CoreArgs>) -> Vec<CoreArgs> {
        runtime
            .into_iter()
            .map(|mut core| {
                let (start, count) = node
                    .split
                    .work
                    .iter()
                    .find(|w| w.core == core.core)
                    .map_or((0, 0), |w| walked(node, w));
                core.args.extend([
                    Arg::BufferAddress(self.ring.input.to_string()),
                    Arg::Const(start),
                    Arg::Const(count),
                ]);
                core
            })
            .collect()
    }

    /// Stage j of the pipeline over the row above (`ViewsAbove::stage`): a read while
    /// j ≤ W/32 − 4, a start while j ≤ W/32 − 2, a finish, the signal.
    fn stage(&self, j: u32) -> Vec<Call> {
        let mut calls = Vec::new();
        if j + 4 <= self.row_blocks {
            calls.push(self.ring.fetch(1));
        }
        if j + 2 <= self.row_blocks {
            calls.push(self.ring.moves(1));
        }
        calls.push(self.ring.fixes(1));
        calls.extend(self.signal());
        calls
    }

    /// A finished view's page of `cb_above`.
    fn signal(&self) -> [Call; 2] {
        [
            Call::CbReserve {
                cb: self.above,
                pages: 1,
            },
            Call::CbPush {
                cb: self.above,
                pages: 1,
            },
        ]
    }

    /// `ViewsAbove::begin` and the stages before the writer's block loop (`first` of them): the
    /// reader's signal, the reads of the first blocks above (at most three), the first views
    /// started.
    pub fn prologue(&self, first: u32) -> Vec<Call> {
        let mut calls = vec![
            Call::CbWait {
                cb: self.ready,
                pages: 1,
            },
            self.ring.fetch(self.row_blocks.min(3)),
            self.ring.moves(1),
        ];
        for j in 0..first.min(self.row_blocks) {
            calls.extend(self.stage(j));
        }
        calls
    }

    /// The blocks of a writer that runs stage `i + lead` before its block `i` (after
    /// `prologue(lead)`) that have a stage: the first W/32 − `lead`.
    pub fn staged_blocks(&self, lead: u32) -> u32 {
        self.row_blocks.saturating_sub(lead)
    }

    /// The loops over those blocks ([`ViewsAbove::staged_blocks`]), each doing its stage and
    /// `per_block`: runs of blocks whose stages do the same (a read while i < W/32 − `lead` − 3,
    /// a start while i < W/32 − `lead` − 1, a finish).
    pub fn staged_loops(&self, lead: u32, per_block: &[Call]) -> Vec<Call> {
        let rb = self.row_blocks;
        let mut bounds = vec![
            0,
            rb.saturating_sub(lead + 3),
            rb.saturating_sub(lead + 1),
            self.staged_blocks(lead),
        ];
        bounds.dedup();
        bounds
            .windows(2)
            .filter(|pair| pair[0] < pair[1])
            .map(|pair| {
                let trips = if pair[0] == 0 {
                    Trips::FirstBlocks(pair[1])
                } else {
                    Trips::BlocksBetween(pair[0], pair[1])
                };
                blocks(
                    trips,
                    [self.stage(pair[0] + lead), per_block.to_vec()].concat(),
                )
            })
            .collect()
    }

    /// The stages that a run of fewer than W/32 − `lead` blocks leaves after its block loop
    /// (every view of the row above is built: [`Trips::MissingBlocks`]), as loops of their
    /// reads, starts and finishes.
    pub fn missing_stages(&self, lead: u32) -> Vec<Call> {
        let rb = self.row_blocks;
        let mut finish = vec![self.ring.fixes(1)];
        finish.extend(self.signal());
        vec![
            blocks(
                Trips::MissingBlocks(rb.saturating_sub(lead + 3)),
                vec![self.ring.fetch(1)],
            ),
            blocks(
                Trips::MissingBlocks(rb.saturating_sub(lead + 1)),
                vec![self.ring.moves(1)],
            ),
            blocks(Trips::MissingBlocks(self.staged_blocks(lead)), finish),
        ]
    }

    /// The writer's last call: the reader's signal popped.
    pub fn epilogue(&self) -> Call {
        Call::CbPop {
            cb: self.ready,
            pages: 1,
        }
    }

    /// The reader's signal that the writer may start (after the blocks first − 1 and first).
    pub fn ready(&self) -> [Call; 2] {
        [
            Call::CbReserve {
                cb: self.ready,
                pages: 1,
            },
            Call::CbPush {
                cb: self.ready,
                pages: 1,
            },
        ]
    }

    /// The reader's waits, after its block loop, for the writer's views that a run shorter than
    /// W/32 has no block for (it takes one in each of its first W/32 − 1 blocks).
    pub fn finished_after(&self) -> Call {
        blocks(
            Trips::MissingBlocks(self.row_blocks.saturating_sub(1)),
            self.finished().to_vec(),
        )
    }

    /// The reader's wait for one of the writer's views.
    pub fn finished(&self) -> [Call; 2] {
        [
            Call::CbWait {
                cb: self.above,
                pages: 1,
            },
            Call::CbPop {
                cb: self.above,
                pages: 1,
            },
        ]
    }
}
