//! The plan of a `conv2d` (its kernels are [`crate::ops::conv2d`]'s, the frame conv's
//! [`crate::ops::frame_conv`]'s): its shape in tiles, how its output blocks and channels are
//! split over the cores (the reader's and the matrix unit's cycles estimated from
//! tt_runtime's `CostModel::BLACKHOLE`), row runs or shifted views, its stream depth and CBs,
//! and its weight and bias buffers; or the same for convs of one input and shape computed in
//! one step, each slice one conv's ([`ConvPlan::fused`]).

use serde::{Deserialize, Serialize};
use superpoint_graph::Node;
use tt_runtime::CostModel;

use crate::device::{Core, Fidelity, Format, Grid, Precision};
use crate::layout::{conv_k_tiles, conv_weight_parts, tiles, ActivationShape};

use super::{
    cb, cb_of, frame_conv, largest_divisor_within, BufferPlan, CbKind, CbPlan, Content, NodePlan,
    OpPlan, PlanError, PlanParams, Split,
};

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
    /// With [`ConvPlan::pooled`], its units are half pooled blocks (one conv block of each row:
    /// [`super::conv_pool::unit_blocks`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub half_units: bool,
    /// The compute puts each group's bias into DST as an identity tile (CB `cb_identity`, which
    /// a data-movement kernel writes) times the bias tiles, a matmul like the conv's own, instead
    /// of copying it between a copy init and a matmul init: exact where SrcA keeps the whole bias
    /// (bf16 at HiFi2 and above, [`identity_bias_exact`]). Every conv compute does where it is
    /// exact (the plain conv's writer writes the tile, the fused pool's writer) but the frame
    /// conv's, whose bias is a row of K instead ([`ConvPlan::bias_row`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identity_bias: bool,
    /// The frame conv's bias is the last row of its K tile (`k_tiles` 1, its 9 taps in rows
    /// 0..8): the reader copies the bias into row 31 of each weight tile once they land and sets
    /// row 31 of its im2col blocks to 1.0, so the matmul adds the bias (exactly: 1.0 times a bf16
    /// value at HiFi2 and above, after the taps' products) and DST needs no bias of its own.
    /// Where [`identity_bias_exact`] holds, instead of [`ConvPlan::identity_bias`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub bias_row: bool,
    /// Further convs of the same input and shape computed in this step ([`FusedConv`]): the
    /// slices are cut evenly between the node's own output and theirs, in this order
    /// ([`ConvPlan::slice_output`]). `out_tiles` is each output's, `slices` all of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fused: Vec<FusedConv>,
    /// The weights and bias stay in every core's L1 from load on ([`super::resident`]), or an
    /// earlier step staged them in arena slots ([`super::staged`]): their CBs live in the
    /// buffers' resident copies or slots, so the step's cores neither read nor multicast them
    /// and no core is a sender. Only where [`ConvPlan::may_keep_weights_in_l1`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weights_in_l1: bool,
    /// The frame conv's cores whose reader writes the even output blocks of each image row
    /// rather than the odd ones (the writer writes the others), where that crosses fewer NoC
    /// links ([`super::frame_conv::reader_writes_even`]). Empty for every other conv.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reader_even: Vec<Core>,
    /// The writer builds the views of the row above each core's first output block
    /// ([`super::writer_views`]); the reader those beside and below.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub writer_views: bool,
}

/// A conv fused into another conv's step ([`ConvPlan::fused`]): it reads the same input with the
/// same shape, and its slices write its own output from its own weights and bias, in the layouts
/// it has unfused (its consumers and the other programs naming its buffers see no difference).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FusedConv {
    /// Its node, whose output buffer it writes.
    pub node: String,
    pub weights: String,
    pub bias: String,
}

/// Whether the identity tile times a conv's bias tiles puts the bias into DST exactly
/// ([`ConvPlan::identity_bias`]): bf16 activations (the bias's format) at HiFi2 or above, where
/// SrcA holds a bf16 tile whole and SrcB the identity's ones and zeros.
pub fn identity_bias_exact(precision: Precision) -> bool {
    precision.format == Format::Bf16 && precision.fidelity >= Fidelity::HiFi2
}

/// Whether a conv step may keep its weights and bias in L1 copies ([`ConvPlan::weights_in_l1`]):
/// one unsliced conv (`slices` 1) alone in its step (no `fused` convs) that does not read the
/// frame (`frame`: the frame conv's kernels fill their own weight CBs).
pub fn may_keep_weights_in_l1(frame: bool, slices: u32, fused: usize) -> bool {
    !frame && slices == 1 && fused == 0
}

fn one_slice() -> u32 {
    1
}

impl ConvPlan {
    /// The outputs the step writes: the node's own and its [`ConvPlan::fused`] convs'.
    pub fn outputs(&self) -> u32 {
        1 + self.fused.len() as u32
    }

    /// Whether this step may keep its weights and bias in L1 copies as planned
    /// ([`may_keep_weights_in_l1`]); [`ConvPlan::weights_in_l1`] says whether it does.
    pub fn may_keep_weights_in_l1(&self) -> bool {
        may_keep_weights_in_l1(self.frame_rows, self.slices, self.fused.len())
    }

    /// Output tiles each core computes: its slice of the `out_tiles` of every output.
    pub fn slice_tiles(&self) -> u32 {
        self.out_tiles * self.outputs() / self.slices.max(1)
    }

    /// Which output slice `slice` computes (0: the node's own, `i`: `fused[i − 1]`) and its
    /// first tile there: the first `slices / outputs` slices cut the first output, and so on.
    pub fn slice_output(&self, slice: u32) -> (u32, u32) {
        let per_output = (self.slices / self.outputs()).max(1);
        (slice / per_output, slice % per_output * self.slice_tiles())
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

    /// Im2col tiles the reader pushes at a time as it builds a block (its hand-offs, on which
    /// the compute's first group of output tiles starts): a tap row of a 3×3 pad-1 conv, a
    /// channel tile of a 1×1 conv, a tap otherwise; the whole block when it gathers elements,
    /// and with shifted views the block's one page.
    pub fn im2col_handoff_tiles(&self) -> u32 {
        if self.shifted || !self.copies_rows() {
            self.im2col_pages()
        } else if self.kernel == 3 && self.pad == 1 {
            3 * self.in_tiles
        } else if self.kernel == 1 {
            1
        } else {
            self.in_tiles
        }
    }

    /// Where a block's first group of output tiles waits for the reader's hand-offs: (K step,
    /// pages) before each, every [`ConvPlan::im2col_handoff_tiles`] tiles the next hand-off's
    /// pages; with shifted views the block's one page before tap row 2, the only one the reader
    /// completes in the block's own step (`conv2d/act_tile.cpp.tera`'s `WaitIm2col`).
    pub fn im2col_waits(&self) -> Vec<(u32, u32)> {
        if self.shifted {
            return vec![(2 * self.k_tiles / 3, 1)];
        }
        let step = self.im2col_handoff_tiles();
        (0..self.k_tiles)
            .step_by(step as usize)
            .map(|k| (k, step))
            .collect()
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

const TILE_BYTES: u32 = 2048;

/// The CB of a conv's identity tile ([`ConvPlan::identity_bias`]), the fused pool's too.
pub const IDENTITY_CB: u32 = 8;
/// The name of a conv's weights CB (the frame conv's too), which lives in the weights' L1 copy
/// with [`ConvPlan::weights_in_l1`].
pub const WEIGHTS_CB_NAME: &str = "cb_weights";
/// The name of a conv's bias CB (the frame conv's too), which lives in the bias's L1 copy with
/// [`ConvPlan::weights_in_l1`].
pub const BIAS_CB_NAME: &str = "cb_bias";
/// Most weight tiles in one page of a conv's weights buffer (16 KiB of bf16 tiles, the largest
/// NoC transfer the cost model distinguishes).
pub const WEIGHT_PAGE_TILES: u32 = 8;
/// Bytes of a data-less `cb_im2col` page (shifted views): the L1 alignment.
pub(crate) const TOKEN_BYTES: u32 = 16;
/// Pages of `cb_im2col` with shifted views: output blocks the reader may complete ahead of the
/// compute (double-buffered, as the planner requires for shifted views).
pub const SHIFTED_TOKENS: u32 = 2;

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
/// `cores` cores each, the busiest taking `most` blocks and each group's first, one of its
/// senders, `sender_blocks`: the compute's matmuls (tt_runtime's `CostModel::BLACKHOLE` cycles
/// a tile per fidelity phase), the reader's blocks ([`ConvWork::block_cycles`]), and the slice's
/// weight pages read and multicast once per rectangle as if by one sender (an upper bound where
/// several share them, [`crate::multicast`]; kept so, the planner's choices stay those it made
/// with one sender).
fn conv_split_cycles(w: ConvWork, slices: u32, split: &Split) -> u64 {
    let (tiles, per_page) = weight_pages(w, slices);
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

/// A slice's weight tiles when a conv of `w` is sliced in `slices`, and the tiles of each of
/// their DRAM pages ([`ConvPlan::weight_page_tiles`]).
fn weight_pages(w: ConvWork, slices: u32) -> (u32, u32) {
    let tiles = w.weight_rows * (w.out_tiles / slices);
    let per_page = largest_divisor_within(
        if slices == 1 {
            tiles
        } else {
            w.out_tiles / slices
        },
        WEIGHT_PAGE_TILES,
    );
    (tiles, per_page)
}

/// A conv's split of `blocks` output blocks on `grid`, its output-channel slices and their
/// estimated cycles: the divisor of `out_tiles` whose [`Split::sliced`] has the fewest
/// estimated cycles ([`conv_split_cycles`]), the fewest slices among equals; one slice is
/// [`Split::sender_light`] over the grid's first cores. A step of `outputs` convs
/// ([`ConvPlan::fused`], `out_tiles` all of theirs) takes only slices of one output each (a
/// multiple of `outputs`), and at least `least` of them; `None` when none of those has a core
/// a group.
fn conv_split(
    grid: Grid,
    blocks: u32,
    w: ConvWork,
    outputs: u32,
    least: u32,
) -> Option<(u64, u32, Split)> {
    let l1_pages = |slices: u32| {
        let (tiles, per_page) = weight_pages(w, slices);
        tiles / per_page
    };
    let unsliced = (least <= 1).then(|| {
        let split = Split::sender_light(grid, blocks, l1_pages(1));
        (conv_split_cycles(w, 1, &split), 1, split)
    });
    let sliced = (2..=w.out_tiles)
        .filter(|s| w.out_tiles % s == 0 && s % outputs == 0 && *s >= least)
        .filter_map(|slices| {
            Split::sliced(grid, blocks, slices, l1_pages(slices))
                .map(|split| (conv_split_cycles(w, slices, &split), slices, split))
        });
    unsliced
        .into_iter()
        .chain(sliced)
        .min_by_key(|(cycles, slices, _)| (*cycles, *slices))
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

/// A `conv2d` node's parameters as the graph gives them.
pub(super) struct ConvOp<'a> {
    pub weights: &'a str,
    pub in_channels: usize,
    pub out_channels: usize,
    pub kernel: usize,
    pub pad: usize,
    pub relu: bool,
    /// The convs fused into its step (node, weight entry; [`ConvPlan::fused`]).
    pub fused: &'a [(&'a str, &'a str)],
    /// Keep its weights and bias in L1 copies where it can ([`ConvPlan::weights_in_l1`]).
    pub resident: bool,
    /// Take its weights and bias from an arena slot the step of this node fills where it can
    /// ([`super::staged`], [`ConvPlan::weights_in_l1`]).
    pub staged_by: Option<&'a str>,
    /// Slice its output channels in at least this many ([`ConvPlan::slices`]; 1: as its
    /// estimate chooses), for a pool fused with it ([`super::conv_pool`]).
    pub least_slices: u32,
}

/// Plans conv `node` (`op`) reading an activation of shape `input` (the frame, read by the
/// frame conv's kernels, when `frame`) at `precision`, leaving the L1 arena and the resident
/// weights `arena_reserve` bytes, its weights and bias resident in L1 when `op.resident`, or
/// staged in arena slots by step `op.staged_by` ([`super::BufferPlan::staged_by`]), where the
/// step may keep them in L1 ([`may_keep_weights_in_l1`], [`ConvPlan::weights_in_l1`]): its
/// weight and bias buffers and its node, the conv alone (the caller may fuse the pool
/// after it, [`super::conv_pool`]), or with the convs `op.fused` (the same input and shape, not
/// the frame) in one step named by all of them joined by `+`
/// ([`ConvPlan::fused`]); their weight and bias buffers too, their outputs are the caller's.
pub(super) fn plan_node(
    node: &Node,
    op: &ConvOp<'_>,
    input: ActivationShape,
    frame: bool,
    precision: Precision,
    params: &PlanParams,
    arena_reserve: u32,
) -> Result<(Vec<BufferPlan>, NodePlan), PlanError> {
    let fused = op.fused;
    let shape = ActivationShape {
        channels: op.out_channels,
        ..input
    };
    let k_tiles = conv_k_tiles(op.in_channels, op.kernel) as u32;
    let out_tiles = tiles(op.out_channels) as u32;
    let in_tiles = tiles(op.in_channels) as u32;
    let width = shape.width as u32;
    let format = precision.format;
    let weight_parts = conv_weight_parts(format) as u32;
    let blocks = shape.pixel_tiles() as u32;
    // Half-block shifted views ([`ConvPlan::half_rows`]) where their estimate, with
    // the views they build around each core's run, beats row runs'.
    let mut half_rows = false;
    let outputs = 1 + fused.len() as u32;
    let (slices, split) = if frame {
        (1, None)
    } else {
        let row_runs = ConvWork {
            out_tiles: outputs * out_tiles,
            weight_rows: weight_parts * k_tiles,
            block_cycles: row_run_block_cycles(
                op.kernel as u32,
                in_tiles,
                k_tiles,
                format.tile_bytes(),
            ),
            halo_cycles: 0,
            phases: precision.fidelity.phases(),
        };
        // Fused convs take at least `outputs` times the slices one of them takes alone, so
        // no core holds more of the weights than it would then (the L1 the arena and the
        // streams need stays theirs).
        let alone = ConvWork {
            out_tiles,
            ..row_runs
        };
        let least = match conv_split(params.grid, blocks, alone, 1, 1) {
            Some((_, slices, _)) if outputs > 1 => outputs * slices,
            _ => 1,
        }
        .max(op.least_slices);
        let (cycles, slices, split) = conv_split(params.grid, blocks, row_runs, outputs, least)
            .ok_or_else(|| PlanError::FusedConvs {
                node: node.name.clone(),
                convs: outputs,
                cores: params.grid.cores(),
            })?;
        let halves = shifts(
            op.kernel as u32,
            op.pad as u32,
            op.in_channels as u32,
            shape.height as u32,
            width,
        ) && width % 32 != 0;
        let half = halves.then(|| {
            conv_split(
                params.grid,
                blocks,
                ConvWork {
                    block_cycles: shifted_block_cycles(in_tiles, format.tile_bytes(), true),
                    halo_cycles: half_rows_halo_cycles(width, in_tiles, format.tile_bytes()),
                    ..row_runs
                },
                outputs,
                least,
            )
        });
        match half.flatten() {
            Some((c, s, split)) if c < cycles => {
                half_rows = true;
                (s, Some(split))
            }
            _ => (slices, Some(split)),
        }
    };
    let weights_in_l1 = (op.resident || op.staged_by.is_some())
        && may_keep_weights_in_l1(frame, slices, fused.len());
    let staged_by = op.staged_by.filter(|_| weights_in_l1 && !op.resident);
    // Resident weights have no sender to spare: every core takes its even share.
    let split = match split {
        Some(_) if weights_in_l1 => Some(Split::new(params.grid, blocks)),
        split => split,
    };
    let slice_tiles = outputs * out_tiles / slices;
    let group = largest_divisor_within(slice_tiles, precision.dst_tiles());
    let row_runs = ConvPlan {
        in_channels: op.in_channels as u32,
        out_channels: op.out_channels as u32,
        kernel: op.kernel as u32,
        pad: op.pad as u32,
        relu: op.relu,
        height: shape.height as u32,
        width,
        in_tiles,
        k_tiles,
        weight_parts,
        out_tiles,
        slices,
        group,
        ring_reach: ring_reach(op.pad as u32 * (width + 1)),
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
        weights: format!("{}.weight", node.name),
        bias: format!("{}.bias", node.name),
        frame_rows: frame,
        pooled: false,
        half_units: false,
        identity_bias: identity_bias_exact(precision),
        bias_row: false,
        fused: fused
            .iter()
            .map(|(name, _)| FusedConv {
                node: name.to_string(),
                weights: format!("{name}.weight"),
                bias: format!("{name}.bias"),
            })
            .collect(),
        weights_in_l1,
        reader_even: Vec::new(),
        writer_views: false,
    };
    let identity_tiles = u32::from(row_runs.identity_bias);
    // Resident weights and bias (unless in their buffers' L1 copies), identity tile, the ring
    // and the zero tile; one stage of the streams.
    let fixed = |c: &ConvPlan| {
        let weights = if weights_in_l1 {
            0
        } else {
            c.resident_weight_tiles() * TILE_BYTES + slice_tiles * format.tile_bytes()
        };
        weights + identity_tiles * TILE_BYTES + (c.ring_pages() + 1) * format.tile_bytes()
    };
    let stage =
        |c: &ConvPlan| c.im2col_pages() * c.im2col_page_bytes() + group * format.tile_bytes();
    let depth_of = |c: &ConvPlan| {
        conv_stream_depth(params.limits.l1_usable(), arena_reserve, fixed(c), stage(c))
    };
    let conv = match shifted_views(&row_runs) {
        Some(shifted)
            if depth_of(&shifted) == SHIFTED_TOKENS && (half_rows || !shifted.half_rows()) =>
        {
            shifted
        }
        _ => row_runs,
    };
    let depth = depth_of(&conv);
    // The weights and bias of each conv the step computes, in the same pages.
    let buffers = [(node.name.as_str(), op.weights)]
        .into_iter()
        .chain(fused.iter().copied())
        .flat_map(|(name, entry)| {
            let entry = entry.to_string();
            let (weights, bias) = match format {
                Format::Bf16 => (
                    Content::ConvWeights {
                        entry: entry.clone(),
                    },
                    Content::ConvBias { entry },
                ),
                Format::Fp32 => (
                    Content::ConvWeightsHiLo {
                        entry: entry.clone(),
                    },
                    Content::ConvBiasFp32 { entry },
                ),
            };
            [
                BufferPlan {
                    name: format!("{name}.weight"),
                    pages: weight_parts * k_tiles * out_tiles / conv.weight_page_tiles,
                    page_bytes: conv.weight_page_tiles * TILE_BYTES,
                    content: weights,
                    l1_offset: None,
                    resident: weights_in_l1 && staged_by.is_none(),
                    staged_by: staged_by.map(str::to_string),
                },
                BufferPlan {
                    name: format!("{name}.bias"),
                    pages: out_tiles,
                    page_bytes: format.tile_bytes(),
                    content: bias,
                    l1_offset: None,
                    resident: weights_in_l1 && staged_by.is_none(),
                    staged_by: staged_by.map(str::to_string),
                },
            ]
        })
        .collect();
    let Some(split) = split else {
        return Ok((
            buffers,
            frame_conv::plan_node(node, precision, params.grid, conv),
        ));
    };
    let mut cbs = vec![
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
        CbPlan {
            buffer: weights_in_l1.then(|| conv.weights.clone()),
            ..cb(
                1,
                WEIGHTS_CB_NAME,
                conv.resident_weight_tiles(),
                CbKind::Resident,
            )
        },
        CbPlan {
            buffer: weights_in_l1.then(|| conv.bias.clone()),
            ..cb_of(format, 2, BIAS_CB_NAME, slice_tiles, CbKind::Resident)
        },
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
    ];
    if conv.identity_bias {
        cbs.push(cb(IDENTITY_CB, "cb_identity", 1, CbKind::Resident));
    }
    cbs.push(cb_of(format, 16, "cb_out", depth * group, CbKind::Stream));
    let planned = NodePlan {
        name: [node.name.as_str()]
            .into_iter()
            .chain(fused.iter().map(|(name, _)| *name))
            .collect::<Vec<_>>()
            .join("+"),
        inputs: node.inputs.clone(),
        output: node.name.clone(),
        precision,
        split,
        cbs,
        op: OpPlan::Conv2d(conv),
    };
    Ok((buffers, planned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Core;
    use crate::plan::{plan, CbKind};
    use superpoint_graph::superpoint;

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
        for name in ["conv1a", "conv4a", "conv4b", "convPa+convDa", "convPb"] {
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

    /// SuperPoint at 640×480: convDb slices on both grids (2 × 4 of its 8 output tiles, each
    /// group 5 full rows), as would convPa and convDa alone; conv4a/b stay unsliced (their
    /// weights' sender bounds them, and 2 slices would make the reader, at 3 blocks a core,
    /// slower still), as do the larger convs (an even split leaves nothing to gain) and convPb
    /// (3 output tiles; its sender reads little). conv3b on 12×10 is in 2 slices for the pool it
    /// takes (`plan::conv_pool`: a pooled row a core).
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
                let weights = node
                    .cbs
                    .iter()
                    .find(|b| b.name == WEIGHTS_CB_NAME)
                    .expect("cb");
                assert_eq!(weights.pages, c.weight_parts * c.k_tiles * c.slice_tiles());
                match node.name.as_str() {
                    "convPa+convDa" => assert_eq!(c.slices, 4),
                    "conv3b" if grid == Grid::ETH_DISPATCH => {
                        assert_eq!((c.slices, c.pooled), (2, true));
                    }
                    "convDb" => {
                        assert_eq!(c.slices, 2);
                        assert_eq!((c.group, c.weight_page_tiles), (4, 4));
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
                    }
                    _ => {
                        assert_eq!(c.slices, 1, "{}", node.name);
                        assert!(node.split.slices.is_empty(), "{}", node.name);
                    }
                }
            }
        }
    }

    /// convPa and convDa (both 128 → 256 3×3 ReLU on conv4b's output) run as one step of 16
    /// output tiles. Alone each takes 2 slices of 4 tiles (as convDb does, above), so the step
    /// takes at least 4, none holding more weights than before: 36 weight rows of 4 tiles (144
    /// tiles, 288 KiB) a core. On 12×10, 4 slices of 30 cores (3 columns, 5 blocks a core:
    /// 5 · 4 · 36 = 720 tile matmuls a core) tie with 8 of 15 (10 blocks of 2 tiles: 720) on
    /// the matrix unit, and the reader builds half the blocks: 4. On 11×10, 4 of 27 cores
    /// (⌈150/27⌉ = 6 blocks, 864 matmuls) tie with 8 of 13 (12 blocks of 2: 864): 4, on 5×5
    /// squares of 25 cores (the same 6 blocks at most, one multicast rectangle each). Slices 0
    /// and 1 write convPa's tiles 0–3 and 4–7 from its weights, 2 and 3 convDa's.
    #[test]
    fn convpa_and_convda_run_as_one_step_in_four_slices() {
        // A group of 30 cores a slice on 12×10 (3 columns); on 11×10 a 5×5 square
        // (`Split::tiled`: 27 cores a group would need two or three multicast rectangles, and
        // 150 blocks are 6 at most a core either way).
        for (grid, cores) in [(Grid::ETH_DISPATCH, 30), (Grid::TENSIX_DISPATCH, 25)] {
            let params = PlanParams {
                grid,
                ..PlanParams::default()
            };
            let planned = plan(&superpoint(640, 480), &params).expect("plans");
            let names: Vec<&str> = planned.nodes.iter().map(|n| n.name.as_str()).collect();
            assert!(!names.contains(&"convPa") && !names.contains(&"convDa"));
            let node = planned
                .nodes
                .iter()
                .find(|n| n.name == "convPa+convDa")
                .expect("the fused step");
            assert_eq!(node.inputs, vec!["conv4b".to_string()]);
            assert_eq!(node.output, "convPa");
            let OpPlan::Conv2d(c) = &node.op else {
                panic!("not a conv");
            };
            assert_eq!(
                c.fused,
                vec![FusedConv {
                    node: "convDa".into(),
                    weights: "convDa.weight".into(),
                    bias: "convDa.bias".into(),
                }]
            );
            assert_eq!((c.out_tiles, c.slices, c.slice_tiles()), (8, 4, 4));
            assert_eq!((c.group, c.weight_page_tiles), (4, 4));
            assert_eq!(c.resident_weight_tiles(), 144);
            assert_eq!(
                (0..4).map(|s| c.slice_output(s)).collect::<Vec<_>>(),
                vec![(0, 0), (0, 4), (1, 0), (1, 4)]
            );
            for slice in 0..4 {
                let group = node.split.work.iter().filter(|w| w.slice == slice);
                assert_eq!(group.clone().count(), cores, "{grid:?}");
                assert_eq!(group.map(|w| w.count).sum::<u32>(), 150);
            }
            // Both convs' weights and bias in their own buffers (72 pages of 4 tiles: a
            // slice's run in a weight row), and both outputs.
            for name in ["convPa", "convDa"] {
                let buffer = |n: String| {
                    planned
                        .buffers
                        .iter()
                        .find(|b| b.name == n)
                        .map(|b| (b.pages, b.page_bytes))
                };
                assert_eq!(buffer(format!("{name}.weight")), Some((72, 4 * 2048)));
                assert_eq!(buffer(format!("{name}.bias")), Some((8, 2048)));
                assert_eq!(buffer(name.to_string()), Some((150 * 8, 2048)));
            }
        }
    }

    /// Only convs of one input, shape and precision share a step, and only those the outputs
    /// need: pruned to convPb's side, or with convDa at another precision, convPa runs alone.
    #[test]
    fn only_alike_needed_convs_share_a_step() {
        let alone = |graph: &superpoint_graph::Graph, params: &PlanParams| {
            let planned = plan(graph, params).expect("plans");
            planned.nodes.iter().any(|n| n.name == "convPa")
                && !planned.nodes.iter().any(|n| n.name.contains('+'))
        };
        let graph = superpoint(640, 480);
        assert!(alone(&graph.pruned(&["convPb"]), &PlanParams::default()));
        let params = PlanParams {
            overrides: [(
                "convDa".to_string(),
                Precision {
                    fidelity: Fidelity::HiFi4,
                    ..Precision::PORT
                },
            )]
            .into(),
            ..PlanParams::default()
        };
        assert!(alone(&graph, &params));
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
            let (rows, _, _) = conv_split(grid, 150, row_runs, 1, 1).expect("a split");
            let (halved, _, _) = conv_split(grid, 150, half, 1, 1).expect("a split");
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
