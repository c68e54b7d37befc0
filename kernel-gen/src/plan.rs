//! Graph → device plan: which cores run each node, where its tensors live and in which layout,
//! its circular buffers and how its weights reach the cores.
//!
//! Current design (see the crate docs): every activation is an interleaved channels-last tile
//! matrix ([`crate::layout`]) in DRAM (or in L1, placed by [`crate::arena`] after lowering);
//! each supported node is one program whose output pixel blocks
//! (32 pixels) are split over the first cores of the grid in contiguous runs; convolution weights
//! and bias are read by every core into resident CBs.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use superpoint_graph::{Graph, GraphError, Op};

use thiserror::Error;
use tt_runtime::CostModel;

use crate::device::{Core, CoreRange, Fidelity, Format, Grid, Limits, Precision};
use crate::layout::{
    conv_k_tiles, conv_weight_parts, tiles, ActivationShape, DeviceTensor, LayoutError, Part,
};
use crate::ops;

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
        axis: crate::ops::resize::Axis,
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
    Sample(#[from] crate::ops::sample::SampleError),
    #[error("grid {x}x{y} is empty")]
    EmptyGrid { x: u32, y: u32 },
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
    /// distinct page set once ([`crate::ops::resize::filter_bytes`]); it depends on the sizes
    /// only.
    ResizeWeights {
        axis: crate::ops::resize::Axis,
        input: u32,
        output: u32,
    },
    /// The resize's band table (first input column and weight page set of each output column
    /// tile, then first input row, page set and the band rows of each `unit_rows` output rows of
    /// each output row tile, u32), one `bytes`-byte page
    /// ([`crate::ops::resize::filter_bytes`]).
    ResizeBands {
        in_width: u32,
        in_height: u32,
        width: u32,
        height: u32,
        unit_rows: u32,
        bytes: u32,
    },
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
}

/// The L1 bytes per core the CBs `cbs` of one step take, each rounded up to the L1 `alignment`
/// as the allocator places them.
pub fn cbs_l1_bytes(cbs: &[CbPlan], alignment: u32) -> u64 {
    cbs.iter()
        .map(|c| (u64::from(c.pages) * u64::from(c.page_bytes)).div_ceil(u64::from(alignment)))
        .map(|units| units * u64::from(alignment))
        .sum()
}

/// The contiguous run of output blocks one core computes, for the output tiles of its slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoreWork {
    pub core: Core,
    pub start: u32,
    pub count: u32,
    /// The output-channel slice the core computes ([`Split::slices`]); 0 when unsliced.
    #[serde(default)]
    pub slice: u32,
}

/// Output blocks (32 pixels) split over the cores of the grid; a conv's split may also slice
/// its output channels (`Split::sliced`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub blocks: u32,
    pub ranges: Vec<CoreRange>,
    pub work: Vec<CoreWork>,
    /// The cores of each output-channel slice as rectangles, slice `s` of
    /// [`ConvPlan::slices`] computing output tiles `s · slice_tiles ..` of every block; its
    /// cores follow each other in `work`, the first its weights' multicast sender. Empty: one
    /// slice, all of `ranges`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slices: Vec<Vec<CoreRange>>,
}

/// Blocks per core of `blocks` over `cores` cores where the first (the multicast sender of
/// [`Split::sender_light`]) takes the fewest that keep every core at or below the most a core
/// takes in an even split, the others sharing the rest, the first of them taking one more.
fn sender_light_counts(blocks: u32, cores: u32) -> Vec<u32> {
    if cores < 2 {
        return vec![blocks; cores as usize];
    }
    let most = blocks.div_ceil(cores);
    let first = blocks.saturating_sub((cores - 1) * most);
    let rest = blocks - first;
    (0..cores)
        .map(|i| {
            if i == 0 {
                first
            } else {
                rest / (cores - 1) + u32::from(i - 1 < rest % (cores - 1))
            }
        })
        .collect()
}

/// The cores `first .. first + n` of `grid` in column-major order (y fastest) as rectangles:
/// the rest of a partly taken column, the full columns, the start of a column; at most three.
fn column_run(grid: Grid, first: u32, n: u32) -> Vec<CoreRange> {
    let column = |x: u32, y0: u32, y1: u32| CoreRange {
        start: Core { x, y: y0 },
        end: Core { x, y: y1 },
    };
    let mut rects = Vec::new();
    let (mut at, end) = (first, first + n);
    if at % grid.y != 0 && at < end {
        let stop = end.min((at / grid.y + 1) * grid.y);
        rects.push(column(at / grid.y, at % grid.y, (stop - 1) % grid.y));
        at = stop;
    }
    let full = (end - at) / grid.y;
    if full > 0 {
        rects.push(CoreRange {
            start: Core {
                x: at / grid.y,
                y: 0,
            },
            end: Core {
                x: at / grid.y + full - 1,
                y: grid.y - 1,
            },
        });
        at += full * grid.y;
    }
    if at < end {
        rects.push(column(at / grid.y, 0, end - at - 1));
    }
    rects
}

/// The same core with x and y swapped.
fn transposed(c: Core) -> Core {
    Core { x: c.y, y: c.x }
}

/// The grid with its axes swapped: its row-major order is `grid`'s column-major order.
fn transposed_grid(grid: Grid) -> Grid {
    Grid {
        x: grid.y,
        y: grid.x,
    }
}

/// Core `at` of `grid` in column-major (`by_columns`) or row-major order.
fn run_core(grid: Grid, at: u32, by_columns: bool) -> Core {
    if by_columns {
        transposed(transposed_grid(grid).core(at))
    } else {
        grid.core(at)
    }
}

/// [`column_run`], or its row-major counterpart (the same on the transposed grid).
fn run_rects(grid: Grid, first: u32, n: u32, by_columns: bool) -> Vec<CoreRange> {
    if by_columns {
        return column_run(grid, first, n);
    }
    column_run(transposed_grid(grid), first, n)
        .into_iter()
        .map(|r| CoreRange {
            start: transposed(r.start),
            end: transposed(r.end),
        })
        .collect()
}

impl Split {
    /// `blocks` blocks over at most all cores of `grid`, the first `blocks % cores` cores taking one more.
    pub(crate) fn new(grid: Grid, blocks: u32) -> Split {
        let cores = grid.cores().min(blocks).max(1);
        let mut start = 0;
        let work = (0..cores)
            .map(|i| {
                let count = blocks / cores + u32::from(i < blocks % cores);
                let w = CoreWork {
                    core: grid.core(i),
                    start,
                    count,
                    slice: 0,
                };
                start += count;
                w
            })
            .collect();
        Split {
            blocks,
            ranges: grid.first_cores(cores),
            work,
            slices: Vec::new(),
        }
    }

    /// Like [`Split::new`] on the same cores, but the first core, which also reads the node's
    /// resident pages from DRAM and multicasts them ([`crate::multicast`]), takes the fewest
    /// blocks that keep every core at or below the most blocks a core takes in [`Split::new`];
    /// the others share the rest, the first of them taking one more. 150 blocks on 120 cores:
    /// the first core none, the next 31 two each (instead of the first core two and the fill).
    pub(crate) fn sender_light(grid: Grid, blocks: u32) -> Split {
        let even = Split::new(grid, blocks);
        let mut start = 0;
        let work = sender_light_counts(blocks, even.work.len() as u32)
            .into_iter()
            .zip(&even.work)
            .map(|(count, w)| {
                let w = CoreWork { start, count, ..*w };
                start += count;
                w
            })
            .collect();
        Split { work, ..even }
    }

    /// Every block on each of `slices` groups of `⌊cores / slices⌋` cores, consecutive in
    /// row-major or column-major order (so each is at most three rectangles, one multicast
    /// each; the order whose groups take fewer), group `s` computing slice `s` of the output
    /// tiles; within a group the blocks are split as in [`Split::sender_light`]. `None` when a
    /// group would have no core.
    pub(crate) fn sliced(grid: Grid, blocks: u32, slices: u32) -> Option<Split> {
        let n = grid.cores().checked_div(slices)?.min(blocks);
        if n == 0 {
            return None;
        }
        let rects = |by_columns: bool| -> Vec<Vec<CoreRange>> {
            (0..slices)
                .map(|slice| run_rects(grid, slice * n, n, by_columns))
                .collect()
        };
        let most = |r: &[Vec<CoreRange>]| r.iter().map(Vec::len).max().unwrap_or(0);
        let by_columns = most(&rects(true)) < most(&rects(false));
        let mut work = Vec::new();
        for slice in 0..slices {
            let mut start = 0;
            for (i, count) in sender_light_counts(blocks, n).into_iter().enumerate() {
                work.push(CoreWork {
                    core: run_core(grid, slice * n + i as u32, by_columns),
                    start,
                    count,
                    slice,
                });
                start += count;
            }
        }
        Some(Split {
            blocks,
            ranges: run_rects(grid, 0, slices * n, by_columns),
            work,
            slices: rects(by_columns),
        })
    }
}

/// A convolution's shape in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConvPlan {
    pub in_channels: u32,
    pub out_channels: u32,
    pub kernel: u32,
    pub pad: u32,
    pub relu: bool,
    pub height: u32,
    pub width: u32,
    pub in_tiles: u32,
    pub k_tiles: u32,
    /// Weight matrices stacked along K ([`crate::layout::conv_weight_parts`]): the compute loop
    /// runs over `weight_parts · k_tiles` weight rows of tiles, im2col tile `k % k_tiles` each.
    pub weight_parts: u32,
    pub out_tiles: u32,
    /// Output-channel slices (`Split::sliced`): each core computes `slice_tiles()` of the
    /// `out_tiles` and holds only their weights and bias; 1 when every core computes them all.
    #[serde(default = "one_slice")]
    pub slices: u32,
    /// Output tiles per DST acquire (a divisor of the slice's tiles within the DST capacity).
    pub group: u32,
    /// Input pixel blocks the reader fetches ahead of the output block. Row runs: the blocks
    /// its taps can touch either side (they reach `pad·W + pad` pixels, so
    /// `⌈(pad·W + pad)/32⌉`). Shifted views: `W/32 + 2` (the taps reach `W/32` blocks; a
    /// block's views are started one output block before, and finished with, the block whose
    /// last tap row it is); with [`ConvPlan::half_rows`] `W/32 + 4` (the last tap row is the
    /// half part of block `b + W/32 + 1`, built one output block after its views).
    pub ring_reach: u32,
    /// The reader keeps, next to each ring block, its two views shifted by one pixel (row r =
    /// pixel 32q + r ± 1 of the same image row, zero outside it), built once per block; each
    /// im2col tap row is then a block's three views (or with [`ConvPlan::half_rows`] those of
    /// a half-block shifted slot), which the compute reads from the ring itself (no im2col
    /// copy; `cb_im2col` carries one data-less page per output block saying its tap rows are
    /// complete). Only for a 3×3 pad-1 conv with whole channel tiles, W a multiple of 16 (image
    /// rows start at a face row) and whole blocks, whose ring leaves room for double-buffered
    /// streams; otherwise row runs.
    pub shifted: bool,
    /// Bytes of one activation tile (2048 bf16, 4096 Float32).
    pub tile_bytes: u32,
    /// Weight tiles per page of the weights' DRAM buffer: the largest divisor of the
    /// `weight_parts · k_tiles · out_tiles` tiles up to [`WEIGHT_PAGE_TILES`], so the sender
    /// fills the resident weights with fewer, larger DRAM reads.
    pub weight_page_tiles: u32,
    pub weights: String,
    pub bias: String,
    /// The input is the frame in the [`FrameRows`](crate::DeviceTensor::FrameRows) layout, read
    /// by the frame conv's kernels ([`crate::ops::frame_conv`]), split by image rows.
    #[serde(default)]
    pub frame_rows: bool,
    /// The 2×2 max-pool that is the conv's only consumer runs in the same step
    /// ([`crate::ops::conv_pool`]): the node's output is the pool's, `group` leaves DST room for
    /// the vertical maximum.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pooled: bool,
}

fn one_slice() -> u32 {
    1
}

impl ConvPlan {
    /// Output tiles each core computes: its slice of `out_tiles`.
    pub fn slice_tiles(&self) -> u32 {
        self.out_tiles / self.slices.max(1)
    }

    /// Weight tiles each core holds: `weight_parts · k_tiles` rows of its slice's tiles.
    pub fn resident_weight_tiles(&self) -> u32 {
        self.weight_parts * self.k_tiles * self.slice_tiles()
    }

    /// Input pixel blocks the reader's ring holds: every block one output block's taps can
    /// touch, and with shifted views the `ring_reach` blocks ahead, the `W/32` behind (the
    /// farthest tap row) and [`SHIFTED_TOKENS`] more: the reader may run that many output
    /// blocks ahead of the compute, which still reads their tap rows.
    pub fn ring_blocks(&self) -> u32 {
        if self.shifted {
            self.ring_reach + self.width / 32 + SHIFTED_TOKENS
        } else {
            2 * self.ring_reach + 1
        }
    }

    /// Shifted views with W = 32m + 16: the tap rows above and below an output block start
    /// half a block (16 pixels, faces 2/3 of a tile) into a block, so each ring slot p also
    /// keeps a half part, the views of pixels `32p − 16 ..= 32p + 15` (the faces 2/3 of block
    /// p − 1's views, then the faces 0/1 of block p's), and tap row ∓1 of output block b is
    /// the half part of slot b − m (above) or b + m + 1 (below).
    pub fn half_rows(&self) -> bool {
        self.shifted && self.width % 32 == 16
    }

    /// Tiles the ring keeps per block and channel tile: the block, and its two shifted views.
    pub fn ring_views(&self) -> u32 {
        if self.shifted {
            3
        } else {
            1
        }
    }

    /// Pages of the ring CB; with shifted views a zero part (the tap rows above and below the
    /// image) comes first, then per block its views and with [`ConvPlan::half_rows`] its half
    /// part.
    pub fn ring_pages(&self) -> u32 {
        let parts = 1 + u32::from(self.half_rows());
        (self.ring_blocks() * parts + u32::from(self.shifted)) * self.ring_views() * self.in_tiles
    }

    /// Pages the reader pushes on `cb_im2col` per output block: the im2col tiles, or with
    /// shifted views one data-less page.
    pub fn im2col_pages(&self) -> u32 {
        if self.shifted {
            1
        } else {
            self.k_tiles
        }
    }

    /// Bytes of one `cb_im2col` page.
    pub fn im2col_page_bytes(&self) -> u32 {
        if self.shifted {
            TOKEN_BYTES
        } else {
            self.tile_bytes
        }
    }

    /// Whether the im2col tiles are built from whole channel tiles by NoC row-run copies; if
    /// not (a channel count that is not a multiple of 32), element by element.
    pub fn copies_rows(&self) -> bool {
        self.in_channels % 32 == 0
    }
}

/// A 2×2 max-pool's shape in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PoolPlan {
    pub channels: u32,
    pub height: u32,
    pub width: u32,
    pub in_tiles: u32,
    pub cache_slots: u32,
    /// Pool by 0/1 row-selection matmuls on whole input tiles (bf16 activations and an output
    /// width that is a multiple of 16, so each half block of 16 output pixels pools two whole
    /// input tiles; HiFi2 or more, so SrcA keeps the whole bf16 activation); otherwise the reader
    /// gathers the tap rows.
    pub select: bool,
}

/// The op-specific part of a node's plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum OpPlan {
    Conv2d(ConvPlan),
    MaxPool2(PoolPlan),
    SoftmaxFold(crate::ops::softmax_fold::SoftmaxFoldPlan),
    L2Normalize(crate::ops::l2_normalize::L2NormalizePlan),
    Resize(crate::ops::resize::ResizePlan),
    Nms(crate::ops::nms::NmsPlan),
    SelectKeypoints(crate::ops::select_keypoints::SelectPlan),
    SampleDescriptors(crate::ops::sample::SamplePlan),
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

const TILE_BYTES: u32 = 2048;
/// Most weight tiles in one page of a conv's weights buffer (16 KiB of bf16 tiles, the largest
/// NoC transfer the cost model distinguishes).
pub const WEIGHT_PAGE_TILES: u32 = 8;
/// Bytes of a data-less `cb_im2col` page (shifted views): the L1 alignment.
const TOKEN_BYTES: u32 = 16;
/// Pages of `cb_im2col` with shifted views: output blocks the reader may complete ahead of the
/// compute (double-buffered, as the planner requires for shifted views).
pub const SHIFTED_TOKENS: u32 = 2;
/// Input tiles the max-pool reader caches.
const POOL_CACHE_SLOTS: u32 = 8;

/// A CB of `format` tiles.
pub(crate) fn cb_of(format: Format, id: u32, name: &str, pages: u32, kind: CbKind) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes: format.tile_bytes(),
        format,
        kind,
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

/// Pages per stage of a convolution's streamed CBs (im2col, output): 2 (double-buffered) when
/// `fixed` resident bytes plus two stages of `stage` bytes fit in `l1` bytes beside the
/// `reserve` the L1 arena needs, else 1 (the reader and the compute then take turns: the hi + lo
/// weights of a 128→256 3×3 conv at Float32 leave no room for a second stage; on 11×10 the
/// bf16 convPa/convDa give theirs to the arena). A second stage that fits only without the
/// reserve stays when dropping it would not make room for the reserve either.
fn conv_stream_depth(l1: u32, reserve: u32, fixed: u32, stage: u32) -> u32 {
    let double = fixed + 2 * stage;
    let makes_room = fixed + stage + reserve <= l1;
    if double + reserve <= l1 || (double <= l1 && !makes_room) {
        2
    } else {
        1
    }
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

/// What one output block of a conv costs, for choosing its output-channel slices.
#[derive(Debug, Clone, Copy)]
struct ConvWork {
    out_tiles: u32,
    /// Weight rows of tiles (`weight_parts · k_tiles`): tile matmuls per output tile.
    weight_rows: u32,
    /// Estimated reader cycles per output block ([`row_run_block_cycles`],
    /// [`shifted_block_cycles`]).
    block_cycles: u64,
    /// Estimated reader cycles a core spends besides its blocks' ([`half_rows_halo_cycles`];
    /// 0 for row runs, whose extra blocks are only fetched).
    halo_cycles: u64,
    phases: u32,
}

/// Estimated reader cycles per output block of a row-run conv reader: its `in_tiles` input
/// tiles fetched and its `k_tiles` im2col tiles built from `tile_bytes`-byte tiles, at the
/// rates its transfers get in tt_runtime's `CostModel::BLACKHOLE` on the emulator's counters
/// at 80×60: about 48 B a cycle for whole tiles (the fetch; the im2col of a 1×1 conv: about 50
/// cycles a tile at 256 channels), about 22 B a cycle for the im2col of a 3×3 conv, whose
/// side taps take a face-row move and row fixes (about 3350 cycles a block of 36 tiles at 128
/// channels).
fn row_run_block_cycles(kernel: u32, in_tiles: u32, k_tiles: u32, tile_bytes: u32) -> u64 {
    let im2col_rate = if kernel == 1 { 48 } else { 22 };
    u64::from(in_tiles * tile_bytes) / 48 + u64::from(k_tiles * tile_bytes) / im2col_rate
}

/// Cycles of `n` NoC transfers of `bytes` bytes each in tt_runtime's `CostModel::BLACKHOLE`.
fn transfer_cycles(n: u32, bytes: u32) -> f64 {
    CostModel::BLACKHOLE.transfer_cycles(u64::from(n), u64::from(bytes))
}

/// Estimated reader cycles per output block of a shifted-views conv reader
/// ([`ConvPlan::shifted`]; `half`: [`ConvPlan::half_rows`]) from its transfers: the block's
/// `in_tiles` tiles fetched, its views moved by one face row (two reads), the first or last row
/// of each face of each view fixed (one read per 16-column half), and with half rows the half
/// part copied as two face pairs a view tile.
fn shifted_block_cycles(in_tiles: u32, tile_bytes: u32, half: bool) -> u64 {
    let row = tile_bytes / 64;
    let mut cycles = transfer_cycles(in_tiles, tile_bytes)
        + transfer_cycles(2, in_tiles * tile_bytes - row)
        + transfer_cycles(2 * 2 * 2 * in_tiles, row);
    if half {
        cycles += transfer_cycles(2 * 3 * in_tiles, tile_bytes / 2);
    }
    cycles.ceil() as u64
}

/// Estimated cycles a half-block shifted-views reader ([`ConvPlan::half_rows`]) spends on the
/// blocks around a core's run, however few blocks it has: W/32 + 2 more fetched either side,
/// W/32 + 1 more views either side, and 2 · W/32 + 1 more half parts.
fn half_rows_halo_cycles(width: u32, in_tiles: u32, tile_bytes: u32) -> u64 {
    let m = width / 32;
    let block = shifted_block_cycles(in_tiles, tile_bytes, false);
    let fetch = transfer_cycles(in_tiles, tile_bytes) as u64;
    let half = shifted_block_cycles(in_tiles, tile_bytes, true) - block;
    u64::from(2 * m + 4) * fetch
        + u64::from(2 * m + 2) * (block - fetch)
        + u64::from(2 * m + 1) * half
}

/// Estimated cycles of the slowest core of a conv split into `slices` output-channel slices of
/// `cores` cores each, the busiest taking `most` blocks and each group's first, which reads its
/// slice's weights and multicasts them to `rects` rectangles, `sender_blocks`: the compute's
/// matmuls (tt_runtime's `CostModel::BLACKHOLE` cycles a tile per fidelity phase), the
/// reader's blocks ([`ConvWork::block_cycles`]), and the sender's weight pages read and
/// multicast once per rectangle.
fn conv_split_cycles(w: ConvWork, slices: u32, split: &Split) -> u64 {
    let group = split.work.iter().filter(|c| c.slice == 0);
    let most = u64::from(group.clone().map(|c| c.count).max().unwrap_or(0));
    let sender_blocks = u64::from(split.work.first().map_or(0, |c| c.count));
    let cores = group.count();
    let rects = match split.slices.first() {
        Some(r) => r.len(),
        None => split.ranges.len(),
    } as u64;
    let slice_tiles = u64::from(w.out_tiles / slices);
    let rows = u64::from(w.weight_rows);
    let matmul = CostModel::BLACKHOLE.matmul_cycles_per_phase as u64;
    let compute = most * slice_tiles * rows * matmul * u64::from(w.phases);
    let block = w.block_cycles;
    // The sender's DRAM pages ([`ConvPlan::weight_page_tiles`]) and one multicast of its
    // whole slice per rectangle, on its writer, which also reads the pages when the sender
    // computes blocks ([`crate::multicast::Multicast::reads_on_writer`]).
    let (reader, writer) = if cores > 1 {
        let tiles = w.weight_rows * (w.out_tiles / slices);
        let per_page = largest_divisor_within(
            if slices == 1 {
                tiles
            } else {
                w.out_tiles / slices
            },
            WEIGHT_PAGE_TILES,
        );
        let read = transfer_cycles(tiles / per_page, per_page * TILE_BYTES) as u64;
        let multicast = rects * transfer_cycles(1, tiles * TILE_BYTES) as u64;
        if sender_blocks > 0 {
            (sender_blocks * block + w.halo_cycles, read + multicast)
        } else {
            (read, multicast)
        }
    } else {
        (0, 0)
    };
    compute
        .max(most * block + w.halo_cycles)
        .max(reader)
        .max(writer)
}

/// A conv's split of `blocks` output blocks on `grid`, its output-channel slices and their
/// estimated cycles: the divisor of `out_tiles` whose [`Split::sliced`] has the fewest
/// estimated cycles ([`conv_split_cycles`]), the fewest slices among equals; one slice is
/// [`Split::sender_light`] over the grid's first cores.
fn conv_split(grid: Grid, blocks: u32, w: ConvWork) -> (u64, u32, Split) {
    let unsliced = Split::sender_light(grid, blocks);
    let mut best = (conv_split_cycles(w, 1, &unsliced), 1, unsliced);
    for slices in (2..=w.out_tiles).filter(|s| w.out_tiles % s == 0) {
        if let Some(split) = Split::sliced(grid, blocks, slices) {
            let c = conv_split_cycles(w, slices, &split);
            if c < best.0 {
                best = (c, slices, split);
            }
        }
    }
    best
}

/// The largest divisor of `n` that is at most `cap`.
pub(crate) fn largest_divisor_within(n: u32, cap: u32) -> u32 {
    (1..=cap.min(n)).rev().find(|d| n % d == 0).unwrap_or(1)
}

/// Input pixel blocks before (and after) an output block that taps reaching `reach` pixels
/// either side can touch: pixel 32b − reach is in block b − ⌈reach/32⌉, pixel 32b + 31 + reach
/// in block b + ⌊(reach + 31)/32⌋, the same number.
fn ring_reach(reach: u32) -> u32 {
    reach.div_ceil(32)
}

/// Whether a conv of this shape can read its tap rows from shifted views
/// ([`ConvPlan::shifted`]): 3×3 pad 1, whole channel tiles, W a multiple of 16 and whole blocks.
fn shifts(kernel: u32, pad: u32, in_channels: u32, height: u32, width: u32) -> bool {
    kernel == 3 && pad == 1 && in_channels % 32 == 0 && width % 16 == 0 && height * width % 32 == 0
}

/// `c` with shifted views ([`ConvPlan::shifted`]) when its shape allows them.
fn shifted_views(c: &ConvPlan) -> Option<ConvPlan> {
    shifts(c.kernel, c.pad, c.in_channels, c.height, c.width).then(|| ConvPlan {
        ring_reach: c.width / 32 + if c.width % 32 == 0 { 2 } else { 4 },
        shifted: true,
        ..c.clone()
    })
}

/// Plans the nodes the graph's outputs need, from its external inputs (or the input plane) on.
/// The input plane is uploaded by the host; the resize runs on the device
/// ([`crate::ops::resize`]), specialised for [`PlanParams::input_size`].
pub fn plan(graph: &Graph, params: &PlanParams) -> Result<Plan, PlanError> {
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
    // node can choose (conv stream depth, shifted views).
    let arena_reserve = if params.l1_activations {
        crate::arena::reserve(
            graph.nodes.iter().map(|n| {
                // The host's plane and external inputs stay where they are.
                let moves = !matches!(n.op, Op::InputPlane) && !params.external.contains(&n.name);
                let tensor = layouts
                    .get(n.name.as_str())
                    .and_then(|t| t.as_ref().ok())
                    .filter(|_| moves);
                (n.name.as_str(), n.inputs.as_slice(), tensor.copied())
            }),
            &keep_in_dram,
            &params.outlive,
            params.grid.cores(),
            params.limits.l1_alignment,
        )
    } else {
        0
    };
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
                let (resize, owned) = crate::ops::resize::plan_node(
                    &node.name,
                    &node.inputs[0],
                    input_tensor(0)?,
                    (*width, *height),
                    params.grid,
                    precision,
                )?;
                buffers.extend(owned);
                nodes.push(resize);
                on_device.insert(&node.name);
            }
            Op::Conv2d {
                weights,
                in_channels,
                out_channels,
                kernel,
                pad,
                relu,
            } => {
                // The frame (FrameRows) feeds only the conv that reads it: crate::ops::frame_conv.
                let frame = crate::ops::frame_conv::input_shape(
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
                let shape = ActivationShape {
                    channels: *out_channels,
                    ..input
                };
                let k_tiles = conv_k_tiles(*in_channels, *kernel) as u32;
                let out_tiles = tiles(*out_channels) as u32;
                let in_tiles = tiles(*in_channels) as u32;
                let width = shape.width as u32;
                let format = precision.format;
                let weight_parts = conv_weight_parts(format) as u32;
                // Half-block shifted views ([`ConvPlan::half_rows`]) where their estimate, with
                // the views they build around each core's run, beats row runs'.
                let mut half_rows = false;
                let (slices, split) = if frame.is_some() {
                    (1, None)
                } else {
                    let row_runs = ConvWork {
                        out_tiles,
                        weight_rows: weight_parts * k_tiles,
                        block_cycles: row_run_block_cycles(
                            *kernel as u32,
                            in_tiles,
                            k_tiles,
                            format.tile_bytes(),
                        ),
                        halo_cycles: 0,
                        phases: precision.fidelity.phases(),
                    };
                    let blocks = shape.pixel_tiles() as u32;
                    let (cycles, slices, split) = conv_split(params.grid, blocks, row_runs);
                    let halves = shifts(
                        *kernel as u32,
                        *pad as u32,
                        *in_channels as u32,
                        shape.height as u32,
                        width,
                    ) && width % 32 != 0;
                    let half = halves.then(|| {
                        conv_split(
                            params.grid,
                            blocks,
                            ConvWork {
                                block_cycles: shifted_block_cycles(
                                    in_tiles,
                                    format.tile_bytes(),
                                    true,
                                ),
                                halo_cycles: half_rows_halo_cycles(
                                    width,
                                    in_tiles,
                                    format.tile_bytes(),
                                ),
                                ..row_runs
                            },
                        )
                    });
                    match half {
                        Some((c, s, split)) if c < cycles => {
                            half_rows = true;
                            (s, Some(split))
                        }
                        _ => (slices, Some(split)),
                    }
                };
                let slice_tiles = out_tiles / slices;
                let group = largest_divisor_within(slice_tiles, precision.dst_tiles());
                let weight_name = format!("{}.weight", node.name);
                let bias_name = format!("{}.bias", node.name);
                let row_runs = ConvPlan {
                    in_channels: *in_channels as u32,
                    out_channels: *out_channels as u32,
                    kernel: *kernel as u32,
                    pad: *pad as u32,
                    relu: *relu,
                    height: shape.height as u32,
                    width,
                    in_tiles,
                    k_tiles,
                    weight_parts,
                    out_tiles,
                    slices,
                    group,
                    ring_reach: ring_reach(*pad as u32 * (width + 1)),
                    shifted: false,
                    tile_bytes: format.tile_bytes(),
                    // A slice's weights are a run of its tiles in each weight row: pages
                    // within it (so within a row) unless the slice is the whole matrix.
                    weight_page_tiles: largest_divisor_within(
                        if slices == 1 {
                            weight_parts * k_tiles * out_tiles
                        } else {
                            slice_tiles
                        },
                        WEIGHT_PAGE_TILES,
                    ),
                    weights: weight_name.clone(),
                    bias: bias_name.clone(),
                    frame_rows: frame.is_some(),
                    pooled: false,
                };
                // Resident weights and bias, the ring and the zero tile; one stage of the streams.
                let fixed = |c: &ConvPlan| {
                    c.resident_weight_tiles() * TILE_BYTES
                        + (slice_tiles + c.ring_pages() + 1) * format.tile_bytes()
                };
                let stage = |c: &ConvPlan| {
                    c.im2col_pages() * c.im2col_page_bytes() + group * format.tile_bytes()
                };
                let depth_of = |c: &ConvPlan| {
                    conv_stream_depth(params.limits.l1_usable(), arena_reserve, fixed(c), stage(c))
                };
                let conv = match shifted_views(&row_runs) {
                    Some(shifted)
                        if depth_of(&shifted) == SHIFTED_TOKENS
                            && (half_rows || !shifted.half_rows()) =>
                    {
                        shifted
                    }
                    _ => row_runs,
                };
                let depth = depth_of(&conv);
                let (weight_content, bias_content) = match format {
                    Format::Bf16 => (
                        Content::ConvWeights {
                            entry: weights.clone(),
                        },
                        Content::ConvBias {
                            entry: weights.clone(),
                        },
                    ),
                    Format::Fp32 => (
                        Content::ConvWeightsHiLo {
                            entry: weights.clone(),
                        },
                        Content::ConvBiasFp32 {
                            entry: weights.clone(),
                        },
                    ),
                };
                buffers.push(BufferPlan {
                    name: weight_name.clone(),
                    pages: weight_parts * k_tiles * out_tiles / conv.weight_page_tiles,
                    page_bytes: conv.weight_page_tiles * TILE_BYTES,
                    content: weight_content,
                    l1_offset: None,
                });
                buffers.push(BufferPlan {
                    name: bias_name.clone(),
                    pages: out_tiles,
                    page_bytes: format.tile_bytes(),
                    content: bias_content,
                    l1_offset: None,
                });
                let Some(split) = split else {
                    buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                    nodes.push(crate::ops::frame_conv::plan_node(
                        node,
                        precision,
                        params.grid,
                        conv,
                    ));
                    on_device.insert(&node.name);
                    continue;
                };
                let planned = NodePlan {
                    name: node.name.clone(),
                    inputs: node.inputs.clone(),
                    output: node.name.clone(),
                    precision,
                    split,
                    cbs: vec![
                        CbPlan {
                            page_bytes: conv.im2col_page_bytes(),
                            ..cb_of(
                                format,
                                0,
                                "cb_im2col",
                                depth * conv.im2col_pages(),
                                CbKind::Stream,
                            )
                        },
                        cb(
                            1,
                            "cb_weights",
                            conv.resident_weight_tiles(),
                            CbKind::Resident,
                        ),
                        cb_of(format, 2, "cb_bias", slice_tiles, CbKind::Resident),
                        cb_of(
                            format,
                            3,
                            "cb_ring",
                            conv.ring_pages(),
                            if conv.shifted {
                                CbKind::Resident
                            } else {
                                CbKind::Scratch
                            },
                        ),
                        cb_of(format, 4, "cb_zero", 1, CbKind::Scratch),
                        cb_of(format, 16, "cb_out", depth * group, CbKind::Stream),
                    ],
                    op: OpPlan::Conv2d(conv),
                };
                let fused =
                    ops::conv_pool::consumer(graph, node, &keep_in_dram, params).and_then(|pool| {
                        let pool_format = node_precision(params, &pool.name).format;
                        ops::conv_pool::fuse(
                            &planned,
                            pool,
                            pool_format,
                            &params.limits,
                            arena_reserve,
                        )
                        .map(|fused| (pool, fused))
                    });
                let (output, planned) = match fused {
                    Some((pool, fused)) => (pool.name.as_str(), fused),
                    None => (node.name.as_str(), planned),
                };
                buffers.extend(output_buffers(output, layout_of(output)?));
                nodes.push(planned);
                on_device.insert(output);
            }
            // Already planned with the conv it pools (ops::conv_pool).
            Op::MaxPool2 if on_device.contains(node.name.as_str()) => {}
            Op::MaxPool2 => {
                let input = input_shape(0)?;
                let shape = ActivationShape {
                    height: input.height / 2,
                    width: input.width / 2,
                    ..input
                };
                let in_tiles = input.channel_tiles() as u32;
                let select = input.format == Format::Bf16
                    && precision.fidelity >= Fidelity::HiFi2
                    && shape.width % 16 == 0;
                let cbs = if select {
                    vec![
                        cb(0, "cb_src", 8, CbKind::Stream),
                        cb(1, "cb_select", 4, CbKind::Resident),
                        cb(2, "cb_vmax", 2, CbKind::Stream),
                        cb(16, "cb_out", 2, CbKind::Stream),
                    ]
                } else {
                    vec![
                        cb_of(input.format, 0, "cb_taps", 8, CbKind::Stream),
                        cb_of(
                            input.format,
                            1,
                            "cb_cache",
                            POOL_CACHE_SLOTS,
                            CbKind::Scratch,
                        ),
                        cb_of(input.format, 16, "cb_out", 2, CbKind::Stream),
                    ]
                };
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(NodePlan {
                    name: node.name.clone(),
                    inputs: node.inputs.clone(),
                    output: node.name.clone(),
                    precision,
                    split: Split::new(params.grid, shape.pixel_tiles() as u32),
                    cbs,
                    op: OpPlan::MaxPool2(PoolPlan {
                        channels: input.channels as u32,
                        height: input.height as u32,
                        width: input.width as u32,
                        in_tiles,
                        cache_slots: POOL_CACHE_SLOTS,
                        select,
                    }),
                });
                on_device.insert(&node.name);
            }
            Op::Softmax => ops::softmax_fold::defer(graph, node)?,
            Op::DustbinFold { cell } => {
                let logits = ops::softmax_fold::logits(graph, node, params)?;
                let input = on_device
                    .contains(logits)
                    .then(|| layout_of(logits).ok().and_then(|t| t.activation()))
                    .flatten()
                    .ok_or_else(|| PlanError::NotOnDevice {
                        node: node.name.clone(),
                        input: logits.to_string(),
                    })?;
                buffers.extend(output_buffers(&node.name, layout_of(&node.name)?));
                nodes.push(ops::softmax_fold::node_plan(
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
                nodes.push(ops::l2_normalize::node_plan(
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
                let (scratch, step) = ops::nms::plan(
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
                let select = ops::select_keypoints::plan(
                    &node.name,
                    &node.inputs[0],
                    candidates,
                    *threshold,
                    *border,
                    precision,
                    params.grid,
                )?;
                if let Some(own) = ops::select_keypoints::place(select, &mut nodes) {
                    nodes.push(own);
                }
                on_device.insert(&node.name);
            }
            Op::SampleDescriptors { cell } => {
                let tensors = (0..node.inputs.len())
                    .map(&input_tensor)
                    .collect::<Result<Vec<_>, _>>()?;
                nodes.push(ops::sample::plan_node(
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
    Ok(Plan {
        grid: params.grid,
        limits: params.limits,
        buffers,
        nodes,
        l1_activations: params.l1_activations,
        keep_in_dram,
        outlive: params.outlive.clone(),
        external_l1: params.external_l1.clone(),
    })
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

    #[test]
    fn split_gives_the_first_cores_one_more_block() {
        let s = Split::new(Grid { x: 4, y: 2 }, 10);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts, vec![2, 2, 1, 1, 1, 1, 1, 1]);
        assert_eq!(s.work[2].start, 4);
        assert_eq!(s.work[7].core, Core { x: 3, y: 1 });
        assert_eq!(s.ranges.len(), 1);
    }

    #[test]
    fn sender_light_split_keeps_the_most_blocks_a_core_takes() {
        // 150 blocks on 120 cores: at most 2 a core, so the sender takes none and cores 1..=31
        // two each, the other 88 one each.
        let s = Split::sender_light(Grid::ETH_DISPATCH, 150);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts.len(), 120);
        assert_eq!(counts[0], 0);
        assert!(counts[1..=31].iter().all(|&c| c == 2));
        assert!(counts[32..].iter().all(|&c| c == 1));
        assert_eq!((s.work[1].start, s.work[32].start), (0, 62));
        assert_eq!(counts.iter().sum::<u32>(), 150);
        // 10 blocks on 4×2: at most 2, 7 × 2 = 14 > 10 so the sender takes 0 and the others
        // 10 over 7 (three of 2, four of 1).
        let s = Split::sender_light(Grid { x: 4, y: 2 }, 10);
        let counts: Vec<u32> = s.work.iter().map(|w| w.count).collect();
        assert_eq!(counts, vec![0, 2, 2, 2, 1, 1, 1, 1]);
        // Even splits stay even: 16 on 8 cores, 2 each.
        let s = Split::sender_light(Grid { x: 4, y: 2 }, 16);
        assert!(s.work.iter().all(|w| w.count == 2));
        // One core takes everything.
        let s = Split::sender_light(Grid { x: 1, y: 1 }, 5);
        assert_eq!((s.work.len(), s.work[0].count), (1, 5));
    }

    #[test]
    fn split_with_fewer_blocks_than_cores_uses_a_partial_row() {
        let s = Split::new(Grid::ETH_DISPATCH, 14);
        assert_eq!(s.work.len(), 14);
        assert_eq!(s.ranges.len(), 2);
        assert_eq!(s.ranges[1].end, Core { x: 1, y: 1 });
    }

    #[test]
    fn conv_streams_double_buffer_only_when_l1_allows() {
        // 100 fixed + 2 stages of 20 = 140: two stages fit in 140, one in 139.
        assert_eq!(conv_stream_depth(140, 0, 100, 20), 2);
        assert_eq!(conv_stream_depth(139, 0, 100, 20), 1);
        // A reserve of 10 fits beside one stage (130) but not two (150): one stage.
        assert_eq!(conv_stream_depth(140, 10, 100, 20), 1);
        // A reserve of 30 fits beside neither: dropping a stage would not help, two stay.
        assert_eq!(conv_stream_depth(140, 30, 100, 20), 2);
        // Two stages and the reserve fit.
        assert_eq!(conv_stream_depth(200, 30, 100, 20), 2);
    }

    /// SuperPoint at 640×480 on 12×10: shifted views for the 3×3 convs at W 640, 320 and 160
    /// with whole channel tiles (ring: a zero slot, W/32 + 2 blocks ahead, W/32 behind and 2
    /// the compute may still read, three tiles a block and channel tile; cb_im2col: two
    /// 16-byte pages), row runs for the 1-channel conv1a and the 80-wide convs.
    #[test]
    fn shifted_views_where_blocks_stay_inside_image_rows() {
        let planned = plan(&superpoint(640, 480), &PlanParams::default()).expect("plans");
        let conv = |name: &str| {
            planned
                .nodes
                .iter()
                .find(|n| n.name == name)
                .and_then(|n| match &n.op {
                    OpPlan::Conv2d(c) => Some((c.clone(), n.cbs.clone())),
                    _ => None,
                })
                .expect("a conv node")
        };
        for (name, row_blocks, in_tiles) in [
            ("conv1b", 20, 2),
            ("conv2a", 10, 2),
            ("conv2b", 10, 2),
            ("conv3a", 5, 2),
            ("conv3b", 5, 4),
        ] {
            let (c, cbs) = conv(name);
            assert!(c.shifted, "{name}");
            assert_eq!(c.ring_reach, row_blocks + 2, "{name}");
            assert_eq!(c.ring_blocks(), 2 * row_blocks + 4, "{name}");
            let ring = cbs.iter().find(|b| b.name == "cb_ring").expect("ring");
            assert_eq!(ring.pages, (2 * row_blocks + 5) * 3 * in_tiles, "{name}");
            assert_eq!(ring.kind, CbKind::Resident, "{name}");
            let im2col = cbs.iter().find(|b| b.name == "cb_im2col").expect("im2col");
            assert_eq!((im2col.pages, im2col.page_bytes), (2, 16), "{name}");
        }
        for name in ["conv1a", "conv4a", "conv4b", "convPa", "convDa", "convPb"] {
            assert!(!conv(name).0.shifted, "{name}");
        }
    }

    /// Weight DRAM pages of up to 8 tiles, a divisor of the weight tiles: conv1a 1 × 2 tiles
    /// (2), conv1b 18 × 2 (6), conv4a 36 × 4 (8), convPb 8 × 3 (8: 24 tiles).
    #[test]
    fn conv_weights_are_read_in_pages_of_up_to_8_tiles() {
        let planned = plan(&superpoint(640, 480), &PlanParams::default()).expect("plans");
        for (name, per_page, pages) in [
            ("conv1a", 2, 1),
            ("conv1b", 6, 6),
            ("conv4a", 8, 18),
            ("convPb", 8, 3),
        ] {
            let node = planned.nodes.iter().find(|n| n.name == name).expect(name);
            let OpPlan::Conv2d(c) = &node.op else {
                panic!("{name} is not a conv");
            };
            assert_eq!(c.weight_page_tiles, per_page, "{name}");
            let buffer = planned
                .buffers
                .iter()
                .find(|b| b.name == c.weights)
                .expect("weights buffer");
            assert_eq!(
                (buffer.pages, buffer.page_bytes),
                (pages, per_page * 2048),
                "{name}"
            );
        }
    }

    /// 12×10 in 4 slices: groups of 30 cores as 3 columns (one rectangle, where rows would
    /// take two), 5 blocks each of 150 with no slack for the sender. 11×10 in 4: groups of 27
    /// as at most three rectangles either way, so rows: 2 rows and 5 cores, ⌈150/27⌉ = 6 blocks
    /// at most, the sender none (26 × 6 ≥ 150); the 2 cores left over get no work.
    #[test]
    fn sliced_splits_give_each_slice_a_group_of_rectangles() {
        let s = Split::sliced(Grid::ETH_DISPATCH, 150, 4).expect("4 groups of 30");
        assert_eq!(s.work.len(), 120);
        for (slice, rects) in s.slices.iter().enumerate() {
            let x = 3 * slice as u32;
            assert_eq!(
                rects,
                &vec![CoreRange {
                    start: Core { x, y: 0 },
                    end: Core { x: x + 2, y: 9 },
                }]
            );
            let group: Vec<&CoreWork> = s.work.iter().filter(|w| w.slice == slice as u32).collect();
            assert_eq!(group.len(), 30);
            assert_eq!(group[0].core, Core { x, y: 0 });
            assert!(group.iter().all(|w| w.count == 5));
            assert_eq!(group[29].start, 145);
        }
        assert_eq!(s.ranges, Grid::ETH_DISPATCH.first_cores(120));

        let s = Split::sliced(Grid::TENSIX_DISPATCH, 150, 4).expect("4 groups of 27");
        assert_eq!(s.work.len(), 108);
        assert_eq!(
            s.slices[1],
            vec![
                CoreRange {
                    start: Core { x: 5, y: 2 },
                    end: Core { x: 10, y: 2 },
                },
                CoreRange {
                    start: Core { x: 0, y: 3 },
                    end: Core { x: 10, y: 3 },
                },
                CoreRange {
                    start: Core { x: 0, y: 4 },
                    end: Core { x: 9, y: 4 },
                },
            ]
        );
        for slice in 0..4 {
            let group: Vec<&CoreWork> = s.work.iter().filter(|w| w.slice == slice).collect();
            let cores: u32 = s.slices[slice as usize].iter().map(CoreRange::len).sum();
            assert_eq!((group.len(), cores), (27, 27));
            assert!(group.iter().all(|w| s.slices[slice as usize]
                .iter()
                .any(|r| (r.start.x..=r.end.x).contains(&w.core.x)
                    && (r.start.y..=r.end.y).contains(&w.core.y))));
            assert_eq!(group[0].count, 0);
            assert_eq!(group.iter().map(|w| w.count).max(), Some(6));
            assert_eq!(group.iter().map(|w| w.count).sum::<u32>(), 150);
        }
        // More slices than cores: no group.
        assert_eq!(Split::sliced(Grid { x: 2, y: 1 }, 10, 4), None);
    }

    /// SuperPoint at 640×480: convPa, convDa (2 × 4 of 8 output tiles) and convDb slice on
    /// both grids, each group 5 full rows; conv4a/b stay unsliced (their weights' sender bounds
    /// them, and 2 slices would make the reader, at 3 blocks a core, slower still), as do the
    /// larger convs (an even split leaves nothing to gain) and convPb (3 output tiles; its
    /// sender reads little).
    #[test]
    fn the_80x60_convs_slice_where_it_shortens_the_slowest_core() {
        for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
            let params = PlanParams {
                grid,
                ..PlanParams::default()
            };
            let planned = plan(&superpoint(640, 480), &params).expect("plans");
            for node in &planned.nodes {
                let OpPlan::Conv2d(c) = &node.op else {
                    continue;
                };
                let sliced = ["convPa", "convDa", "convDb"].contains(&node.name.as_str());
                assert_eq!(c.slices, if sliced { 2 } else { 1 }, "{}", node.name);
                let weights = node
                    .cbs
                    .iter()
                    .find(|b| b.name == "cb_weights")
                    .expect("cb");
                assert_eq!(weights.pages, c.weight_parts * c.k_tiles * c.slice_tiles());
                if sliced {
                    assert_eq!(c.group, 4, "{}", node.name);
                    assert_eq!(c.weight_page_tiles, 4, "{}", node.name);
                    for (i, rects) in node.split.slices.iter().enumerate() {
                        let y = 5 * i as u32;
                        assert_eq!(rects.len(), 1);
                        assert_eq!(rects[0].start, Core { x: 0, y });
                        assert_eq!(
                            rects[0].end,
                            Core {
                                x: grid.x - 1,
                                y: y + 4
                            }
                        );
                    }
                } else {
                    assert!(node.split.slices.is_empty(), "{}", node.name);
                }
            }
        }
    }

    /// A 64→32 3×3 conv at 80×60 (W = 2 · 32 + 16; 150 blocks), whose reader bounds it: on a
    /// 7×1 grid (22 blocks a core) the half-block shifted views (about 0.9k cycles a block
    /// against row runs' 1.8k, plus about 5k for the views around each core's run) estimate
    /// fewer cycles; on 12×10 (2 blocks a core) row runs do. Transfer cycles by hand from
    /// tt_runtime's `CostModel::BLACKHOLE`.
    #[test]
    fn half_block_shifted_views_where_cores_have_many_blocks() {
        // 4 tiles fetched (2 KiB at 58 B a cycle, + 8 to issue: 173.2), 2 moves of 8160 B
        // (at 60: 144 each), 32 row fixes of 32 B (at 3: 18.7), 24 face pairs (at 48: 29.3).
        assert_eq!(shifted_block_cycles(4, 2048, true), 1763);
        // 8 more fetched (173 each), 6 more views (1059 − 173), 5 more half parts (1763 − 1059).
        assert_eq!(
            half_rows_halo_cycles(80, 4, 2048),
            8 * 173 + 6 * 886 + 5 * 704
        );
        let row_runs = ConvWork {
            out_tiles: 1,
            weight_rows: 18,
            block_cycles: row_run_block_cycles(3, 2, 18, 2048),
            halo_cycles: 0,
            phases: 2,
        };
        let half = ConvWork {
            block_cycles: shifted_block_cycles(2, 2048, true),
            halo_cycles: half_rows_halo_cycles(80, 2, 2048),
            ..row_runs
        };
        for (grid, halves) in [(Grid { x: 7, y: 1 }, true), (Grid::ETH_DISPATCH, false)] {
            let (rows, _, _) = conv_split(grid, 150, row_runs);
            let (halved, _, _) = conv_split(grid, 150, half);
            assert_eq!(halved < rows, halves, "{grid:?}: {halved} vs {rows}");
        }
    }

    #[test]
    fn group_and_ring_by_hand() {
        assert_eq!(largest_divisor_within(8, 4), 4);
        assert_eq!(largest_divisor_within(3, 4), 3);
        assert_eq!(largest_divisor_within(5, 4), 1);
        // 3×3 at 80 wide: 81 pixels either side; pixel −81 is in block −3, pixel 31 + 81 = 112
        // in block 3.
        assert_eq!(ring_reach(81), 3);
        // 3×3 at 640 wide: 641 pixels; −641 in block −21, 672 in block 21.
        assert_eq!(ring_reach(641), 21);
        // 1×1: the block itself.
        assert_eq!(ring_reach(0), 0);
        // Reach 32: −32 in block −1, 63 in block 1; reach 33: −33 in block −2, 64 in block 2.
        assert_eq!(ring_reach(32), 1);
        assert_eq!(ring_reach(33), 2);
    }
}
