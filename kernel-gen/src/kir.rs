//! Kernel IR: per node, the reader / compute / writer programs on its core ranges as typed calls
//! (CB operations, DRAM transfers, DST blocks and tile ops), with their compile-time args and
//! per-core runtime args.
//!
//! The calls describe what the template of each kernel does, loop by loop; the checks
//! ([`crate::check`]) and the report read them, the templates implement them. The emulator tests
//! execute the rendered kernels, so a template that drifts from its calls fails there.
//!
//! This module is the IR's vocabulary and the [`Lowering`] each op implements (in
//! [`crate::ops`]); the lowering stage that runs them is [`crate::lower`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{Core, CoreRange, Format, Precision};
use crate::plan::{CbPlan, NodePlan};

/// What cannot be lowered to kernel IR.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum KirError {
    #[error("node `{node}`: runtime arg `{arg}` of its {kernel} kernel names buffer `{first}` on one core and `{other}` on another; an address arg must name one buffer on every core (its placement is a compile-time arg)")]
    MixedBuffers {
        node: String,
        kernel: String,
        arg: String,
        first: String,
        other: String,
    },
    #[error("`{buffer}` is given an L1 offset (external_l1) but is not a buffer of an external input of this program; name only the buffers of the nodes in `external`")]
    NotExternal { buffer: String },
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
    /// Once per multicast sender of the core's group ([`NodeKir::senders`]) other than the core
    /// itself.
    OtherSenders,
    /// Once on every core of the node but the first multicast sender of its group.
    AllButFirstSender,
    /// The core's units ([`NodeKir::units`]), each of this many output blocks: a conv with its
    /// pool fused computes a pooled output block a unit, from 2 × 2 of its own blocks.
    Units(u32),
    /// The core's output blocks that none of its units ([`NodeKir::units`]) of this many
    /// computes: a fused pool's span of blocks from its first unit's upper left one to its last
    /// unit's lower right one holds the blocks of other cores' units where a run starts or ends
    /// mid-row, whose hand-offs its compute takes and drops.
    Skipped(u32),
    /// The core's first output blocks, at most this many: a block loop whose first blocks do
    /// more (a shifted-view conv reader builds the ring's rows above and beside them), followed
    /// by a [`Trips::LaterBlocks`] loop over the rest.
    FirstBlocks(u32),
    /// The core's output blocks after the first this many ([`Trips::FirstBlocks`]).
    LaterBlocks(u32),
    /// The core's output blocks from the `from`-th (counted from 0) up to before the `to`-th: a
    /// block loop between a [`Trips::FirstBlocks`]`(from)` loop and a
    /// [`Trips::LaterBlocks`]`(to)` one, whose first blocks do more than the later ones and its
    /// first one more still (a shifted-view conv reader pushes the weights' later rounds there).
    BlocksBetween(u32, u32),
    /// The core's first unit of this many output blocks (once on a core with one), followed by
    /// a [`Trips::LaterUnits`] loop over the rest: a [`Trips::Units`] loop whose first unit does
    /// more (a fused pool's compute waits for the weights' rounds in it).
    FirstUnit(u32),
    /// The core's units after the first ([`Trips::FirstUnit`]).
    LaterUnits(u32),
    /// Once on a core without output blocks (a multicast sender the split left none), never on
    /// the others: what such a core does instead of its first block.
    WithoutBlocks,
    /// Once on each of the node's stage senders ([`NodeKir::stagers`]: it stages a later
    /// conv's weights, `crate::ops::stage`), never on the other cores.
    OnStager,
    /// On a core with output blocks, the trips a [`Trips::FirstBlocks`]`(n)` loop leaves out
    /// (`n` less its blocks, none with `n` or more): the rest of `n` steps that a block loop does
    /// one a block (the views of the row above a writer builds and its reader waits for).
    MissingBlocks(u32),
}

impl Trips {
    /// The trips of a loop over `self` on core `on`.
    pub fn on(&self, on: OnCore) -> u32 {
        match self {
            Trips::Fixed(n) => *n,
            Trips::Blocks => on.blocks,
            Trips::Counted => on.counted,
            Trips::OnSender => u32::from(on.sender),
            Trips::OtherSenders => on.other_senders,
            Trips::AllButFirstSender => u32::from(!on.first_sender),
            Trips::Units(_) => on.units,
            Trips::Skipped(n) => on.blocks.saturating_sub(n * on.units),
            Trips::FirstBlocks(n) => on.blocks.min(*n),
            Trips::LaterBlocks(n) => on.blocks.saturating_sub(*n),
            Trips::BlocksBetween(from, to) => on.blocks.min(*to).saturating_sub(*from),
            Trips::FirstUnit(_) => u32::from(on.units > 0),
            Trips::LaterUnits(_) => on.units.saturating_sub(1),
            Trips::WithoutBlocks => u32::from(on.blocks == 0),
            Trips::OnStager => u32::from(on.stager),
            Trips::MissingBlocks(n) if on.blocks > 0 => n.saturating_sub(on.blocks),
            Trips::MissingBlocks(_) => 0,
        }
    }
}

/// What the loops of a kernel run over on one core: its output blocks, the trips of its
/// [`Trips::Counted`] loops, whether it is a multicast sender of the node and the first of its
/// group, and how many senders of its group it is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OnCore {
    pub blocks: u32,
    /// Its units ([`NodeKir::units`]; 0 in a node without).
    pub units: u32,
    /// At most the [`CountSource`] bound of `blocks`; the bound itself (the worst case) unless
    /// a run's counts are known.
    pub counted: u32,
    pub sender: bool,
    pub first_sender: bool,
    pub other_senders: u32,
    /// It is a stage sender of the node ([`NodeKir::stagers`]).
    pub stager: bool,
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

/// The faces of a whole tile, which an SFPU operation works on unless it names a vector mode
/// ([`Call::Sfpu`]).
pub const ALL_FACES: u32 = 4;

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
    /// multiples of `row_bytes`; no RISC-V element loop. `transfers`: the NoC reads the kernel
    /// issues for them (for the timeline's phase split, [`crate::phases`]); with `tiles` 0,
    /// that many single rows fixed in pages built before.
    L1Copy {
        from: u32,
        cb: u32,
        tiles: u32,
        row_bytes: u32,
        transfers: u32,
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
    /// `tiles` SFPU operations, each on `faces` of its DST tile's four 16×16 faces (4:
    /// `VectorMode::RC`, the default; 2: `VectorMode::R`, rows 0-15, or `C`, columns 0-15).
    Sfpu {
        op: SfpuOp,
        tiles: u32,
        faces: u32,
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
    /// Units per core, for resolving [`Trips::Units`], in split order: a conv with its pool
    /// fused is split by pooled output blocks (`crate::plan::conv_pool`); empty elsewhere.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<(Core, u32)>,
    /// The multicast senders ([`Trips::OnSender`]) of each group of cores
    /// ([`crate::multicast`]), as many in every group.
    pub senders: Vec<Vec<Core>>,
    /// The cores that stage a later conv's weights ([`Trips::OnStager`], `crate::ops::stage`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stagers: Vec<Core>,
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
            let sender = self.senders.iter().any(|g| g.contains(core));
            let group = self.senders.first().map_or(0, Vec::len) as u32;
            (
                *core,
                OnCore {
                    blocks: *blocks,
                    units: self
                        .units
                        .iter()
                        .find(|(c, _)| c == core)
                        .map_or(0, |(_, units)| *units),
                    counted: self.counted.as_ref().map_or(*blocks, |c| c.bound(*blocks)),
                    sender,
                    first_sender: self.senders.iter().any(|g| g.first() == Some(core)),
                    other_senders: group - u32::from(sender),
                    stager: self.stagers.contains(core),
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
    pub arena: Arena,
}

/// Where the L1 buffers are ([`crate::arena`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arena {
    /// Bytes per core (0: no buffer is in L1).
    pub bytes: u32,
    /// Offset of each L1 buffer's bank slot in the arena, by buffer name.
    pub offsets: BTreeMap<String, u32>,
    /// Bytes per core of the resident buffers' L1 copies (`plan::BufferPlan::resident`), which
    /// live beside the arena for the whole program.
    pub resident: u32,
}

impl Arena {
    /// Whether buffer `name` lives in L1.
    pub fn holds(&self, name: &str) -> bool {
        self.offsets.contains_key(name)
    }
}

/// What the lowering stage ([`crate::lower`]) needs of an op, implemented by each op's plan in
/// [`crate::ops`]: its name, its kernels on a planned node's cores, and what the node's program
/// configures besides them.
pub trait Lowering {
    /// The op's name in the dispatch program (`conv2d`, `nms`, ...).
    fn op(&self) -> &'static str;

    /// The kernels of `node`, which is planned with this op.
    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError>;

    /// Semaphores per core and the multicast senders of each group ([`NodeKir::senders`]): by
    /// default none, and the first core of the split.
    fn sync(&self, node: &NodePlan) -> Result<(u32, Vec<Vec<Core>>), KirError> {
        Ok((0, vec![first_core(node)]))
    }

    /// The run-time source of the node's [`Trips::Counted`] loops, if it has any.
    fn counted(&self) -> Option<CountSource> {
        None
    }
}

/// The first core of `node`'s split (none when it has no cores).
pub(crate) fn first_core(node: &NodePlan) -> Vec<Core> {
    node.split.work.iter().take(1).map(|w| w.core).collect()
}

/// Calls each call with how many times it runs on core `on` (zero for a branch the core skips).
pub fn walk(calls: &[Call], on: OnCore, times: u64, f: &mut impl FnMut(&Call, u64)) {
    for call in calls {
        f(call, times);
        match call {
            Call::Loop { trips, body } => walk(body, on, times * u64::from(trips.on(on)), f),
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

/// The per-core args of a kernel that walks its core's share of the node's split: the
/// addresses of `buffers`, then the share's start and count.
pub(crate) fn share_args(node: &NodePlan, buffers: &[&str]) -> Vec<CoreArgs> {
    per_core(node, |start, count| {
        buffers
            .iter()
            .map(|b| Arg::BufferAddress(b.to_string()))
            .chain([Arg::Const(start), Arg::Const(count)])
            .collect()
    })
}

/// The local NoC copies of one `fill_words` (`common/zero_fill.cpp.tera`) of `bytes` bytes:
/// each doubles the filled run from the 64 stored bytes.
pub(crate) fn fill_copies(bytes: u32) -> u32 {
    let mut done = 64u32;
    let mut copies = 0;
    while done < bytes {
        done = done.saturating_mul(2);
        copies += 1;
    }
    copies
}

/// `fill_words` (`common/zero_fill.cpp.tera`) of `pages` pages of CB `cb`, `page_bytes` each,
/// one call each: 64 bytes stored, doubled by local NoC copies.
pub(crate) fn filled_pages(cb: u32, pages: u32, page_bytes: u32) -> [Call; 2] {
    [
        Call::L1Gather { bytes: 64 * pages },
        Call::L1Copy {
            from: cb,
            cb,
            tiles: pages,
            row_bytes: 64,
            transfers: pages * fill_copies(page_bytes),
        },
    ]
}

/// `fill_reduce_scaler` (`common/reduce_scaler.cpp.tera`) of CB `cb`: a zeroed bf16 tile and
/// 8 words of 1.0 pairs per face.
pub(crate) fn reduce_scaler(cb: u32) -> Vec<Call> {
    let mut calls = filled_pages(cb, 1, 2048).to_vec();
    calls.push(Call::L1Gather { bytes: 4 * 8 * 4 });
    calls
}

pub(crate) fn blocks(trips: Trips, body: Vec<Call>) -> Call {
    Call::Loop { trips, body }
}
