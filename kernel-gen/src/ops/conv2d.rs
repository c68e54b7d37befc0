//! Lowering of `conv2d`: the generic conv's reader (a ring of input blocks and its im2col tiles,
//! or shifted views), compute (bias, matmuls over K, packed ReLU) and writer, with the resident
//! weights and bias filled by one DRAM read and a multicast per group of cores
//! ([`crate::multicast`]). The frame conv ([`super::frame_conv`]) and a conv with its pool fused
//! ([`super::conv_pool`]) reuse its pieces. The plan is [`crate::plan::ConvPlan`] (crate docs).

use crate::device::Core;
use crate::kir::{
    args, blocks, cb_format, cb_id, cb_plan, exact_fp32_copies, fill_copies, format_args, input,
    names, per_core, Arg, Call, CompileArg, CoreArgs, Kernel, KirError, Lowering, Role, Trips,
};
use crate::multicast::{Multicast, Resident};
use crate::plan::conv::{BIAS_CB_NAME, WEIGHTS_CB_NAME};
use crate::plan::conv_pool::walked;
use crate::plan::{ConvPlan, CoreWork, NodePlan};

use super::max_pool2::{ones_fill, selection_fill};
use super::stage::Stage;
use super::views_above::{RingCalls, ViewsAbove};
use super::{conv_pool, frame_conv};

impl Lowering for ConvPlan {
    fn op(&self) -> &'static str {
        "conv2d"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        conv_kernels(node, self)
    }

    /// The weights' multicast semaphores and the senders of each group of cores.
    fn sync(&self, node: &NodePlan) -> Result<(u32, Vec<Vec<Core>>), KirError> {
        let multicast = Multicast::of(node, &conv_residents(node, self)?)?;
        Ok((multicast.semaphores(), multicast.senders()))
    }
}

/// The output, weights and bias buffers slice `slice` of conv `c` writes and reads (the
/// node's own, or a fused conv's: [`ConvPlan::slice_output`]), and its first output tile there.
fn slice_buffers<'a>(node: &'a NodePlan, c: &'a ConvPlan, slice: u32) -> ([&'a str; 3], u32) {
    let (output, start) = c.slice_output(slice);
    let buffers = match output.checked_sub(1).and_then(|i| c.fused.get(i as usize)) {
        Some(f) => [f.node.as_str(), f.weights.as_str(), f.bias.as_str()],
        None => [node.output.as_str(), c.weights.as_str(), c.bias.as_str()],
    };
    (buffers, start)
}

/// The first output tile of `core`'s slice of conv `c` ([`crate::plan::Split::slices`]) in the
/// output it writes.
fn out_start(node: &NodePlan, c: &ConvPlan, core: Core) -> u32 {
    node.split
        .work
        .iter()
        .find(|w| w.core == core)
        .map_or(0, |w| slice_buffers(node, c, w.slice).1)
}

/// A conv reader's runtime args: the addresses of the `input` and of the core's slice's weights
/// and bias ([`slice_buffers`]), then the blocks it walks ([`walked`]: its share, or with a
/// fused pool the span of its units).
fn reader_args(node: &NodePlan, c: &ConvPlan, input: &str) -> Vec<CoreArgs> {
    node.split
        .work
        .iter()
        .map(|w| {
            let ([_, weights, bias], _) = slice_buffers(node, c, w.slice);
            let (start, count) = walked(node, w);
            CoreArgs {
                core: w.core,
                args: [input, weights, bias]
                    .map(|b| Arg::BufferAddress(b.to_string()))
                    .into_iter()
                    .chain([Arg::Const(start), Arg::Const(count)])
                    .collect(),
            }
        })
        .collect()
}

/// A conv's resident CBs: its weights and bias ([`Multicast`]); the kernel IR is per node, so
/// they name the node's own buffers where a fused conv's slices read theirs
/// ([`ConvPlan::fused`]: the same pages, never in the L1 arena).
fn conv_residents(node: &NodePlan, c: &ConvPlan) -> Result<[Resident; 2], KirError> {
    Ok([
        Resident {
            cb: cb_id(node, "cb_weights")?,
            buffer: c.weights.clone(),
            pages: c.resident_weight_tiles(),
            page_bytes: cb_plan(node, "cb_weights")?.page_bytes,
            per_dram_page: c.weight_page_tiles,
        },
        Resident {
            cb: cb_id(node, "cb_bias")?,
            buffer: c.bias.clone(),
            pages: c.slice_tiles(),
            page_bytes: cb_plan(node, "cb_bias")?.page_bytes,
            per_dram_page: 1,
        },
    ])
}

/// The weights' rounds a conv reader pushes in K order ([`Multicast::round`]), each once.
pub(crate) struct Rounds<'a> {
    multicast: &'a Multicast,
    residents: &'a [Resident],
    pushed: u32,
}

impl<'a> Rounds<'a> {
    fn new(multicast: &'a Multicast, residents: &'a [Resident]) -> Self {
        Rounds {
            multicast,
            residents,
            pushed: 0,
        }
    }

    /// The rounds a conv reader's body pushes itself: those after the ones its prologue pushes
    /// ([`add_conv_weights_fill`]).
    fn after_prologue(multicast: &'a Multicast, residents: &'a [Resident], c: &ConvPlan) -> Self {
        Rounds {
            pushed: if streams_rounds(c) {
                1
            } else {
                multicast.slabs()
            },
            ..Rounds::new(multicast, residents)
        }
    }

    /// The waits and pushes of the rounds not pushed yet that hold the weights' first `tiles`
    /// tiles ([`Multicast::rounds_holding`]; `u32::MAX`: all of them).
    fn holding(&mut self, tiles: u32) -> Vec<Call> {
        let per_page = self.residents.first().map_or(1, |r| r.per_dram_page);
        let to = self.multicast.rounds_holding(tiles, per_page);
        let calls = (self.pushed..to)
            .flat_map(|j| self.multicast.round(self.residents, j))
            .collect();
        self.pushed = self.pushed.max(to);
        calls
    }
}

/// Whether a conv's reader pushes the weights' rounds after the first in its first output
/// block, before the im2col hand-offs that need them (`conv2d/reader.cpp.tera`; with shifted
/// views those of tap rows 0 and 1 before the block's page, the others after it), rather than
/// all before its block loop (the frame conv's reader).
fn streams_rounds(c: &ConvPlan) -> bool {
    !c.frame_rows
}

/// The weights and bias fill of a conv's reader ([`Multicast::fill`]; the sender's writer
/// multicasts them, [`conv_writer`]): its runtime args (the multicast's, then `out_start`, the
/// first output tile of the core's slice) appended, its calls first, but for the waits for the
/// pages and their pushes ([`Multicast::round`]): after the reader's start-up (its zero tile and
/// input ring prologue), before its first push or its block loop, so the ring fills while the
/// weights travel; there all rounds, or only the first when the reader pushes the others in its
/// first block ([`streams_rounds`], [`conv_reader_body`]; a core without blocks there too). The
/// first round's wait starts with the constant tiles the compute needs (`weights_landed` in
/// `conv2d/weights.cpp.tera`): a fused pool's selection tiles (where the node has a
/// `cb_select`), the identity tile where the compute moves tiles into DST by it (a
/// `cb_identity`: [`ConvPlan::identity_bias`], every fused pool).
pub(crate) fn add_conv_weights_fill(
    reader: &mut Kernel,
    node: &NodePlan,
    c: &ConvPlan,
) -> Result<(), KirError> {
    let residents = conv_residents(node, c)?;
    let multicast = Multicast::of(node, &residents)?;
    reader.compile_args.extend(multicast.compile_args());
    reader.runtime_arg_names.extend(Multicast::arg_names());
    reader.runtime_arg_names.push("out_start".to_string());
    for core in &mut reader.runtime_args {
        core.args.extend(multicast.args(core.core));
        core.args.push(Arg::Const(out_start(node, c, core.core)));
    }
    let present = |name: &str| node.cbs.iter().any(|b| b.name == name);
    let mut constants = Vec::new();
    if present("cb_select") {
        constants.extend(selection_fill(cb_id(node, "cb_select")?));
    }
    if present("cb_identity") {
        constants.extend(ones_fill(cb_id(node, "cb_identity")?, 1, 32));
    }
    if c.bias_row {
        // The bias into row 31 of each weight tile: two 32-byte face rows a tile.
        constants.push(Call::L1Copy {
            from: cb_id(node, BIAS_CB_NAME)?,
            cb: cb_id(node, WEIGHTS_CB_NAME)?,
            tiles: 0,
            row_bytes: 32,
            transfers: 2 * c.slice_tiles(),
        });
    }
    let mut rounds = Rounds::new(&multicast, &residents);
    let mut landed = constants;
    landed.extend(rounds.holding(if streams_rounds(c) { 1 } else { u32::MAX }));
    // A core without output blocks pushes the others at once (`conv2d/reader.cpp.tera`).
    let rest = rounds.holding(u32::MAX);
    if !rest.is_empty() {
        landed.push(Call::Loop {
            trips: Trips::WithoutBlocks,
            body: rest,
        });
    }
    let started = reader
        .body
        .iter()
        .position(|call| {
            matches!(
                call,
                Call::CbPush { .. }
                    | Call::Loop {
                        trips: Trips::Blocks | Trips::FirstBlocks(_),
                        ..
                    }
            )
        })
        .unwrap_or(reader.body.len());
    reader.body.splice(started..started, landed);
    reader.body.splice(0..0, multicast.fill(&residents));
    Ok(())
}

/// One output block of a conv's compute (`conv2d/block.cpp.tera`): per group of the core's
/// slice of output tiles, the bias, the matmuls over K and the pack to CB `out` (a fused
/// ReLU is the packer's, configured once per kernel: no SFPU work).
pub(crate) fn conv_block_groups(c: &ConvPlan, out: u32) -> Call {
    Call::Loop {
        trips: Trips::Fixed(c.slice_tiles() / c.group),
        body: conv_group(
            c,
            out,
            0,
            Vec::new(),
            vec![matmuls(c, c.weight_parts * c.k_tiles)],
        ),
    }
}

/// `steps` K steps of one group's matmuls.
fn matmuls(c: &ConvPlan, steps: u32) -> Call {
    Call::Loop {
        trips: Trips::Fixed(steps),
        body: vec![group_matmul(c)],
    }
}

/// One matmul_block of a row of `group` tiles: a K step of a group, or the identity tile times
/// the group's bias ([`ConvPlan::identity_bias`]) or a fused pool's kept upper tiles.
pub(crate) fn group_matmul(c: &ConvPlan) -> Call {
    Call::Matmul {
        ct: c.group,
        rt: 1,
        kt: 1,
    }
}

/// One group of output tiles: the bias (a copy, the identity tile times the bias tiles:
/// [`ConvPlan::identity_bias`], or none where it is a row of K: [`ConvPlan::bias_row`]),
/// `k_loop` (the matmuls over K), the `epilogue` and the pack to CB `out`.
fn conv_group(
    c: &ConvPlan,
    out: u32,
    extra_dst: u32,
    epilogue: Vec<Call>,
    k_loop: Vec<Call>,
) -> Vec<Call> {
    vec![
        Call::CbReserve {
            cb: out,
            pages: c.group,
        },
        Call::Dst {
            tiles: c.group + extra_dst,
            body: [
                if c.bias_row {
                    Vec::new()
                } else if c.identity_bias {
                    vec![group_matmul(c)]
                } else {
                    vec![Call::Copy { tiles: c.group }]
                },
                k_loop,
                epilogue,
                vec![Call::Pack {
                    cb: out,
                    tiles: c.group,
                }],
            ]
            .concat(),
        },
        Call::CbPush {
            cb: out,
            pages: c.group,
        },
    ]
}

/// One output block of a conv's compute whose im2col pages on CB `im2col` the reader hands over
/// as it builds them: the first group of output tiles waits for them inside its K loop
/// ([`ConvPlan::im2col_waits`]), before them (at the same K step) for the `weights` waits
/// (`(k, tiles)`: cumulative waits for the weights' CB, the core's first block only), the
/// further groups find them all, then the block's pages are popped. The `epilogue` after each
/// group's matmuls uses `extra_dst` DST tiles above the group's.
pub(crate) fn conv_streamed_block(
    c: &ConvPlan,
    im2col: u32,
    out: u32,
    extra_dst: u32,
    epilogue: Vec<Call>,
    weights: &[(u32, Call)],
) -> Vec<Call> {
    let mut waits: Vec<(u32, Call)> = weights.to_vec();
    waits.extend(
        c.im2col_waits()
            .into_iter()
            .map(|(k, pages)| (k, Call::CbWait { cb: im2col, pages })),
    );
    // Stable: at one K step the weights' wait comes first, as in WaitWeights.
    waits.sort_by_key(|(k, _)| *k);
    let mut k_loop = Vec::new();
    let mut at = 0;
    for (k, wait) in waits {
        if k > at {
            k_loop.push(matmuls(c, k - at));
            at = k;
        }
        k_loop.push(wait);
    }
    k_loop.push(matmuls(c, c.weight_parts * c.k_tiles - at));
    let mut block = conv_group(c, out, extra_dst, epilogue.clone(), k_loop);
    if c.slice_tiles() > c.group {
        block.push(Call::Loop {
            trips: Trips::Fixed(c.slice_tiles() / c.group - 1),
            body: conv_group(
                c,
                out,
                extra_dst,
                epilogue,
                vec![matmuls(c, c.weight_parts * c.k_tiles)],
            ),
        });
    }
    block.push(Call::CbPop {
        cb: im2col,
        pages: c.im2col_pages(),
    });
    block
}

/// The CB of the identity tile a conv's compute adds the bias with, where it does
/// ([`ConvPlan::identity_bias`]).
fn identity_cb(node: &NodePlan, c: &ConvPlan) -> Result<Option<u32>, KirError> {
    c.identity_bias
        .then(|| cb_id(node, "cb_identity"))
        .transpose()
}

/// A compute's `body` between waiting for the identity tile of CB `identity`, if any, and
/// popping it.
fn holding_identity(identity: Option<u32>, body: Vec<Call>) -> Vec<Call> {
    let held = |call: fn(u32) -> Call| identity.map(call).into_iter().collect::<Vec<_>>();
    [
        held(|cb| Call::CbWait { cb, pages: 1 }),
        body,
        held(|cb| Call::CbPop { cb, pages: 1 }),
    ]
    .concat()
}

/// A conv compute's waits for the weights in its first output block
/// (`conv2d/act_tile.cpp.tera`'s WaitWeights, in `conv2d/compute.cpp.tera` and
/// `conv2d/pool_compute.cpp.tera`), which the reader pushes round by round: before K
/// step `k < k_tiles` of the first group, weight rows `0..=k` (all rows before the last step),
/// cumulatively, rounded up to a count of tiles that divides the CB's, when that reaches further
/// than the last wait.
pub(crate) fn weight_waits(c: &ConvPlan, cb: u32) -> Vec<(u32, Call)> {
    let all = c.resident_weight_tiles();
    let mut waited = 0;
    let mut waits = Vec::new();
    for k in 0..c.k_tiles {
        let rows = if k + 1 == c.k_tiles {
            c.weight_parts * c.k_tiles
        } else {
            k + 1
        };
        let tiles = rows * c.slice_tiles();
        if tiles > waited {
            waited = (tiles..=all).find(|t| all % t == 0).unwrap_or(all);
            waits.push((k, Call::CbWait { cb, pages: waited }));
        }
    }
    waits
}

/// A conv's compute kernel (`template`, with `compile_args`): `body` between waiting for the
/// bias (and, with shifted views, the whole ring: the compute holds it for the program) and
/// waiting for the whole of the resident weights (up front unless `body` waits for them as
/// it goes: `weights_waited`), then popping them at the program's end.
pub(crate) fn conv_compute(
    node: &NodePlan,
    c: &ConvPlan,
    template: &str,
    compile_args: Vec<CompileArg>,
    body: Vec<Call>,
    weights_waited: bool,
) -> Result<Kernel, KirError> {
    let [weights, bias, ring] = ["cb_weights", "cb_bias", "cb_ring"].map(|name| cb_id(node, name));
    let (weights, bias, ring) = (weights?, bias?, ring?);
    let resident = c.resident_weight_tiles();
    let ring_hold = |call: Call| if c.shifted { vec![call] } else { Vec::new() };
    let all_weights = Call::CbWait {
        cb: weights,
        pages: resident,
    };
    let (before, after) = if weights_waited {
        (Vec::new(), vec![all_weights])
    } else {
        (vec![all_weights], Vec::new())
    };
    Ok(Kernel {
        role: Role::Compute,
        template: template.into(),
        ranges: node.split.ranges.clone(),
        compile_args,
        runtime_arg_names: names(&["block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![Arg::Const(start), Arg::Const(count)]
        }),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(node, &["cb_bias"]),
        body: [
            before,
            vec![Call::CbWait {
                cb: bias,
                pages: c.slice_tiles(),
            }],
            ring_hold(Call::CbWait {
                cb: ring,
                pages: c.ring_pages(),
            }),
            body,
            after,
            ring_hold(Call::CbPop {
                cb: ring,
                pages: c.ring_pages(),
            }),
            vec![
                Call::CbPop {
                    cb: bias,
                    pages: c.slice_tiles(),
                },
                Call::CbPop {
                    cb: weights,
                    pages: resident,
                },
            ],
        ]
        .concat(),
    })
}

/// The weights' multicast a conv's writer does first on each group's sender
/// (`conv2d/weights_send.cpp.tera`, [`Multicast::send`]) and, on a stager, the staging after it
/// ([`Stage`]): the compile args they add, their runtime args after the writer's own, and their
/// calls (the multicast's in `body`, the staging's in `staging`: a fused pool's writer builds
/// the views above between them, `conv_pool`).
pub(crate) struct WeightsSend {
    multicast: Multicast,
    stage: Option<Stage>,
    pub compile_args: Vec<CompileArg>,
    pub body: Vec<Call>,
    pub staging: Vec<Call>,
}

impl WeightsSend {
    pub(crate) fn of(node: &NodePlan, c: &ConvPlan) -> Result<Self, KirError> {
        let residents = conv_residents(node, c)?;
        let multicast = Multicast::of(node, &residents)?;
        let stage = Stage::of(node, &multicast.senders())?;
        let mut compile_args = multicast.compile_args();
        let body = multicast.send(&residents);
        let mut staging = Vec::new();
        if let Some(stage) = &stage {
            compile_args.extend(stage.compile_args());
            staging = stage.calls();
        }
        Ok(WeightsSend {
            compile_args,
            body,
            staging,
            multicast,
            stage,
        })
    }

    /// The names of [`WeightsSend::writer_args`]: the writer's `output_addr`, `block_start`,
    /// `block_count`, then the first output tile of the core's slice, the weights' and bias's
    /// buffers, the multicast's and the staging's ([`Stage::arg_names`]) when it stages.
    pub(crate) fn writer_arg_names(&self) -> Vec<String> {
        [
            names(&[
                "output_addr",
                "block_start",
                "block_count",
                "out_start",
                "weight_addr",
                "bias_addr",
            ]),
            Multicast::send_arg_names(),
            self.stage
                .as_ref()
                .map_or_else(Vec::new, |_| Stage::arg_names()),
        ]
        .concat()
    }

    /// Each core's writer runtime args ([`WeightsSend::writer_arg_names`]); `blocks` gives the
    /// first block and the block count the writer takes for a core's work.
    pub(crate) fn writer_args(
        &self,
        node: &NodePlan,
        c: &ConvPlan,
        blocks: impl Fn(&CoreWork) -> [u32; 2],
    ) -> Vec<CoreArgs> {
        node.split
            .work
            .iter()
            .map(|w| {
                let [start, count] = blocks(w);
                let ([output, weights, bias], out_start) = slice_buffers(node, c, w.slice);
                CoreArgs {
                    core: w.core,
                    args: [
                        vec![
                            Arg::BufferAddress(output.to_string()),
                            Arg::Const(start),
                            Arg::Const(count),
                            Arg::Const(out_start),
                            Arg::BufferAddress(weights.to_string()),
                            Arg::BufferAddress(bias.to_string()),
                        ],
                        self.multicast.send_args(w.core),
                        self.stage
                            .as_ref()
                            .map_or_else(Vec::new, |s| s.args(w.core)),
                    ]
                    .concat(),
                }
            })
            .collect()
    }
}

/// `blocks` output blocks' tiles written from CB `out` of `tile`-byte pages to the node's
/// output, `group` at a time (`conv2d/write_block.cpp.tera`).
pub(crate) fn block_writes(
    node: &NodePlan,
    c: &ConvPlan,
    (out, tile): (u32, u32),
    blocks: u32,
) -> Call {
    Call::Loop {
        trips: Trips::Fixed(blocks * c.slice_tiles() / c.group),
        body: vec![
            Call::CbWait {
                cb: out,
                pages: c.group,
            },
            Call::DramWrite {
                buffer: node.output.clone(),
                pages: c.group,
                page_bytes: tile,
                cb: out,
            },
            Call::CbPop {
                cb: out,
                pages: c.group,
            },
        ],
    }
}

/// A conv's writer (`conv2d/writer.cpp.tera`): on each group's sender, the multicast of the
/// weights and bias ([`WeightsSend`]); then each core's output blocks, the
/// tiles of its slice `group` at a time, to the output its slice writes (the kernel IR names
/// the node's: a fused conv's output is placed alike, `plan::fused_convs`); a split unit is
/// `blocks_per_unit` output blocks (1, or the image row's W/32 for the frame conv), of which it
/// writes every `block_step`-th (2: the frame conv's reader writes the others) from the first,
/// or from the second on the frame conv's cores whose reader writes the even blocks
/// ([`ConvPlan::reader_even`]).
pub(crate) fn conv_writer(
    node: &NodePlan,
    c: &ConvPlan,
    compile_args: Vec<CompileArg>,
    (out, tile): (u32, u32),
    (blocks_per_unit, block_step): (u32, u32),
    views: Option<&ViewsAbove>,
) -> Result<Kernel, KirError> {
    let mut send = WeightsSend::of(node, c)?;
    let mut body = std::mem::take(&mut send.body);
    body.append(&mut send.staging);
    let writes = [block_writes(
        node,
        c,
        (out, tile),
        blocks_per_unit / block_step,
    )];
    let mut runtime_arg_names = send.writer_arg_names();
    let mut runtime_args = send.writer_args(node, c, |w| {
        let skip = u32::from(c.reader_even.contains(&w.core));
        [
            w.start * blocks_per_unit + skip,
            (w.count * blocks_per_unit).saturating_sub(skip),
        ]
    });
    let mut compile_args = [
        compile_args,
        send.compile_args.clone(),
        args(&[("block_step", block_step)]),
    ]
    .concat();
    match views {
        // Stages 0 and 1 first, then stage i + 2 before block i.
        Some(views) => {
            views.add_args(
                node,
                &mut compile_args,
                &mut runtime_arg_names,
                &mut runtime_args,
            );
            body.extend(views.prologue(2));
            let staged = views.staged_loops(2, &writes);
            if staged.is_empty() {
                body.push(blocks(Trips::Blocks, writes.to_vec()));
            } else {
                body.extend(staged);
                body.push(blocks(
                    Trips::LaterBlocks(views.staged_blocks(2)),
                    writes.to_vec(),
                ));
            }
            body.extend(views.missing_stages(2));
            body.push(views.epilogue());
        }
        None => body.push(blocks(Trips::Blocks, writes.to_vec())),
    }
    Ok(Kernel {
        role: Role::Writer,
        template: "conv2d/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args,
        runtime_arg_names,
        runtime_args,
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body,
    })
}

/// The conv reader after the weights and bias fill ([`Multicast::fill`]): a zero tile; then a
/// ring of input pixel blocks that reads each block the core's taps touch once (a prologue of
/// `ring_blocks`, then the next block after each output block's im2col tiles but the last's),
/// and per output block the im2col tiles by L1 → L1 row-run copies, pushed a hand-off at a time
/// as they are built ([`ConvPlan::im2col_handoff_tiles`]),
/// or for channel counts that are not whole tiles, zero tiles plus an element gather of the
/// `taps × in_channels` valid columns; or with shifted views ([`ConvPlan::shifted`]) a zeroed
/// ring slot, the views of each block (built in the ring from face rows), the whole ring pushed
/// once for the compute to read and one data-less `cb_im2col` page per output block (with whole
/// blocks a row the push comes once the first block's tap rows 0 and 1 are built, and the core's
/// first W/32 blocks, a [`Trips::FirstBlocks`] loop, build the rows above and beside the next).
///
/// With the writer's views of the row above (`above`, [`ViewsAbove`]), the reader leaves that
/// row to the writer: it signals it once its first reads are in, and waits for each view before
/// the page that promises it (the rest after its block loop).
///
/// The reader pushes the weights' rounds after the first in its first block ([`streams_rounds`],
/// `rounds`: a [`Trips::FirstBlocks`] loop of one block; with shifted views and whole blocks a
/// row followed by a [`Trips::BlocksBetween`] loop over the other blocks that build the rows
/// above and beside): without shifted views each before the first im2col hand-off whose K
/// steps need it, the rest after its hand-offs; with them, while the block's reads travel, the
/// rounds of tap rows 0 and 1 (which the compute reads before it waits for the block's page),
/// then the page, then the others.
fn conv_reader_body(
    c: &ConvPlan,
    input: &str,
    cbs: [u32; 3],
    above: Option<&ViewsAbove>,
    rounds: &mut Rounds,
) -> Vec<Call> {
    let [im2col, ring, zero] = cbs;
    let ring_calls = RingCalls { c, input, ring };
    let fetch = |blocks: u32| ring_calls.fetch(blocks);
    let mut body = vec![
        Call::CbReserve { cb: zero, pages: 1 },
        // `zero_fill`: 64 zero bytes stored, doubled by local NoC copies.
        Call::L1Gather { bytes: 64 },
        Call::L1Copy {
            from: zero,
            cb: zero,
            tiles: 1,
            row_bytes: 64,
            transfers: fill_copies(c.tile_bytes),
        },
        Call::CbReserve {
            cb: ring,
            pages: c.ring_pages(),
        },
    ];
    if c.shifted {
        // The core's blocks and `beyond` + 1 either side, at most, are read (`beyond` either
        // side get views: W/32, one more with half rows), however the prologue and the loop
        // share them.
        let beyond = c.width / 32 + u32::from(c.half_rows());
        let moves = |blocks: u32| ring_calls.moves(blocks);
        let fixes = |blocks: u32| ring_calls.fixes(blocks);
        // With half rows, the half parts of the core's blocks, W/32 before and W/32 + 1 after:
        // face pairs (half tiles) of the views.
        let halves = |blocks: u32| Call::L1Copy {
            from: ring,
            cb: ring,
            tiles: blocks * 3 * c.in_tiles,
            row_bytes: c.tile_bytes / 2,
            transfers: blocks * 2 * 3 * c.in_tiles,
        };
        body.extend([
            // `zero_fill` of the zero slot.
            Call::L1Gather { bytes: 64 },
            Call::L1Copy {
                from: ring,
                cb: ring,
                tiles: 3 * c.in_tiles,
                row_bytes: 64,
                transfers: fill_copies(3 * c.in_tiles * c.tile_bytes),
            },
        ]);
        // A block's reads (`fetched` blocks), views started and finished, its page pushed; in
        // the core's first block (`landed`) the weights' rounds of tap rows 0 and 1 before the
        // page, the others after it; in a catch-up block (more than its own view to finish)
        // with the writer's views above, the wait for the one its page promises.
        let step = |[fetched, started, finished]: [u32; 3],
                    landed: &mut dyn FnMut(u32) -> Vec<Call>| {
            let mut step = vec![
                Call::CbReserve {
                    cb: im2col,
                    pages: c.im2col_pages(),
                },
                fetch(fetched),
                moves(started),
                fixes(finished),
            ];
            if c.half_rows() {
                step.push(halves(1));
            }
            step.extend(landed(2 * 3 * c.in_tiles * c.slice_tiles()));
            if let Some(above) = above.filter(|_| finished > 1) {
                step.extend(above.finished());
            }
            step.push(Call::CbPush {
                cb: im2col,
                pages: c.im2col_pages(),
            });
            step.extend(landed(u32::MAX));
            step
        };
        let none = &mut |_| Vec::new();
        if c.half_rows() {
            body.extend([
                fetch(2 * beyond + 2),
                moves(2 * beyond),
                fixes(2 * beyond),
                halves(2 * (c.width / 32) + 1),
                Call::CbPush {
                    cb: ring,
                    pages: c.ring_pages(),
                },
            ]);
            body.extend(first_and_later(
                step([1; 3], &mut |tiles| rounds.holding(tiles)),
                step([1; 3], none),
            ));
        } else {
            // Before the push (conv2d/reader.cpp.tera's three pipelines): the first blocks
            // above, beside and below the core's read (min(W/32, 4), as many and 3), the views
            // of the first two above and beside and the first below started, those of the first
            // above and beside finished. In block i of the core's first W/32 (`catch_up`), its
            // own pipeline's read, start and finish, and the trailing pipelines' above and
            // beside each: a read while i < W/32 − 4, a start while i < W/32 − 2, a finish
            // while i < W/32 − 1; then one of each a block. Reads before the push count one
            // fewer (the last block reads none): exact totals.
            // With the writer's views above, the pipeline above is the writer's: the reader
            // reads and builds one trailing range, signals the writer after its first reads and
            // waits for the writer's first view before the push.
            let rb = beyond;
            let trailing_ranges = if above.is_some() { 1 } else { 2 };
            let trailing =
                |i: u32| [4, 2, 1].map(|ahead| 1 + trailing_ranges * u32::from(i + ahead < rb));
            body.push(fetch(trailing_ranges * rb.min(4) + 2));
            if let Some(above) = above {
                body.extend(above.ready());
            }
            body.extend([
                moves(trailing_ranges * rb.min(2) + 1),
                fixes(trailing_ranges),
            ]);
            if let Some(above) = above {
                body.extend(above.finished());
            }
            body.push(Call::CbPush {
                cb: ring,
                pages: c.ring_pages(),
            });
            // Runs of blocks [from, to) that do the same; the core's first block also pushes
            // the weights' later rounds (its own loop when that makes it differ).
            let last = rb.saturating_sub(1);
            let mut bounds: Vec<u32> = [0, rb.saturating_sub(4), rb.saturating_sub(2), last]
                .into_iter()
                .filter(|b| *b < rb)
                .collect();
            bounds.dedup();
            let first = step(trailing(0), &mut |tiles| rounds.holding(tiles));
            let own_first = first != step(trailing(0), none);
            if own_first {
                body.push(blocks(Trips::FirstBlocks(1), first));
            }
            for (n, &from) in bounds.iter().enumerate() {
                let to = bounds.get(n + 1).copied().unwrap_or(rb);
                let from_here = if own_first { from.max(1) } else { from };
                if trailing(from) == [1; 3] || from_here >= to {
                    continue;
                }
                let trips = if from_here == 0 {
                    Trips::FirstBlocks(to)
                } else {
                    Trips::BlocksBetween(from_here, to)
                };
                body.push(blocks(trips, step(trailing(from), none)));
            }
            let later_from = last.max(u32::from(own_first));
            body.push(blocks(Trips::LaterBlocks(later_from), step([1; 3], none)));
            if let Some(above) = above {
                body.push(above.finished_after());
            }
        }
        return body;
    }
    // At most; the blocks outside the image are skipped. The prologue reads `ring_blocks`
    // and each output block but the last the next: counted here as `ring_blocks − 1` and
    // one per output block, the same total.
    if c.ring_blocks() > 1 {
        body.push(fetch(c.ring_blocks() - 1));
    }
    // The im2col tiles pushed as they are built (in the first block after the weights' rounds
    // their K steps need, `landed`), then the ring's next block fetched.
    let handoff = c.im2col_handoff_tiles();
    let push = Call::CbPush {
        cb: im2col,
        pages: handoff,
    };
    let block = |landed: &mut dyn FnMut(u32) -> Vec<Call>| {
        let mut block = vec![Call::CbReserve {
            cb: im2col,
            pages: c.k_tiles,
        }];
        if c.copies_rows() {
            let copy = row_run_copies(c, ring, im2col);
            let count = c.k_tiles / handoff;
            let rounds: Vec<Vec<Call>> = (1..=count)
                .map(|h| landed(h * handoff * c.slice_tiles()))
                .collect();
            if rounds.iter().all(Vec::is_empty) {
                block.push(Call::Loop {
                    trips: Trips::Fixed(count),
                    body: [copy, vec![push.clone()]].concat(),
                });
            } else {
                for landed in rounds {
                    block.extend(copy.iter().cloned());
                    block.extend(landed);
                    block.push(push.clone());
                }
            }
        } else {
            let element_bytes = c.tile_bytes / 1024;
            block.extend([
                Call::L1Copy {
                    from: zero,
                    cb: im2col,
                    tiles: c.k_tiles,
                    row_bytes: c.tile_bytes / 64,
                    transfers: c.k_tiles,
                },
                Call::L1Gather {
                    bytes: 32 * c.kernel * c.kernel * c.in_channels * element_bytes,
                },
                push.clone(),
            ]);
        }
        block.extend(landed(u32::MAX));
        block.push(fetch(1));
        block
    };
    body.extend(first_and_later(
        block(&mut |tiles| rounds.holding(tiles)),
        block(&mut |_| Vec::new()),
    ));
    body
}

/// The L1 → L1 copies of one row-run hand-off ([`ConvPlan::im2col_handoff_tiles`] tiles of
/// CB `im2col` from the ring, `conv2d/reader.cpp.tera`'s `copy_rows`), as the reader issues
/// them: a 1×1 conv's channel tile is one whole-tile read; a tap's channel tiles come by runs of
/// rows, each run split where it crosses a face on either side (about two reads a tile, half a
/// tile each); a 3×3 pad-1 tap row is its middle tap so, its two side taps each one read of
/// the middle moved by a face row, and per side and channel tile the first or last row of both
/// face rows fixed in both halves (4 reads of a row each).
fn row_run_copies(c: &ConvPlan, ring: u32, im2col: u32) -> Vec<Call> {
    let copy = |tiles: u32, transfers: u32| Call::L1Copy {
        from: ring,
        cb: im2col,
        tiles,
        row_bytes: c.tile_bytes / 64,
        transfers,
    };
    if c.kernel == 1 {
        vec![copy(1, 1)]
    } else if c.kernel == 3 && c.pad == 1 {
        vec![
            copy(c.in_tiles, 2 * c.in_tiles),
            copy(2 * c.in_tiles, 2),
            copy(0, 2 * 4 * c.in_tiles),
        ]
    } else {
        vec![copy(c.in_tiles, 2 * c.in_tiles)]
    }
}

/// A block loop whose first block does `first` and the others `later`: one loop when they are
/// the same (no round left to push in the first block).
fn first_and_later(first: Vec<Call>, later: Vec<Call>) -> Vec<Call> {
    if first == later {
        vec![blocks(Trips::Blocks, later)]
    } else {
        vec![
            blocks(Trips::FirstBlocks(1), first),
            blocks(Trips::LaterBlocks(1), later),
        ]
    }
}

fn conv_kernels(node: &NodePlan, c: &ConvPlan) -> Result<Vec<Kernel>, KirError> {
    if c.frame_rows {
        return frame_conv::kernels(node, c);
    }
    let input = input(node, 0)?;
    let im2col = cb_id(node, "cb_im2col")?;
    let ring = cb_id(node, "cb_ring")?;
    let zero = cb_id(node, "cb_zero")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_format(node, "cb_im2col")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let residents = conv_residents(node, c)?;
    let multicast = Multicast::of(node, &residents)?;
    let views = ViewsAbove::of(node, c, &input, ring)?;
    let shape = args(&[
        ("in_channels", c.in_channels),
        ("height", c.height),
        ("width", c.width),
        ("kernel", c.kernel),
        ("pad", c.pad),
        ("in_tiles", c.in_tiles),
        ("k_tiles", c.k_tiles),
        ("out_tiles", c.out_tiles),
        ("slice_tiles", c.slice_tiles()),
        ("group", c.group),
        ("ring_reach", c.ring_reach),
        ("relu", u32::from(c.relu)),
        tile_bytes,
        fp32,
        ("weight_parts", c.weight_parts),
        ("weight_page_tiles", c.weight_page_tiles),
    ]);
    let ring_args = args(&[
        ("ring_blocks", c.ring_blocks()),
        ("shifted", u32::from(c.shifted)),
        ("im2col_handoff", c.im2col_handoff_tiles()),
    ]);
    let mut reader = Kernel {
        role: Role::Reader,
        template: "conv2d/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: [shape.clone(), ring_args.clone()].concat(),
        runtime_arg_names: names(&[
            "input_addr",
            "weight_addr",
            "bias_addr",
            "block_start",
            "block_count",
        ]),
        runtime_args: reader_args(node, c, &input),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: conv_reader_body(
            c,
            &input,
            [im2col, ring, zero],
            views.as_ref(),
            &mut Rounds::after_prologue(&multicast, &residents, c),
        ),
    };
    add_conv_weights_fill(&mut reader, node, c)?;
    if c.pooled {
        return conv_pool::kernels(node, c, reader, [shape, ring_args].concat(), views.as_ref());
    }
    let identity = identity_cb(node, c)?;
    // The first block waits for the weights' rounds as its K steps need them.
    let first = conv_streamed_block(
        c,
        im2col,
        out,
        0,
        Vec::new(),
        &weight_waits(c, cb_id(node, "cb_weights")?),
    );
    let later = conv_streamed_block(c, im2col, out, 0, Vec::new(), &[]);
    let compute = conv_compute(
        node,
        c,
        "conv2d/compute.cpp.tera",
        [shape.clone(), ring_args].concat(),
        holding_identity(
            identity,
            vec![
                blocks(Trips::FirstBlocks(1), first),
                blocks(Trips::LaterBlocks(1), later),
            ],
        ),
        true,
    )?;
    let writer = conv_writer(node, c, shape, (out, tile), (1, 1), views.as_ref())?;
    Ok(vec![reader, compute, writer])
}
