//! Kernel IR: per node, the reader / compute / writer programs on its core ranges as typed calls
//! (CB operations, DRAM transfers, DST blocks and tile ops), with their compile-time args and
//! per-core runtime args.
//!
//! The calls describe what the template of each kernel does, loop by loop; the checks
//! ([`crate::check`]) and the report read them, the templates implement them. The emulator tests
//! execute the rendered kernels, so a template that drifts from its calls fails there.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Core, CoreRange, Format, Precision};
use crate::multicast::{Multicast, Resident};
use crate::ops;
use crate::plan::{CbPlan, ConvPlan, CoreWork, NodePlan, OpPlan, Plan, PoolPlan};

/// What cannot be lowered to kernel IR.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum KirError {
    #[error(transparent)]
    Arena(#[from] crate::arena::ArenaError),
    #[error("node `{node}`: CB `{cb}` is used by the kernels but not planned")]
    MissingCb { node: String, cb: &'static str },
    #[error("node `{node}`: input {index} is not in the plan (the node has {count} inputs)")]
    MissingInput {
        node: String,
        index: usize,
        count: usize,
    },
    #[error("node `{node}`: buffer `{buffer}` is not in the plan")]
    MissingBuffer { node: String, buffer: String },
    #[error("node `{0}`: the split has no cores")]
    NoCores(String),
    #[error("node `{node}`: the multicast destinations form {rects} rectangles but the kernels take at most {max}; split the node over the first cores of the grid")]
    MulticastRects {
        node: String,
        rects: usize,
        max: usize,
    },
    #[error("node `{node}`: its multicast groups have {receivers:?} receivers; the kernels wait for the same number in every group (give the slices equal numbers of cores)")]
    UnequalGroups { node: String, receivers: Vec<u32> },
}

/// The processor a kernel runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Reader,
    Compute,
    Writer,
}

impl Role {
    /// The role's name in file names and templates.
    pub fn name(self) -> &'static str {
        match self {
            Role::Reader => "reader",
            Role::Compute => "compute",
            Role::Writer => "writer",
        }
    }
}

/// A runtime arg value: a constant, the device address of a buffer (known at allocation), or a
/// NoC coordinate of the worker at a logical core (known to the device, not to the compiler).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    Const(u32),
    BufferAddress(String),
    NocX(Core),
    NocY(Core),
}

/// A named compile-time arg.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompileArg {
    pub name: String,
    pub value: u32,
}

/// One core's runtime args, in the order of the kernel's `runtime_arg_names`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreArgs {
    pub core: Core,
    pub args: Vec<Arg>,
}

/// How many times a loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trips {
    Fixed(u32),
    /// The core's number of output blocks.
    Blocks,
    /// Items whose number is read at run time from the node's [`CountSource`]; at most its
    /// bound for the core's output blocks, which is what the checks and the report use.
    Counted,
    /// Once on each of the node's multicast senders ([`NodeKir::senders`]), never on the
    /// other cores.
    OnSender,
    /// Once on every core of the node but the multicast senders.
    OnReceivers,
    /// The core's output blocks in whole units of this many (a conv with its pool fused loops
    /// over pairs of image rows, and writes a quarter of its blocks' pixels).
    Units(u32),
}

/// What the loops of a kernel run over on one core: its output blocks, the trips of its
/// [`Trips::Counted`] loops, and whether it is the node's multicast sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnCore {
    pub blocks: u32,
    /// At most the [`CountSource`] bound of `blocks`; the bound itself (the worst case) unless
    /// a run's counts are known.
    pub counted: u32,
    pub sender: bool,
}

/// Where the trips of a node's [`Trips::Counted`] loops come from at run time: core `i` of the
/// split reads page `i` of `buffer` (`page_bytes` each), whose first little-endian `u32` is an
/// item count, clamps it to the core's capacity (`per_block` trips per output block) and runs
/// one trip per `per_trip` items or part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountSource {
    pub buffer: String,
    pub page_bytes: u32,
    pub per_trip: u32,
    pub per_block: u32,
}

impl CountSource {
    /// The trips on a core of `blocks` output blocks whose count page starts with `count`.
    pub fn trips(&self, count: u32, blocks: u32) -> u32 {
        count.div_ceil(self.per_trip.max(1)).min(self.bound(blocks))
    }

    /// The most trips a core of `blocks` output blocks can run.
    pub fn bound(&self, blocks: u32) -> u32 {
        blocks.saturating_mul(self.per_block)
    }
}

/// An SFPU operation on DST tiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SfpuOp {
    Max,
    Exp,
    Recip,
    Rsqrt,
    /// Add (or subtract) a scalar.
    AddScalar,
    MulScalar,
    /// Clamp to [0, a bound].
    ReluMax,
    /// Add / subtract two DST tiles.
    AddBinary,
    SubBinary,
    /// IEEE equality of two DST tiles: 1.0 or 0.0.
    Eq,
    /// Select between two DST tiles by a third's 32-bit words.
    Where,
}

/// A reduction of each tile row into column 0 of one DST tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceOp {
    MaxRow,
    SumRow,
}

/// An element-wise operation of two CB tiles into DST (the `*BcastCols` forms take column 0 of
/// the second operand for every column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    Mul,
    SubBcastCols,
    MulBcastCols,
}

/// One typed step of a kernel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    Loop {
        trips: Trips,
        body: Vec<Call>,
    },
    CbReserve {
        cb: u32,
        pages: u32,
    },
    CbPush {
        cb: u32,
        pages: u32,
    },
    CbWait {
        cb: u32,
        pages: u32,
    },
    CbPop {
        cb: u32,
        pages: u32,
    },
    /// `pages` interleaved pages of `buffer` read into CB `cb` (NoC, DRAM → L1).
    DramRead {
        buffer: String,
        pages: u32,
        page_bytes: u32,
        cb: u32,
    },
    /// `pages` pages from CB `cb` to `buffer` (NoC, L1 → DRAM).
    DramWrite {
        buffer: String,
        pages: u32,
        page_bytes: u32,
        cb: u32,
    },
    /// The data-movement core rearranges `bytes` inside L1 (im2col, pool taps).
    L1Gather {
        bytes: u32,
    },
    /// `tiles` pages of CB `cb` built by NoC reads inside the core's own L1 (from CB `from`
    /// and a zero tile), each a whole number of `row_bytes`-byte rows at offsets that are
    /// multiples of `row_bytes`; no RISC-V element loop.
    L1Copy {
        from: u32,
        cb: u32,
        tiles: u32,
        row_bytes: u32,
    },
    /// `transfers` NoC transfers of `bytes` bytes between pages of `buffer` and CB `cb` (DRAM →
    /// L1, or L1 → DRAM when `write`), each at an offset within its page that is a multiple of
    /// `offset_step` (0: at the page start, which the interleaved allocator aligns).
    DramPart {
        buffer: String,
        write: bool,
        transfers: u32,
        bytes: u32,
        offset_step: u32,
        cb: u32,
    },
    /// `tile_regs_acquire` … `tile_regs_release` using DST tiles `0..tiles`.
    Dst {
        tiles: u32,
        body: Vec<Call>,
    },
    Matmul {
        ct: u32,
        rt: u32,
        kt: u32,
    },
    Copy {
        tiles: u32,
    },
    Sfpu {
        op: SfpuOp,
        tiles: u32,
    },
    /// `reduce_tile` of `tiles` CB tiles accumulated into one DST tile.
    Reduce {
        op: ReduceOp,
        tiles: u32,
    },
    /// `tiles` element-wise operations of CB tiles into DST tiles.
    Binary {
        op: BinaryOp,
        tiles: u32,
    },
    Pack {
        cb: u32,
        tiles: u32,
    },
    /// `transpose_tile` of `tiles` CB tiles into DST (the unpacker's transposed datacopy).
    Transpose {
        tiles: u32,
    },
    /// `pages` pages of CB `cb` multicast from its write pointer to the same address on `dests`
    /// other cores of the node, one NoC multicast per destination rectangle (`rects`).
    McastWrite {
        cb: u32,
        pages: u32,
        page_bytes: u32,
        dests: u32,
        rects: u32,
    },
    /// `noc_semaphore_set` of the core's own semaphore `sem`.
    SemSet {
        sem: u32,
        value: u32,
    },
    /// `noc_semaphore_wait` until the core's own semaphore `sem` equals `value`
    /// (`noc_semaphore_wait_min`, NMS: at least `value`, which is where it stops).
    SemWait {
        sem: u32,
        value: u32,
    },
    /// `noc_semaphore_inc` by one of semaphore `sem` on the node's multicast sender, or (NMS)
    /// on the core itself or a neighbour ([`crate::ops::nms`]).
    SemInc {
        sem: u32,
    },
    /// `noc_semaphore_set_multicast` of semaphore `sem` to `dests` other cores of the node, one
    /// per destination rectangle (`rects`).
    SemMcast {
        sem: u32,
        dests: u32,
        rects: u32,
    },
}

/// One kernel of a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kernel {
    pub role: Role,
    /// Template path under `templates/`.
    pub template: String,
    pub ranges: Vec<CoreRange>,
    pub compile_args: Vec<CompileArg>,
    pub runtime_arg_names: Vec<String>,
    pub runtime_args: Vec<CoreArgs>,
    /// Compute kernels only: fidelity and DST mode.
    pub precision: Option<Precision>,
    /// Compute kernels only: the CB ids whose tiles tt-metal unpacks straight into the fp32 DST
    /// (`UnpackToDestMode::UnpackToDestFp32`): Float32 CBs the kernel copies or transposes into
    /// DST and must keep exact, which through SrcA would be cut to TF32 ([`exact_fp32_copies`]).
    /// The matrix unit cannot read such a CB.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpack_to_dest_fp32: Vec<u32>,
    pub body: Vec<Call>,
}

/// A node's program in kernel IR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeKir {
    pub node: String,
    pub op: String,
    pub ranges: Vec<CoreRange>,
    pub cbs: Vec<CbPlan>,
    pub semaphores: u32,
    /// Output blocks per core, for resolving [`Trips::Blocks`], in split order.
    pub blocks: Vec<(Core, u32)>,
    /// The multicast senders ([`Trips::OnSender`]), one per group of cores
    /// ([`crate::multicast`]): the first core of the split unless the split has slices.
    pub senders: Vec<Core>,
    /// The run-time source of its [`Trips::Counted`] loops, if it has any.
    pub counted: Option<CountSource>,
    pub kernels: Vec<Kernel>,
}

impl NodeKir {
    /// The planned CB called `name`.
    pub fn cb(&self, name: &str) -> Option<&CbPlan> {
        self.cbs.iter().find(|c| c.name == name)
    }

    /// Every core of the node with what its loops run over, the counted loops at their bound
    /// (the worst case).
    pub fn cores(&self) -> impl Iterator<Item = (Core, OnCore)> + '_ {
        self.blocks.iter().map(|(core, blocks)| {
            (
                *core,
                OnCore {
                    blocks: *blocks,
                    counted: self.counted.as_ref().map_or(*blocks, |c| c.bound(*blocks)),
                    sender: self.senders.contains(core),
                },
            )
        })
    }
}

/// The kernel IR of every node, in launch order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kir {
    pub nodes: Vec<NodeKir>,
    /// The activation buffers in L1 ([`crate::arena::place`]; empty until placed).
    #[serde(default)]
    pub arena: crate::arena::Arena,
}

/// Calls each call with how many times it runs on core `on` (zero for a branch the core skips).
pub fn walk(calls: &[Call], on: OnCore, times: u64, f: &mut impl FnMut(&Call, u64)) {
    for call in calls {
        f(call, times);
        match call {
            Call::Loop { trips, body } => {
                let n = match trips {
                    Trips::Fixed(n) => *n,
                    Trips::Blocks => on.blocks,
                    Trips::Counted => on.counted,
                    Trips::OnSender => u32::from(on.sender),
                    Trips::OnReceivers => u32::from(!on.sender),
                    Trips::Units(n) => on.blocks / (*n).max(1),
                };
                walk(body, on, times * u64::from(n), f);
            }
            Call::Dst { body, .. } => walk(body, on, times, f),
            _ => {}
        }
    }
}

/// The buffer name of input `index` of `node`.
pub fn input(node: &NodePlan, index: usize) -> Result<String, KirError> {
    node.inputs
        .get(index)
        .cloned()
        .ok_or_else(|| KirError::MissingInput {
            node: node.name.clone(),
            index,
            count: node.inputs.len(),
        })
}

/// The ids of the Float32 CBs among `names` (a compute kernel's datacopy sources that must stay
/// exact: [`Kernel::unpack_to_dest_fp32`]); bf16 tiles pass SrcA exactly and need no mode.
pub(crate) fn exact_fp32_copies(node: &NodePlan, names: &[&str]) -> Vec<u32> {
    node.cbs
        .iter()
        .filter(|c| c.format == Format::Fp32 && names.contains(&c.name.as_str()))
        .map(|c| c.id)
        .collect()
}

pub(crate) fn cb_id(node: &NodePlan, name: &'static str) -> Result<u32, KirError> {
    cb_plan(node, name).map(|c| c.id)
}

pub(crate) fn cb_plan<'a>(node: &'a NodePlan, name: &'static str) -> Result<&'a CbPlan, KirError> {
    node.cbs
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| KirError::MissingCb {
            node: node.name.clone(),
            cb: name,
        })
}

pub(crate) fn args(pairs: &[(&str, u32)]) -> Vec<CompileArg> {
    pairs
        .iter()
        .map(|(name, value)| CompileArg {
            name: name.to_string(),
            value: *value,
        })
        .collect()
}

/// The compile args of a kernel touching activations of `format` (the template convention):
/// `tile_bytes` (2048 or 4096) and `fp32` (0 or 1).
pub(crate) fn format_args(format: Format) -> [(&'static str, u32); 2] {
    [
        ("tile_bytes", format.tile_bytes()),
        ("fp32", u32::from(format == Format::Fp32)),
    ]
}

/// The format of CB `name` of `node`.
pub(crate) fn cb_format(node: &NodePlan, name: &'static str) -> Result<Format, KirError> {
    node.cbs
        .iter()
        .find(|c| c.name == name)
        .map(|c| c.format)
        .ok_or_else(|| KirError::MissingCb {
            node: node.name.clone(),
            cb: name,
        })
}

pub(crate) fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

pub(crate) fn per_core(node: &NodePlan, f: impl Fn(u32, u32) -> Vec<Arg>) -> Vec<CoreArgs> {
    node.split
        .work
        .iter()
        .map(|w| CoreArgs {
            core: w.core,
            args: f(w.start, w.count),
        })
        .collect()
}

/// `fill_words` (`common/zero_fill.cpp.tera`) of `pages` pages of CB `cb`, one call each: 64
/// bytes stored, doubled by local NoC copies.
pub(crate) fn filled_pages(cb: u32, pages: u32) -> [Call; 2] {
    [
        Call::L1Gather { bytes: 64 * pages },
        Call::L1Copy {
            from: cb,
            cb,
            tiles: pages,
            row_bytes: 64,
        },
    ]
}

/// `fill_reduce_scaler` (`common/reduce_scaler.cpp.tera`) of CB `cb`: a zeroed bf16 tile and
/// 8 words of 1.0 pairs per face.
pub(crate) fn reduce_scaler(cb: u32) -> Vec<Call> {
    let mut calls = filled_pages(cb, 1).to_vec();
    calls.push(Call::L1Gather { bytes: 4 * 8 * 4 });
    calls
}

pub(crate) fn blocks(trips: Trips, body: Vec<Call>) -> Call {
    Call::Loop { trips, body }
}

/// The first output tile of `core`'s slice of conv `c` ([`crate::plan::Split::slices`]).
fn out_start(node: &NodePlan, c: &ConvPlan, core: Core) -> u32 {
    node.split
        .work
        .iter()
        .find(|w| w.core == core)
        .map_or(0, |w| w.slice * c.slice_tiles())
}

/// A conv's resident CBs: its weights and bias ([`Multicast`]).
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

/// The weights and bias fill of a conv's reader ([`Multicast::fill`]; the sender's writer
/// multicasts them, [`conv_writer`]): its runtime args (the multicast's, then `out_start`, the
/// first output tile of the core's slice) appended, its calls first.
pub(crate) fn add_conv_weights_fill(
    reader: &mut Kernel,
    node: &NodePlan,
    c: &ConvPlan,
) -> Result<(), KirError> {
    let multicast = Multicast::of(node)?;
    reader.compile_args.extend(multicast.compile_args());
    reader.runtime_arg_names.extend(Multicast::arg_names());
    reader.runtime_arg_names.push("out_start".to_string());
    for core in &mut reader.runtime_args {
        core.args.extend(multicast.args(core.core));
        core.args.push(Arg::Const(out_start(node, c, core.core)));
    }
    reader
        .body
        .splice(0..0, multicast.fill(&conv_residents(node, c)?));
    Ok(())
}

/// One output block of a conv's compute (`conv2d/block.cpp.tera`): per group of the core's
/// slice of output tiles, the bias copy, the matmuls over K and the pack to CB `out` (a fused
/// ReLU is the packer's, configured once per kernel: no SFPU work).
pub(crate) fn conv_block_groups(c: &ConvPlan, out: u32) -> Call {
    conv_block_groups_with(c, out, 0, Vec::new())
}

/// [`conv_block_groups`] with an `epilogue` after each group's matmuls that uses `extra_dst`
/// DST tiles above the group's.
pub(crate) fn conv_block_groups_with(
    c: &ConvPlan,
    out: u32,
    extra_dst: u32,
    epilogue: Vec<Call>,
) -> Call {
    let dst_body = [
        vec![
            Call::Copy { tiles: c.group },
            Call::Loop {
                trips: Trips::Fixed(c.weight_parts * c.k_tiles),
                body: vec![Call::Matmul {
                    ct: c.group,
                    rt: 1,
                    kt: 1,
                }],
            },
        ],
        epilogue,
        vec![Call::Pack {
            cb: out,
            tiles: c.group,
        }],
    ]
    .concat();
    Call::Loop {
        trips: Trips::Fixed(c.slice_tiles() / c.group),
        body: vec![
            Call::CbReserve {
                cb: out,
                pages: c.group,
            },
            Call::Dst {
                tiles: c.group + extra_dst,
                body: dst_body,
            },
            Call::CbPush {
                cb: out,
                pages: c.group,
            },
        ],
    }
}

/// A conv's compute kernel (`template`, with `compile_args`): `body` between waiting for the
/// resident weights and bias (and, with shifted views, the whole ring: the compute holds it for
/// the program) and popping them at the program's end.
pub(crate) fn conv_compute(
    node: &NodePlan,
    c: &ConvPlan,
    template: &str,
    compile_args: Vec<CompileArg>,
    body: Vec<Call>,
) -> Result<Kernel, KirError> {
    let [weights, bias, ring] = ["cb_weights", "cb_bias", "cb_ring"].map(|name| cb_id(node, name));
    let (weights, bias, ring) = (weights?, bias?, ring?);
    let resident = c.resident_weight_tiles();
    let ring_hold = |call: Call| if c.shifted { vec![call] } else { Vec::new() };
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
            vec![
                Call::CbWait {
                    cb: weights,
                    pages: resident,
                },
                Call::CbWait {
                    cb: bias,
                    pages: c.slice_tiles(),
                },
            ],
            ring_hold(Call::CbWait {
                cb: ring,
                pages: c.ring_pages(),
            }),
            body,
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
/// (`conv2d/weights_send.cpp.tera`, [`Multicast::send`]): the compile args it adds, its runtime
/// args after the writer's own, and its calls.
pub(crate) struct WeightsSend {
    multicast: Multicast,
    pub compile_args: Vec<CompileArg>,
    pub body: Vec<Call>,
}

impl WeightsSend {
    pub(crate) fn of(node: &NodePlan, c: &ConvPlan) -> Result<Self, KirError> {
        let multicast = Multicast::of(node)?;
        Ok(WeightsSend {
            compile_args: multicast.compile_args(),
            body: multicast.send(&conv_residents(node, c)?),
            multicast,
        })
    }

    /// The names of [`WeightsSend::writer_args`]: the writer's `output_addr`, `block_start`,
    /// `block_count`, then the first output tile of the core's slice, the weights' and bias's
    /// buffers and the multicast's.
    pub(crate) fn writer_arg_names() -> Vec<String> {
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
                CoreArgs {
                    core: w.core,
                    args: [
                        vec![
                            Arg::BufferAddress(node.output.clone()),
                            Arg::Const(start),
                            Arg::Const(count),
                            Arg::Const(w.slice * c.slice_tiles()),
                            Arg::BufferAddress(c.weights.clone()),
                            Arg::BufferAddress(c.bias.clone()),
                        ],
                        self.multicast.send_args(w.core),
                    ]
                    .concat(),
                }
            })
            .collect()
    }
}

/// A conv's writer (`conv2d/writer.cpp.tera`): on each group's sender, the multicast of the
/// weights and bias ([`WeightsSend`]); then each core's output blocks, the
/// tiles of its slice `group` at a time, to the node's output; a split unit is
/// `blocks_per_unit` output blocks (1, or the image row's W/32 for the frame conv).
pub(crate) fn conv_writer(
    node: &NodePlan,
    c: &ConvPlan,
    compile_args: Vec<CompileArg>,
    out: u32,
    tile: u32,
    blocks_per_unit: u32,
) -> Result<Kernel, KirError> {
    let mut send = WeightsSend::of(node, c)?;
    let mut body = std::mem::take(&mut send.body);
    body.push(blocks(
        Trips::Blocks,
        vec![Call::Loop {
            trips: Trips::Fixed(blocks_per_unit * c.slice_tiles() / c.group),
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
        }],
    ));
    Ok(Kernel {
        role: Role::Writer,
        template: "conv2d/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: [compile_args, send.compile_args.clone()].concat(),
        runtime_arg_names: WeightsSend::writer_arg_names(),
        runtime_args: send.writer_args(node, c, |w| {
            [w.start * blocks_per_unit, w.count * blocks_per_unit]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body,
    })
}

/// The conv reader after the weights and bias fill ([`Multicast::fill`]): a zero tile; then a
/// ring of input pixel blocks that reads each block the core's taps touch once (a prologue of
/// `ring_blocks − 1`, then the next block per output block), and per output block the im2col
/// tiles by L1 → L1 row-run copies,
/// or for channel counts that are not whole tiles, zero tiles plus an element gather of the
/// `taps × in_channels` valid columns; or with shifted views ([`ConvPlan::shifted`]) a zeroed
/// ring slot, the views of each block (built in the ring from face rows), the whole ring pushed
/// once for the compute to read and one data-less `cb_im2col` page per output block.
fn conv_reader_body(c: &ConvPlan, input: &str, cbs: [u32; 3]) -> Vec<Call> {
    let [im2col, ring, zero] = cbs;
    let fetch = |blocks: u32| Call::DramRead {
        buffer: input.to_string(),
        pages: blocks * c.in_tiles,
        page_bytes: c.tile_bytes,
        cb: ring,
    };
    let mut body = vec![
        Call::CbReserve { cb: zero, pages: 1 },
        // `zero_fill`: 64 zero bytes stored, doubled by local NoC copies.
        Call::L1Gather { bytes: 64 },
        Call::L1Copy {
            from: zero,
            cb: zero,
            tiles: 1,
            row_bytes: 64,
        },
        Call::CbReserve {
            cb: ring,
            pages: c.ring_pages(),
        },
    ];
    let mut block = vec![fetch(1)];
    if c.shifted {
        // The core's blocks and `beyond` + 1 either side, at most, are read (`beyond` either
        // side get views: W/32, one more with half rows), however the prologue and the loop
        // share them.
        let beyond = c.width / 32 + u32::from(c.half_rows());
        let views = |blocks: u32| Call::L1Copy {
            from: ring,
            cb: ring,
            tiles: blocks * 2 * c.in_tiles,
            row_bytes: c.tile_bytes / 64,
        };
        // With half rows, the half parts of the core's blocks, W/32 before and W/32 + 1 after:
        // face pairs (half tiles) of the views.
        let halves = |blocks: u32| Call::L1Copy {
            from: ring,
            cb: ring,
            tiles: blocks * 3 * c.in_tiles,
            row_bytes: c.tile_bytes / 2,
        };
        body.extend([
            // `zero_fill` of the zero slot.
            Call::L1Gather { bytes: 64 },
            Call::L1Copy {
                from: ring,
                cb: ring,
                tiles: 3 * c.in_tiles,
                row_bytes: 64,
            },
            fetch(2 * beyond + 2),
            views(2 * beyond),
        ]);
        if c.half_rows() {
            body.push(halves(2 * (c.width / 32) + 1));
        }
        body.push(Call::CbPush {
            cb: ring,
            pages: c.ring_pages(),
        });
        block.insert(
            0,
            Call::CbReserve {
                cb: im2col,
                pages: c.im2col_pages(),
            },
        );
        block.push(views(1));
        if c.half_rows() {
            block.push(halves(1));
        }
    } else {
        // At most; the blocks outside the image are skipped.
        if c.ring_blocks() > 1 {
            body.push(fetch(c.ring_blocks() - 1));
        }
        block.push(Call::CbReserve {
            cb: im2col,
            pages: c.k_tiles,
        });
        if c.copies_rows() {
            block.push(Call::L1Copy {
                from: ring,
                cb: im2col,
                tiles: c.k_tiles,
                row_bytes: c.tile_bytes / 64,
            });
        } else {
            block.push(Call::L1Copy {
                from: zero,
                cb: im2col,
                tiles: c.k_tiles,
                row_bytes: c.tile_bytes / 64,
            });
            let element_bytes = c.tile_bytes / 1024;
            block.push(Call::L1Gather {
                bytes: 32 * c.kernel * c.kernel * c.in_channels * element_bytes,
            });
        }
    }
    block.push(Call::CbPush {
        cb: im2col,
        pages: c.im2col_pages(),
    });
    body.push(blocks(Trips::Blocks, block));
    body
}

fn conv_kernels(node: &NodePlan, c: &ConvPlan) -> Result<Vec<Kernel>, KirError> {
    if c.frame_rows {
        return ops::frame_conv::kernels(node, c);
    }
    let input = input(node, 0)?;
    let im2col = cb_id(node, "cb_im2col")?;
    let ring = cb_id(node, "cb_ring")?;
    let zero = cb_id(node, "cb_zero")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_format(node, "cb_im2col")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
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
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(input.clone()),
                Arg::BufferAddress(c.weights.clone()),
                Arg::BufferAddress(c.bias.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: conv_reader_body(c, &input, [im2col, ring, zero]),
    };
    add_conv_weights_fill(&mut reader, node, c)?;
    if c.pooled {
        return ops::conv_pool::kernels(node, c, reader, [shape, ring_args].concat());
    }
    let compute = conv_compute(
        node,
        c,
        "conv2d/compute.cpp.tera",
        [shape.clone(), ring_args].concat(),
        vec![blocks(
            Trips::Blocks,
            vec![
                Call::CbWait {
                    cb: im2col,
                    pages: c.im2col_pages(),
                },
                conv_block_groups(c, out),
                Call::CbPop {
                    cb: im2col,
                    pages: c.im2col_pages(),
                },
            ],
        )],
    )?;
    let writer = conv_writer(node, c, shape, out, tile, 1)?;
    Ok(vec![reader, compute, writer])
}

fn pool_kernels(node: &NodePlan, p: &PoolPlan) -> Result<Vec<Kernel>, KirError> {
    if p.select {
        return pool_select_kernels(node, p);
    }
    let input = input(node, 0)?;
    let taps = cb_id(node, "cb_taps")?;
    let cache = cb_id(node, "cb_cache")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_format(node, "cb_taps")?;
    let tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("height", p.height),
        ("width", p.width),
        ("in_tiles", p.in_tiles),
        ("cache_slots", p.cache_slots),
        tile_bytes,
        fp32,
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "max_pool2/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(input.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbReserve {
                cb: cache,
                pages: p.cache_slots,
            },
            blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: vec![
                        Call::CbReserve { cb: taps, pages: 4 },
                        // Without cache hits every tap row reads its tile; the count is the worst case.
                        Call::DramRead {
                            buffer: input.clone(),
                            pages: 4,
                            page_bytes: tile,
                            cb: cache,
                        },
                        Call::L1Gather { bytes: 4 * tile },
                        Call::CbPush { cb: taps, pages: 4 },
                    ],
                }],
            ),
        ],
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "max_pool2/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["block_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(node, &["cb_taps"]),
        body: vec![blocks(
            Trips::Blocks,
            vec![Call::Loop {
                trips: Trips::Fixed(p.in_tiles),
                body: vec![
                    Call::CbWait { cb: taps, pages: 4 },
                    Call::CbReserve { cb: out, pages: 1 },
                    Call::Dst {
                        tiles: 2,
                        body: vec![
                            Call::Copy { tiles: 4 },
                            Call::Sfpu {
                                op: SfpuOp::Max,
                                tiles: 3,
                            },
                            Call::Pack { cb: out, tiles: 1 },
                        ],
                    },
                    Call::CbPush { cb: out, pages: 1 },
                    Call::CbPop { cb: taps, pages: 4 },
                ],
            }],
        )],
    };
    let writer = pool_writer(node, p, shape)?;
    Ok(vec![reader, compute, writer])
}

/// The pool writer: output tile (block, channel tile) to page `block · in_tiles + channel tile`.
fn pool_writer(node: &NodePlan, p: &PoolPlan, shape: Vec<CompileArg>) -> Result<Kernel, KirError> {
    let out = cb_id(node, "cb_out")?;
    let tile = cb_format(node, "cb_out")?.tile_bytes();
    Ok(Kernel {
        role: Role::Writer,
        template: "max_pool2/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: names(&["output_addr", "block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![pooled_writes(node, out, tile, p.in_tiles, Trips::Blocks)],
    })
}

/// The pooled tiles' writes (`max_pool2/write_tiles.cpp.tera`): `trips` output blocks of
/// `in_tiles` tiles of CB `out`, one tile at a time.
pub(crate) fn pooled_writes(
    node: &NodePlan,
    out: u32,
    tile: u32,
    in_tiles: u32,
    trips: Trips,
) -> Call {
    blocks(
        trips,
        vec![Call::Loop {
            trips: Trips::Fixed(in_tiles),
            body: vec![
                Call::CbWait { cb: out, pages: 1 },
                Call::DramWrite {
                    buffer: node.output.clone(),
                    pages: 1,
                    page_bytes: tile,
                    cb: out,
                },
                Call::CbPop { cb: out, pages: 1 },
            ],
        }],
    )
}

/// The four 0/1 selection tiles of CB `select` (`max_pool2/selection.cpp.tera`): 64 zero bytes
/// stored and doubled by local NoC copies, then 64 bf16 ones stored.
pub(crate) fn selection_fill(select: u32) -> Vec<Call> {
    vec![
        Call::CbReserve {
            cb: select,
            pages: 4,
        },
        Call::L1Gather { bytes: 64 + 64 * 2 },
        Call::L1Copy {
            from: select,
            cb: select,
            tiles: 4,
            row_bytes: 64,
        },
        Call::CbPush {
            cb: select,
            pages: 4,
        },
    ]
}

/// One output tile pooled from two vertical-maximum tiles (`max_pool2/select_tile.cpp.tera`):
/// four selection matmuls, the SFPU maximum of the two taps, the pack to CB `out`.
pub(crate) fn select_tile(out: u32) -> Vec<Call> {
    vec![
        Call::CbReserve { cb: out, pages: 1 },
        Call::Dst {
            tiles: 2,
            body: vec![
                Call::Loop {
                    trips: Trips::Fixed(4),
                    body: vec![Call::Matmul {
                        ct: 1,
                        rt: 1,
                        kt: 1,
                    }],
                },
                Call::Sfpu {
                    op: SfpuOp::Max,
                    tiles: 1,
                },
                Call::Pack { cb: out, tiles: 1 },
            ],
        },
        Call::CbPush { cb: out, pages: 1 },
    ]
}

/// Pooling by row-selection matmuls ([`PoolPlan::select`]): the reader writes the four 0/1
/// selection tiles once (zeroed by local NoC copies of 64 stored zero bytes) and streams the
/// four input tiles of each output tile; the compute kernel takes the SFPU maximum of the two
/// input rows of each half (through `cb_vmax`), forms each horizontal tap of it with two exact
/// matmuls and takes the maximum of the two.
fn pool_select_kernels(node: &NodePlan, p: &PoolPlan) -> Result<Vec<Kernel>, KirError> {
    let input = input(node, 0)?;
    let src = cb_id(node, "cb_src")?;
    let select = cb_id(node, "cb_select")?;
    let vmax = cb_id(node, "cb_vmax")?;
    let out = cb_id(node, "cb_out")?;
    let [tile_bytes, fp32] = format_args(cb_format(node, "cb_src")?);
    let shape = args(&[
        ("height", p.height),
        ("width", p.width),
        ("in_tiles", p.in_tiles),
        tile_bytes,
        fp32,
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "max_pool2/select_reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "block_start", "block_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(input.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            selection_fill(select),
            vec![blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: vec![
                        Call::CbReserve { cb: src, pages: 4 },
                        Call::DramRead {
                            buffer: input.clone(),
                            pages: 4,
                            page_bytes: 2048,
                            cb: src,
                        },
                        Call::CbPush { cb: src, pages: 4 },
                    ],
                }],
            )],
        ]
        .concat(),
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "max_pool2/select_compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["block_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbWait {
                cb: select,
                pages: 4,
            },
            blocks(
                Trips::Blocks,
                vec![Call::Loop {
                    trips: Trips::Fixed(p.in_tiles),
                    body: [
                        vec![
                            Call::CbWait { cb: src, pages: 4 },
                            Call::CbReserve { cb: vmax, pages: 2 },
                            Call::Dst {
                                tiles: 4,
                                body: vec![
                                    Call::Copy { tiles: 4 },
                                    Call::Sfpu {
                                        op: SfpuOp::Max,
                                        tiles: 2,
                                    },
                                    Call::Pack { cb: vmax, tiles: 2 },
                                ],
                            },
                            Call::CbPush { cb: vmax, pages: 2 },
                            Call::CbPop { cb: src, pages: 4 },
                            Call::CbWait { cb: vmax, pages: 2 },
                        ],
                        select_tile(out),
                        vec![Call::CbPop { cb: vmax, pages: 2 }],
                    ]
                    .concat(),
                }],
            ),
            Call::CbPop {
                cb: select,
                pages: 4,
            },
        ],
    };
    let writer = pool_writer(node, p, shape)?;
    Ok(vec![reader, compute, writer])
}

/// Lowers every planned node to kernel IR.
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
        let (semaphores, senders) = match &node.op {
            OpPlan::Conv2d(_) => {
                let multicast = Multicast::of(node)?;
                (multicast.semaphores(), multicast.senders())
            }
            op => (
                if matches!(op, OpPlan::Nms(_)) {
                    ops::nms::SEMAPHORES
                } else {
                    0
                },
                node.split.work.iter().take(1).map(|w| w.core).collect(),
            ),
        };
        let (op, kernels) = match &node.op {
            OpPlan::Conv2d(c) => ("conv2d", conv_kernels(node, c)?),
            OpPlan::MaxPool2(p) => ("max_pool2", pool_kernels(node, p)?),
            OpPlan::SoftmaxFold(p) => ("softmax_fold", ops::softmax_fold::kernels(node, p)?),
            OpPlan::L2Normalize(p) => ("l2_normalize", ops::l2_normalize::kernels(node, p)?),
            OpPlan::Resize(r) => ("resize", crate::ops::resize::kernels(node, r)?),
            OpPlan::Nms(p) => ("nms", ops::nms::kernels(node, p)?),
            OpPlan::SelectKeypoints(p) => {
                ("select_keypoints", ops::select_keypoints::kernels(node, p)?)
            }
            OpPlan::SampleDescriptors(s) => ("sample_descriptors", ops::sample::kernels(node, s)?),
        };
        nodes.push(NodeKir {
            node: node.name.clone(),
            op: op.to_string(),
            ranges: node.split.ranges.clone(),
            cbs: node.cbs.clone(),
            semaphores,
            blocks: node.split.work.iter().map(|w| (w.core, w.count)).collect(),
            senders,
            counted: match &node.op {
                OpPlan::SampleDescriptors(s) => Some(ops::sample::count_source(s)),
                OpPlan::Nms(p) => ops::nms::count_source(p),
                _ => None,
            },
            kernels,
        });
    }
    let mut kir = Kir {
        nodes,
        arena: crate::arena::Arena::default(),
    };
    crate::arena::place(&mut kir, plan)?;
    Ok(kir)
}
