//! Graph → device plan: which cores run each node, where its tensors live and in which layout,
//! its circular buffers and how its weights reach the cores.
//!
//! Current design (see the crate docs): every activation is an interleaved channels-last tile
//! matrix ([`crate::layout`]) in DRAM (or in L1, placed by [`crate::arena`] after lowering);
//! each supported node is one program whose output blocks are split over the first cores of the
//! grid in contiguous runs ([`split`]); convs of one input and shape share a step
//! ([`conv::FusedConv`], `fused_convs`). This module holds the plan's data and walks the graph;
//! each op is planned by its submodule ([`conv`], [`pool`], [`conv_pool`], [`frame_conv`],
//! [`resize`], [`softmax_fold`], [`nms`], [`select_keypoints`], [`l2_normalize`], [`sample`]),
//! and [`arena_room`] estimates the L1 the arena will take.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use superpoint_graph::{Graph, GraphError, Node, Op};
use thiserror::Error;

use crate::device::{Fidelity, Format, Grid, Limits, Precision};
use crate::layout::{ActivationShape, DeviceTensor, LayoutError, Part};

pub mod arena_room;
pub mod conv;
pub mod conv_pool;
pub mod frame_conv;
pub mod l2_normalize;
pub mod nms;
pub mod pool;
pub mod resident;
pub mod resize;
pub mod resize_copy;
pub mod resize_filter;
pub mod sample;
pub mod select_keypoints;
pub mod softmax_fold;
pub mod split;
pub mod staged;
pub mod writer_views;

pub use conv::ConvPlan;
pub use pool::PoolPlan;
pub use split::{CoreWork, Split};

/// What the planner cannot handle.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PlanError {
    #[error(transparent)]
    Graph(#[from] GraphError),
    #[error("node `{node}`: frame {width}x{height} is not a multiple of 32 in both dimensions (the device path needs whole tiles)")]
    FrameNotMultiple32 {
        node: String,
        width: usize,
        height: usize,
    },
    #[error("node `{node}`: input `{input}` is not on the device in the layout this op reads (it must be the output of a planned node or an external input)")]
    NotOnDevice { node: String, input: String },
    #[error("node `{node}`: its output has no device layout ({reason})")]
    NoLayout { node: String, reason: String },
    #[error("external input `{node}` is not a node of the graph")]
    UnknownExternal { node: String },
    #[error("node `{node}`: input `{input}` holds {input_format:?} activations but the node runs at {format:?} (give both nodes the same precision format)")]
    FormatMismatch {
        node: String,
        input: String,
        input_format: Format,
        format: Format,
    },
    #[error("node `{node}`: a softmax lowers only fused with a dustbin_fold that is its only consumer (the device writes the folded score map, never the probabilities); make a dustbin_fold its only consumer and not a graph output")]
    SoftmaxWithoutFold { node: String },
    #[error("node `{node}`: a dustbin_fold lowers only fused with the softmax producing its input, but `{input}` is not a softmax planned on the device")]
    FoldWithoutSoftmax { node: String, input: String },
    #[error("node `{node}`: cell {cell} cannot be folded on the device (a 32x32 map tile holds 4x4 cells of 8 pixels); use cell 8")]
    UnsupportedCell { node: String, cell: usize },
    #[error("node `{node}`: the input plane is {width}x{height}; the device resize takes 1 to {max} pixels per side (set PlanParams::input_size within that, or resize on the host)")]
    PlaneSize {
        node: String,
        width: u32,
        height: u32,
        max: u32,
    },
    #[error("node `{node}`: the {axis:?} resize filter from {input} to {output} samples has a tap remainder sum of {sum} (limit {max}); the device's exact rounding would not hold (resize on the host, or by less)")]
    ResizeRounding {
        node: String,
        axis: resize::Axis,
        input: u32,
        output: u32,
        sum: u32,
        max: u32,
    },
    #[error("node `{node}`: NMS radius {radius} is not lowered on the device (1..={max}); radius 0 and larger radii run on the host")]
    NmsRadius {
        node: String,
        radius: usize,
        max: usize,
    },
    #[error("node `{node}`: NMS needs fp32 DST accumulation (a bf16 DST would round the scores); set fp32_dest in its precision")]
    NmsNeedsFp32Dst { node: String },
    #[error(transparent)]
    Sample(#[from] sample::SampleError),
    #[error("node `{node}`: {convs} fused convs need a group of cores each, but the grid has {cores} cores")]
    FusedConvs {
        node: String,
        convs: u32,
        cores: u32,
    },
    #[error("grid {x}x{y} is empty")]
    EmptyGrid { x: u32, y: u32 },
    #[error("staged buffer `{buffer}`: {why}; stage only the weights of a conv that takes them from L1, by a step of the plan")]
    Unstageable { buffer: String, why: &'static str },
}

/// Parameters of a compilation.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanParams {
    pub grid: Grid,
    pub limits: Limits,
    /// Precision of every node unless overridden.
    pub precision: Precision,
    /// Per-node precision, by node name.
    pub overrides: BTreeMap<String, Precision>,
    /// Nodes whose outputs are already in DRAM when the program starts (written by the host or
    /// left by an earlier program): not lowered, their buffers are [`Content::External`].
    pub external: BTreeSet<String>,
    /// The (width, height) of the image plane the host uploads; the frame size when `None`.
    pub input_size: Option<(u32, u32)>,
    /// Whether the activations the program writes and reads itself may live in L1
    /// ([`crate::arena`]) instead of DRAM.
    pub l1_activations: bool,
    /// Nodes whose outputs stay in DRAM even so (read by a program that does not share the
    /// arena); the graph's outputs do too unless [`PlanParams::outlive`] names them.
    pub keep_in_dram: BTreeSet<String>,
    /// Nodes whose outputs are read after the program ends, by the host or by a later program
    /// on the same device from the same arena (the NMS variants read the score map and the dense
    /// descriptors): they may live in L1 like the other activations (graph outputs included),
    /// alive until the program ends.
    pub outlive: BTreeSet<String>,
    /// External inputs that live in the L1 arena, at these offsets (an earlier program's
    /// [`PlanParams::outlive`] buffers, [`crate::variants::shared_l1`]); the others are in DRAM.
    pub external_l1: BTreeMap<String, u32>,
    /// Whether the convs [`staged::candidates`] names may take their weights from arena slots an
    /// earlier step fills ([`staged`]); off by default: by the cost model v2 it is a net loss on
    /// 12x10 and a small gain on 11x10 (docs/cost-model.md, "Staged weights").
    pub stage_weights: bool,
    /// Whether a resize whose plane is as large as the frame runs the filter passes like any
    /// other size instead of the copy ([`resize_copy`]): for the tests comparing the two.
    pub filter_identity_resize: bool,
    /// Whether the readers of shifted-view convs build every view, their writers none
    /// ([`writer_views`]): for the tests comparing the two.
    pub views_on_reader: bool,
}

impl Default for PlanParams {
    fn default() -> Self {
        PlanParams {
            grid: Grid::ETH_DISPATCH,
            limits: Limits::BLACKHOLE,
            precision: Precision::PORT,
            overrides: BTreeMap::new(),
            external: BTreeSet::new(),
            input_size: None,
            l1_activations: false,
            keep_in_dram: BTreeSet::new(),
            outlive: BTreeSet::new(),
            external_l1: BTreeMap::new(),
            stage_weights: false,
            filter_identity_resize: false,
            views_on_reader: false,
        }
    }
}

/// What a DRAM buffer holds and who fills it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Content {
    /// The image plane ([`DeviceTensor::Plane`]), written by the host before each run
    /// ([`crate::ops::resize::pack_plane`]).
    Input { tensor: DeviceTensor },
    /// Part `part` of a node's output, written by the node's program, laid out as `tensor`.
    Output { tensor: DeviceTensor, part: Part },
    /// Part `part` of node `node`'s output, already in DRAM when the program starts.
    External {
        node: String,
        tensor: DeviceTensor,
        part: Part,
    },
    /// An intermediate of node `node`'s programs, laid out like `tensor`; never read by the host.
    Scratch { node: String, tensor: DeviceTensor },
    /// Convolution weights of a weight entry for bf16 activations,
    /// [`crate::layout::pack_conv_weights`] with [`Format::Bf16`].
    ConvWeights { entry: String },
    /// Convolution bias of a weight entry for bf16 activations, [`crate::layout::pack_conv_bias`]
    /// with [`Format::Bf16`].
    ConvBias { entry: String },
    /// Convolution weights of a weight entry for Float32 activations: the bf16 high and low
    /// matrices, [`crate::layout::pack_conv_weights`] with [`Format::Fp32`].
    ConvWeightsHiLo { entry: String },
    /// Convolution bias of a weight entry for Float32 activations: Float32 tiles,
    /// [`crate::layout::pack_conv_bias`] with [`Format::Fp32`].
    ConvBiasFp32 { entry: String },
    /// The banded resize filter of one axis from `input` to `output` samples, bf16 tiles, each
    /// distinct page set once ([`resize::filter_bytes`]); it depends on the sizes
    /// only.
    ResizeWeights {
        axis: resize::Axis,
        input: u32,
        output: u32,
    },
    /// The resize's band table (first input column and weight page set of each output column
    /// tile, then first input row, page set and the band rows of each `unit_rows` output rows of
    /// each output row tile, u32), one `bytes`-byte page
    /// ([`resize::filter_bytes`]).
    ResizeBands {
        in_width: u32,
        in_height: u32,
        width: u32,
        height: u32,
        unit_rows: u32,
        bytes: u32,
    },
    /// The identity resize's frame value of each u8 level, 256 values of `format`
    /// ([`resize_copy::level_bytes`]).
    FrameLevels { format: Format },
}

/// One interleaved buffer: in DRAM, or in the program's L1 arena ([`crate::arena`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferPlan {
    pub name: String,
    pub pages: u32,
    pub page_bytes: u32,
    pub content: Content,
    /// Offset of its bank slot in the L1 arena; `None` in DRAM.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_offset: Option<u32>,
    /// A whole copy of it in every core's L1 from load on, outside the arena and every step's
    /// CBs: weights resident across programs and frames ([`resident`]), which a step's CB
    /// ([`CbPlan::buffer`]) lives in instead of being filled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub resident: bool,
    /// Conv weights or bias staged in the L1 arena's dead space ([`staged`]): the step of this
    /// node (the stager) copies the buffer from DRAM into one arena slot on every core, at the
    /// same offset, alive from the stager's step to its conv's, which a step's CB
    /// ([`CbPlan::buffer`]) lives in as in a resident copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub staged_by: Option<String>,
}

impl BufferPlan {
    /// The node whose output (either part) this buffer holds.
    pub fn output_of(&self) -> Option<&str> {
        match &self.content {
            Content::Output { part, .. } => match part {
                Part::Main => Some(self.name.as_str()),
                Part::Counts => self.name.strip_suffix(".counts"),
            },
            _ => None,
        }
    }
}

/// How a CB is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CbKind {
    /// Producer/consumer ring between two kernels.
    Stream,
    /// Filled once, read for the whole program, freed at the end.
    Resident,
    /// Reserved once by one kernel as private L1 scratch; never pushed.
    Scratch,
}

/// One circular buffer of a node's program, on all its cores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CbPlan {
    pub id: u32,
    /// The name the kernels use for it.
    pub name: String,
    pub pages: u32,
    pub page_bytes: u32,
    pub format: Format,
    pub kind: CbKind,
    /// The [`BufferPlan::resident`] buffer whose L1 copy the CB lives in (tt-metal's globally
    /// allocated CB), or the [`BufferPlan::staged_by`] buffer whose arena slot it lives in: it
    /// takes no room among the step's CBs and holds the buffer's contents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<String>,
}

/// The L1 bytes per core the CBs `cbs` of one step take, each rounded up to the L1 `alignment`
/// as the allocator places them; a CB in a resident buffer ([`CbPlan::buffer`]) takes none.
pub fn cbs_l1_bytes(cbs: &[CbPlan], alignment: u32) -> u64 {
    cbs.iter()
        .filter(|c| c.buffer.is_none())
        .map(|c| (u64::from(c.pages) * u64::from(c.page_bytes)).div_ceil(u64::from(alignment)))
        .map(|units| units * u64::from(alignment))
        .sum()
}

/// The most L1 bytes per core the CBs of any of `steps` take ([`cbs_l1_bytes`]).
pub fn largest_cbs_l1_bytes<'a>(
    steps: impl IntoIterator<Item = &'a [CbPlan]>,
    alignment: u32,
) -> u64 {
    steps
        .into_iter()
        .map(|cbs| cbs_l1_bytes(cbs, alignment))
        .max()
        .unwrap_or(0)
}

/// The op-specific part of a node's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OpPlan {
    Conv2d(ConvPlan),
    MaxPool2(PoolPlan),
    SoftmaxFold(softmax_fold::SoftmaxFoldPlan),
    L2Normalize(l2_normalize::L2NormalizePlan),
    Resize(resize::ResizePlan),
    ResizeCopy(resize_copy::ResizeCopyPlan),
    Nms(nms::NmsPlan),
    SelectKeypoints(select_keypoints::SelectPlan),
    SampleDescriptors(sample::SamplePlan),
}

/// One device node: a program of three kernels on `split.ranges`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodePlan {
    pub name: String,
    pub inputs: Vec<String>,
    pub output: String,
    pub precision: Precision,
    pub split: Split,
    pub cbs: Vec<CbPlan>,
    pub op: OpPlan,
}

/// The device plan of a graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub grid: Grid,
    pub limits: Limits,
    pub buffers: Vec<BufferPlan>,
    pub nodes: Vec<NodePlan>,
    /// [`PlanParams::l1_activations`].
    pub l1_activations: bool,
    /// Nodes whose outputs stay in DRAM: [`PlanParams::keep_in_dram`] and the graph's outputs
    /// that [`PlanParams::outlive`] does not name.
    pub keep_in_dram: BTreeSet<String>,
    /// [`PlanParams::outlive`].
    pub outlive: BTreeSet<String>,
    /// [`PlanParams::external_l1`].
    pub external_l1: BTreeMap<String, u32>,
}

/// A CB of `format` tiles.
pub(crate) fn cb_of(format: Format, id: u32, name: &str, pages: u32, kind: CbKind) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes: format.tile_bytes(),
        format,
        kind,
        buffer: None,
    }
}

/// A CB of bf16 tiles.
pub(crate) fn cb(id: u32, name: &str, pages: u32, kind: CbKind) -> CbPlan {
    cb_of(Format::Bf16, id, name, pages, kind)
}

/// A CB of Float32 tiles.
pub(crate) fn cb_fp32(id: u32, name: &str, pages: u32, kind: CbKind) -> CbPlan {
    cb_of(Format::Fp32, id, name, pages, kind)
}

/// The DRAM buffers of node `node`'s output `tensor`, one per part, with the content `content`
/// gives each part.
pub fn tensor_buffers(
    node: &str,
    tensor: DeviceTensor,
    content: impl Fn(Part) -> Content,
) -> Vec<BufferPlan> {
    tensor
        .parts()
        .into_iter()
        .map(|(part, pages, page_bytes)| BufferPlan {
            name: part.buffer_name(node),
            pages,
            page_bytes,
            content: content(part),
            l1_offset: None,
            resident: false,
            staged_by: None,
        })
        .collect()
}

/// The output buffers a node's program writes.
pub fn output_buffers(node: &str, tensor: DeviceTensor) -> Vec<BufferPlan> {
    tensor_buffers(node, tensor, |part| Content::Output { tensor, part })
}

/// The nodes the graph's outputs need, walking back from them and stopping at external nodes.
fn needed<'g>(graph: &'g Graph, external: &BTreeSet<String>) -> BTreeSet<&'g str> {
    let mut needed = BTreeSet::new();
    let mut stack: Vec<&str> = graph.outputs.iter().map(String::as_str).collect();
    while let Some(name) = stack.pop() {
        if !needed.insert(name) || external.contains(name) {
            continue;
        }
        if let Some(node) = graph.node(name) {
            stack.extend(node.inputs.iter().map(String::as_str));
        }
    }
    needed
}

/// The precision of a node whose multiplies scale by a broadcast factor (softmax, L2
/// normalisation): its override, else the default precision at HiFi4, because HiFi2 keeps only
/// 7 bits of the SrcB operand, which is the broadcast factor.
pub fn hifi4_unless_overridden(params: &PlanParams, node: &str) -> Precision {
    params.overrides.get(node).copied().unwrap_or(Precision {
        fidelity: Fidelity::HiFi4,
        ..params.precision
    })
}

/// The precision node `name` runs at: its override, else the default.
fn node_precision(params: &PlanParams, name: &str) -> Precision {
    *params.overrides.get(name).unwrap_or(&params.precision)
}

/// The device layout of every node's output that has one, in node order.
fn layouts<'g>(
    graph: &'g Graph,
    types: &[superpoint_graph::ValueType],
    params: &PlanParams,
) -> BTreeMap<&'g str, Result<DeviceTensor, LayoutError>> {
    let frame = graph.nodes.iter().find_map(|n| match n.op {
        Op::Resize { width, height } => Some((width as u32, height as u32)),
        _ => None,
    });
    let plane = params.input_size.or(frame);
    let mut out: BTreeMap<&str, Result<DeviceTensor, LayoutError>> = BTreeMap::new();
    for (node, ty) in graph.nodes.iter().zip(types) {
        let inputs: Vec<DeviceTensor> = node
            .inputs
            .iter()
            .filter_map(|i| out.get(i.as_str()).and_then(|t| t.as_ref().ok()).copied())
            .collect();
        let format = node_precision(params, &node.name).format;
        let tensor = DeviceTensor::of(&node.op, ty, &inputs, params.grid, plane, format);
        out.insert(&node.name, tensor);
    }
    out
}

/// The convs after conv `node` that its step computes too ([`conv::ConvPlan::fused`]): those the
/// graph's outputs need (`needed`) reading the same input with the same shape, ReLU and
/// precision, none of them external, pooled in its step ([`conv_pool::consumer`]) or placed
/// apart from the others (kept in DRAM, outliving the program, a graph output: the step's
/// writer addresses every output alike); none when the grid has fewer cores than convs, and
/// none for Float32 activations: the outputs live together from the step to the last of their
/// consumers, and two Float32 ones (SuperPoint's convPa and convDa at the accurate precision,
/// 40 KiB a bank each on 12×10) then leave the L1 arena for DRAM with their consumers' reads
/// (v2 at the accurate precision: 2149.3 → 2205.1 µs on 12×10, 2253.4 → 2253.9 on 11×10).
fn fused_convs<'g>(
    graph: &'g Graph,
    node: &Node,
    needed: &BTreeSet<&str>,
    keep_in_dram: &BTreeSet<String>,
    params: &PlanParams,
) -> Vec<&'g Node> {
    let shape = |n: &Node| match &n.op {
        Op::Conv2d {
            in_channels,
            out_channels,
            kernel,
            pad,
            relu,
            ..
        } => Some((*in_channels, *out_channels, *kernel, *pad, *relu)),
        _ => None,
    };
    let placed = |n: &Node| {
        (
            keep_in_dram.contains(&n.name),
            params.outlive.contains(&n.name),
            graph.outputs.contains(&n.name),
        )
    };
    let alike = |n: &Node| {
        shape(n).is_some()
            && shape(n) == shape(node)
            && n.inputs == node.inputs
            && node_precision(params, &n.name) == node_precision(params, &node.name)
            && placed(n) == placed(node)
            && !params.external.contains(&n.name)
            && conv_pool::consumer(graph, n, keep_in_dram, params).is_none()
    };
    if !alike(node) || node_precision(params, &node.name).format != Format::Bf16 {
        return Vec::new();
    }
    let fused: Vec<_> = graph
        .nodes
        .iter()
        .skip_while(|n| n.name != node.name)
        .skip(1)
        .filter(|n| needed.contains(n.name.as_str()) && alike(n))
        .collect();
    if params.grid.cores() > fused.len() as u32 {
        fused
    } else {
        Vec::new()
    }
}

/// The largest divisor of `n` that is at most `cap`.
pub(crate) fn largest_divisor_within(n: u32, cap: u32) -> u32 {
    (1..=cap.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// Plans the nodes the graph's outputs need, from its external inputs (or the input plane) on.
/// The input plane is uploaded by the host; the resize runs on the device
/// ([`crate::ops::resize`]), specialised for [`PlanParams::input_size`].
///
/// With L1 activations, the convs [`resident::choose`] picks on a first plan keep their weights
/// in L1 ([`ConvPlan::weights_in_l1`]), and the plan is made again leaving their copies room;
/// that second plan stands only where [`resident::check`] finds what the choice took still
/// holds, else the plan is the first, without copies. Staged weights
/// ([`PlanParams::stage_weights`]) need the arena's placement: `crate::staging::plan` plans
/// them on this plan.
pub fn plan(graph: &Graph, params: &PlanParams) -> Result<Plan, PlanError> {
    Ok(with_resident(graph, params)?.plan)
}

/// A plan with the resident copies [`plan`] chose, and what it was made from.
pub(crate) struct Resident {
    pub plan: Plan,
    /// The convs whose weights and bias are resident copies.
    pub chosen: BTreeSet<String>,
    /// The arena's and the copies' reserve the plan was made with (`None`: the graph's default).
    pub reserve: Option<u32>,
}

/// [`plan`], with the resident convs and the reserve it was made with.
pub(crate) fn with_resident(graph: &Graph, params: &PlanParams) -> Result<Resident, PlanError> {
    let no_staging = BTreeMap::new();
    let (first, reserve) = plan_with(graph, params, &BTreeSet::new(), &no_staging, None)?;
    let unchanged = |plan| Resident {
        plan,
        chosen: BTreeSet::new(),
        reserve: None,
    };
    if !params.l1_activations {
        return Ok(unchanged(first));
    }
    let chosen = resident::choose(&first, reserve);
    if chosen.is_empty() {
        return Ok(unchanged(first));
    }
    let (second, steps_reserve, copies) = with_copies(graph, params, &first, &chosen, reserve)?;
    Ok(match resident::check(&second, &chosen, steps_reserve) {
        Ok(()) => Resident {
            plan: second,
            chosen,
            reserve: Some(reserve + copies),
        },
        Err(_) => unchanged(first),
    })
}

/// The plan with the convs `chosen` on `first` keeping their weights in L1 copies, leaving the
/// arena `reserve` bytes (the most `first`'s steps have alive at once) and the copies theirs;
/// also the most its own steps have alive at once, and the copies' bytes.
fn with_copies(
    graph: &Graph,
    params: &PlanParams,
    first: &Plan,
    chosen: &BTreeSet<String>,
    reserve: u32,
) -> Result<(Plan, u32, u32), PlanError> {
    let copies: u32 = first
        .nodes
        .iter()
        .filter(|n| chosen.contains(&n.name))
        .filter_map(|n| match &n.op {
            OpPlan::Conv2d(c) => Some([c.weights.as_str(), c.bias.as_str()]),
            _ => None,
        })
        .flatten()
        .filter_map(|name| first.buffers.iter().find(|b| b.name == name))
        .map(|b| resident::copy_bytes(b, params.limits.l1_alignment))
        .sum();
    let (plan, steps_reserve) = plan_with(
        graph,
        params,
        chosen,
        &BTreeMap::new(),
        Some(reserve + copies),
    )?;
    Ok((plan, steps_reserve, copies))
}

/// [`plan`] with the convs `resident` names keeping their weights in L1 copies and those
/// `staged` names taking theirs from arena slots the named steps fill, leaving the
/// arena and those copies `reserve` bytes where a node can choose (by default the most the
/// graph's nodes have alive at once); also the most the planned steps have alive at once (a
/// pool fused with its conv leaves the conv's output out), the arena's estimate for a second
/// plan.
pub(crate) fn plan_with(
    graph: &Graph,
    params: &PlanParams,
    resident: &BTreeSet<String>,
    staged: &BTreeMap<String, String>,
    reserve: Option<u32>,
) -> Result<(Plan, u32), PlanError> {
    let typed = graph.validate()?;
    if params.grid.cores() == 0 {
        return Err(PlanError::EmptyGrid {
            x: params.grid.x,
            y: params.grid.y,
        });
    }
    if let Some(unknown) = params.external.iter().find(|e| graph.node(e).is_none()) {
        return Err(PlanError::UnknownExternal {
            node: unknown.clone(),
        });
    }
    let layouts = layouts(graph, &typed.types, params);
    let keep_in_dram: BTreeSet<String> = params
        .keep_in_dram
        .iter()
        .chain(
            graph
                .outputs
                .iter()
                .filter(|o| !params.outlive.contains(*o)),
        )
        .cloned()
        .collect();
    // L1 the activations will take in the arena ([`crate::arena`]), kept free of CBs where a
    // node can choose (conv stream depth, shifted views); the host's plane and external inputs
    // stay where they are.
    let moves = |name: &str| {
        graph
            .node(name)
            .is_some_and(|n| !matches!(n.op, Op::InputPlane))
            && !params.external.contains(name)
    };
    // The most the steps named by (output, inputs) have alive at once (none without L1
    // activations).
    let alive_at_once = |steps: &mut dyn Iterator<Item = (&str, &[String])>| {
        if !params.l1_activations {
            return 0;
        }
        arena_room::reserve(
            steps.map(|(name, inputs)| {
                let tensor = layouts
                    .get(name)
                    .and_then(|t| t.as_ref().ok())
                    .filter(|_| moves(name));
                (name, inputs, tensor.copied())
            }),
            &keep_in_dram,
            &params.outlive,
            params.grid.cores(),
            params.limits.l1_alignment,
        )
    };
    let arena_reserve = reserve.unwrap_or_else(|| {
        alive_at_once(
            &mut graph
                .nodes
                .iter()
                .map(|n| (n.name.as_str(), n.inputs.as_slice())),
        )
    });
    let needed = needed(graph, &params.external);
    let layout_of = |name: &str| -> Result<DeviceTensor, PlanError> {
        match layouts.get(name) {
            Some(Ok(t)) => Ok(*t),
            Some(Err(e)) => Err(PlanError::NoLayout {
                node: name.to_string(),
                reason: format!("{e:?}"),
            }),
            None => Err(PlanError::NoLayout {
                node: name.to_string(),
                reason: "not a node of the graph".to_string(),
            }),
        }
    };
    let mut on_device: BTreeSet<&str> = BTreeSet::new();
    let mut buffers = Vec::new();
    let mut nodes = Vec::new();
    for node in graph
        .nodes
        .iter()
        .filter(|n| needed.contains(n.name.as_str()))
    {
        if params.external.contains(&node.name) {
            let tensor = layout_of(&node.name)?;
            buffers.extend(tensor_buffers(&node.name, tensor, |part| {
                Content::External {
                    node: node.name.clone(),
                    tensor,
                    part,
                }
            }));
            on_device.insert(&node.name);
            continue;
        }
        let input_tensor = |i: usize| -> Result<DeviceTensor, PlanError> {
            let input = &node.inputs[i];
            let not_on_device = || PlanError::NotOnDevice {
                node: node.name.clone(),
                input: input.clone(),
            };
            if !on_device.contains(input.as_str()) {
                return Err(not_on_device());
            }
            layout_of(input).map_err(|_| not_on_device())
        };
        let precision = node_precision(params, &node.name);
        // An activation read by an op writing an activation of the node's format.
        let input_shape = |i: usize| -> Result<ActivationShape, PlanError> {
            let shape = input_tensor(i)?
                .activation()
                .ok_or_else(|| PlanError::NotOnDevice {
                    node: node.name.clone(),
                    input: node.inputs[i].clone(),
                })?;
            if shape.format != precision.format {
                return Err(PlanError::FormatMismatch {
                    node: node.name.clone(),
                    input: node.inputs[i].clone(),
                    input_format: shape.format,
                    format: precision.format,
                });
            }
            Ok(shape)
        };
        match &node.op {
            Op::InputPlane => {
                let tensor = layout_of(&node.name)?;
                buffers.extend(tensor_buffers(&node.name, tensor, |_| Content::Input {
                    tensor,
                }));
                on_device.insert(&node.name);
            }
            Op::Resize { width, height } => {
                let plane = input_tensor(0)?;
                let frame = (*width as u32, *height as u32);
                let (resize, owned) = match plane {
                    DeviceTensor::Plane { width, height }
                        if !params.filter_identity_resize
                            && resize_copy::is_identity((width, height), frame, precision) =>
                    {
                        resize_copy::plan_node(
                            &node.name,
                            &node.inputs[0],
                            frame,
                            params.grid,
                            precision,
                        )
                    }
                    _ => resize::plan_node(
                        &node.name,
                        &node.inputs[0],
                        plane,
                        (*width, *height),
                        params.grid,
                        precision,
                    )?,
                };
                buffers.extend(owned);
                nodes.push(resize);
                on_device.insert(&node.name);
            }
            // Already planned in the step of the conv it is fused with (conv::plan_node).
            Op::Conv2d { .. } if on_device.contains(node.name.as_str()) => {}
            Op::Conv2d {
                weights,
                in_channels,
                out_channels,
                kernel,
                pad,
                relu,
            } => {
                // The frame (FrameRows) feeds only the conv that reads it: frame_conv.
                let frame = frame_conv::input_shape(
                    &node.name,
                    &node.inputs[0],
                    input_tensor(0)?,
                    precision.format,
                    (*in_channels, *kernel, *pad),
                )?;
                let input = match frame {
                    Some(shape) => shape,
                    None => input_shape(0)?,
                };
                let fused = if frame.is_some() {
                    Vec::new()
                } else {
                    fused_convs(graph, node, &needed, &keep_in_dram, params)
                };
                let fused_entries: Vec<(&str, &str)> = fused
                    .iter()
                    .filter_map(|n| match &n.op {
                        Op::Conv2d { weights, .. } => Some((n.name.as_str(), weights.as_str())),
                        _ => None,
                    })
                    .collect();
                let op = conv::ConvOp {
                    weights,
                    in_channels: *in_channels,
                    out_channels: *out_channels,
                    kernel: *kernel,
                    pad: *pad,
                    relu: *relu,
                    fused: &fused_entries,
                    resident: resident.contains(&node.name),
                    staged_by: staged.get(&node.name).map(String::as_str),
                    least_slices: 1,
                };
                let plan_conv = |op: &conv::ConvOp<'_>| {
                    conv::plan_node(
                        node,
                        op,
                        input,
                        frame.is_some(),
                        precision,
                        params,
                        arena_reserve,
                    )
                };
                let (mut owned, mut planned) = plan_conv(&op)?;
                // The conv with its pool: as planned, or where the pool's units would load its
                // busiest core too much (`conv_pool::fuse`), in twice the slices, each slice's
                // group of cores taking every unit.
                let mut pooled = None;
                if let Some(pool) = conv_pool::consumer(graph, node, &keep_in_dram, params) {
                    let pool_format = node_precision(params, &pool.name).format;
                    let fuse = |planned: &NodePlan| {
                        conv_pool::fuse(
                            params.grid,
                            planned,
                            pool,
                            pool_format,
                            &params.limits,
                            arena_reserve,
                        )
                    };
                    let slices = match &planned.op {
                        OpPlan::Conv2d(c) => c.slices,
                        _ => 1,
                    };
                    if let Some(fused) = fuse(&planned) {
                        pooled = Some((pool, fused));
                    } else if let Ok((more_owned, more)) = plan_conv(&conv::ConvOp {
                        least_slices: 2 * slices,
                        ..op
                    }) {
                        if let Some(fused) = fuse(&more) {
                            (owned, planned) = (more_owned, more);
                            pooled = Some((pool, fused));
                        }
                    }
                }
                buffers.extend(owned);
                for other in &fused {
                    buffers.extend(output_buffers(&other.name, layout_of(&other.name)?));
                    on_device.insert(&other.name);
                }
                let (output, planned) = match pooled {
                    Some((pool, fused)) => (pool.name.as_str(), fused),
                    None => (node.name.as_str(), planned),
                };
                buffers.extend(output_buffers(output, layout_of(output)?));
                nodes.push(planned);
                on_device.insert(output);
            }
            // Already planned with the conv it pools (conv_pool).
            Op::MaxPool2 if on_device.contains(node.name.as_str()) => {}
            Op::MaxPool2 => {
                let input = input_shape(0)?;
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(pool::plan_node(node, input, precision, params.grid));
                on_device.insert(&node.name);
            }
            Op::Softmax => softmax_fold::defer(graph, node)?,
            Op::DustbinFold { cell } => {
                let logits = softmax_fold::logits(graph, node, params)?;
                let input = on_device
                    .contains(logits)
                    .then(|| layout_of(logits).ok().and_then(|t| t.activation()))
                    .flatten()
                    .ok_or_else(|| PlanError::NotOnDevice {
                        node: node.name.clone(),
                        input: logits.to_string(),
                    })?;
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(softmax_fold::node_plan(
                    node,
                    *cell,
                    logits,
                    input,
                    params,
                    params.grid,
                )?);
                on_device.insert(&node.name);
            }
            Op::L2Normalize => {
                let input = input_shape(0)?;
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(l2_normalize::node_plan(
                    &node.name,
                    &node.inputs[0],
                    input,
                    params,
                    params.grid,
                ));
                on_device.insert(&node.name);
            }
            Op::Nms { radius } => {
                let DeviceTensor::Map { height, width } = input_tensor(0)? else {
                    return Err(PlanError::NotOnDevice {
                        node: node.name.clone(),
                        input: node.inputs[0].clone(),
                    });
                };
                let (scratch, step) = nms::plan(
                    &node.name,
                    &node.inputs[0],
                    (height, width),
                    *radius,
                    precision,
                    params.grid,
                )?;
                buffers.extend(scratch);
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(step);
                on_device.insert(&node.name);
            }
            Op::SelectKeypoints {
                threshold, border, ..
            } => {
                input_tensor(0)?;
                let candidates = layout_of(&node.name)?;
                buffers.extend(output_buffers(&node.name, candidates));
                let select = select_keypoints::plan(
                    &node.name,
                    &node.inputs[0],
                    candidates,
                    *threshold,
                    *border,
                    precision,
                    params.grid,
                )?;
                if let Some(own) = select_keypoints::place(select, &mut nodes) {
                    nodes.push(own);
                }
                on_device.insert(&node.name);
            }
            Op::SampleDescriptors { cell } => {
                let tensors = (0..node.inputs.len())
                    .map(&input_tensor)
                    .collect::<Result<Vec<_>, _>>()?;
                nodes.push(sample::plan_node(
                    &node.name,
                    *cell as u32,
                    &node.inputs,
                    &tensors,
                    params.grid,
                    params.overrides.get(&node.name).copied(),
                    params.precision,
                )?);
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                on_device.insert(&node.name);
            }
        }
    }
    let steps_reserve = alive_at_once(
        &mut nodes
            .iter()
            .map(|n| (n.output.as_str(), n.inputs.as_slice())),
    );
    staged::add_stage_cbs(&mut nodes, &buffers)?;
    if !params.views_on_reader {
        writer_views::assign(&mut nodes);
    }
    let planned = Plan {
        grid: params.grid,
        limits: params.limits,
        buffers,
        nodes,
        l1_activations: params.l1_activations,
        keep_in_dram,
        outlive: params.outlive.clone(),
        external_l1: params.external_l1.clone(),
    };
    Ok((planned, steps_reserve))
}

#[cfg(test)]
mod tests {
    use super::*;
    use superpoint_graph::superpoint;

    #[test]
    fn external_inputs_cut_the_graph() {
        let graph = superpoint(64, 32).pruned(&["convDb"]);
        let params = PlanParams {
            external: BTreeSet::from(["convDa".to_string()]),
            ..PlanParams::default()
        };
        let planned = plan(&graph, &params).expect("plans");
        let names: Vec<&str> = planned.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, vec!["convDb"]);
        assert_eq!(planned.nodes[0].inputs, vec!["convDa".to_string()]);
        let external = &planned.buffers[0];
        assert_eq!(external.name, "convDa");
        // 4×8 cells: one pixel tile, 256 channels = 8 channel tiles.
        assert_eq!((external.pages, external.page_bytes), (8, 2048));
        assert!(matches!(
            &external.content,
            Content::External { node, part: Part::Main, .. } if node == "convDa"
        ));
        let unknown = PlanParams {
            external: BTreeSet::from(["nope".to_string()]),
            ..PlanParams::default()
        };
        assert_eq!(
            plan(&graph, &unknown).err(),
            Some(PlanError::UnknownExternal {
                node: "nope".to_string()
            })
        );
    }
}
