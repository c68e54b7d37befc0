//! kernel-gen: the compiler from the SuperPoint graph to Tensix kernels and a dispatch program.
//!
//! # Pipeline
//!
//! Each stage is a module with its own typed error, and the modules depend one way, each only
//! on the stages and vocabularies before it (`tests/pipeline.rs` checks the `use crate::` edges):
//!
//! 1. [`plan`]: [`Graph`] → [`plan::Plan`] (cores, tensor placement and layout, CBs, weight
//!    distribution), each op planned by its submodule (`plan::nms`, `plan::sample`, ...; the
//!    convolution and max-pool in [`plan`] itself), on the vocabularies [`device`] and
//!    [`layout`];
//! 2. [`lower`]: the plan → kernel IR ([`kir`]: reader / compute / writer as typed calls), each
//!    op through its [`kir::Lowering`] in [`ops`] (multicasts from [`multicast`]), then the
//!    activations placed in the L1 arena ([`arena`]);
//! 3. [`check`]: L1, the kernel-config region and the dispatch command ([`dispatch`]), DST, CB
//!    protocol, runtime args, CB ids, NoC alignment, semaphores;
//! 4. [`render`]: the kernel sources through the Tera templates of `templates/`;
//! 5. [`program`]: the [`DeviceProgram`] and the kernel sources ([`Compiled`]), written as JSON
//!    and as a Rust module ([`emit`]).
//!
//! [`compile`] runs them in that order. After them: [`summary`] writes a program as text for
//! review, [`runner`] loads and runs a program on a device, [`report`] and [`model`] give its
//! static figures and modeled time (the timeline from each kernel's [`phases`]), [`variants`]
//! names the shipped programs.
//!
//! # Current state of the device design
//!
//! Every op of the SuperPoint graph lowers: the u8 plane upload and the resize, `conv2d` (any
//! odd kernel with "same" padding, bias, fused ReLU), `max_pool2`, softmax + dustbin fold, NMS
//! (r = 1..=8), keypoint candidates, L2 normalisation and descriptor sampling (each below). The
//! shipped programs are in [`variants`]. Each node is its own program (step) today, except
//! softmax with the fold, candidates with the NMS writer, and a conv with the max-pool after it
//! where every core computes whole pairs of image rows ([`ops::conv_pool`]).
//!
//! * **Placement** ([`arena`]): with [`PlanParams::l1_activations`] (the shipped main programs)
//!   the activations a program writes and reads itself live in L1, interleaved page by page over
//!   one bank per worker core (tt-metal's L1-interleaved buffers, `InterleavedAddrGen<false>`),
//!   packed by lifetime into one arena above the largest step's CBs; the rest (the host's
//!   plane, weights, graph outputs, what the host reads) stays in DRAM. What a later program
//!   on the same device reads (the NMS variants: score map, dense descriptors;
//!   [`PlanParams::outlive`]) stays alive in the arena to the program's end, and the later
//!   program reads it there ([`PlanParams::external_l1`], [`variants::shared_l1`]). A
//!   kernel's `<arg>_dram` compile-time args say which, so the kernels are the same either way.
//!   The planner leaves the arena room ([`plan::arena_room::reserve`]): a conv streams
//!   single-buffered where only that lets the most activation bytes any node has alive fit
//!   beside its CBs.
//! * **Layout**: every activation is interleaved, channels-last as a (pixels ×
//!   channels) matrix of tiles (32 pixels × 32 channels, 4-face), bf16 or Float32 as the writing
//!   node's precision says ([`Precision::PORT`] bf16, [`Precision::ACCURATE`] Float32), see
//!   [`layout`]. A node reading an activation of another format than its own is refused
//!   ([`PlanError::FormatMismatch`]).
//!   Every other tensor (image plane, score maps, keypoint candidates, descriptor rows) has one
//!   layout too, and one rule gives each op's output layout ([`layout::DeviceTensor::of`]), so
//!   separately compiled programs agree on them.
//! * **Graph cuts**: [`PlanParams::external`] names nodes whose outputs are already in DRAM
//!   when a program starts (uploaded by the host, or left by an earlier program, e.g. the score
//!   map an NMS-variant program starts from); only the nodes the graph's outputs need from
//!   there on are planned.
//! * **Work split**: output pixel blocks of 32 pixels (one tile row) are split over the first
//!   cores of the grid (row-major) in contiguous runs; the first `blocks % cores` cores take one
//!   more. Block ranges are runtime args; shapes are compile-time args.
//! * **conv2d**: the weights (K × out tiles, K = k²·in padded to 32; DRAM pages of up to 8
//!   tiles) and the bias rows fill resident CBs by DRAM reads on up to four cores of the node
//!   (its senders, each a share of the pages, spread over its rows) and NoC multicasts to the
//!   others ([`multicast`]); the senders take the fewest output blocks that keep the per-core
//!   maximum (`plan::Split::sender_light`: none at 80×60 on 12×10). Where it shortens the
//!   slowest core (convPa, convDa, convDb at 80×60) the output channels are also split: groups
//!   of cores each compute every block for a slice of the output tiles, each group's senders
//!   reading and multicasting only its slice's weights
//!   (`plan::Split::sliced`, `plan::ConvPlan::slices`). Where L1 leaves room beside the
//!   activation arena, an unsliced conv's weights and bias instead stay in every core's L1 from
//!   load on ([`plan::resident`]): its resident CBs live in those copies, no core sends them and
//!   the split is even. Then the
//!   reader keeps a ring of the input pixel blocks (32 pixels × all
//!   channel tiles) within `⌈(pad·W + pad)/32⌉` blocks of the current output block, reading each
//!   from DRAM once per core, and builds the im2col tiles from it (zero at the borders): by NoC
//!   copies inside L1 of runs of face rows that are consecutive source pixels when the channels
//!   are whole tiles (for a 3×3 pad-1 conv only each tap row's middle tap; its side taps are
//!   that tap moved by one face row in one copy, plus the rows the move gets wrong), else by
//!   zeroing the tiles that way and gathering the valid elements. For
//!   3×3 convs whose width is a multiple of 32 ([`plan::ConvPlan::shifted`]) the ring keeps
//!   each block's −1/0/+1 shifted views, which are the k tiles of one tap row, and the compute
//!   reads them from the ring itself (no im2col copy; `cb_im2col` then carries one data-less
//!   page per output block saying its tap rows are complete). The
//!   compute kernel starts DST at the bias (copy of a 32-identical-row tile), accumulates
//!   `matmul_block` over K in DST (groups of output tiles within the half-sync DST capacity),
//!   and packs in the activation format, a fused ReLU applied by the packer
//!   (`pack_relu_config(ReluConfig::zero())`, set once per kernel: no SFPU work); the writer
//!   stores the tiles.
//!   Precision is per node in the plan (default bf16, HiFi2, fp32 DST). With Float32
//!   activations the weights are a bf16 high and a bf16 low matrix stacked along K (each im2col
//!   tile multiplies both, exact at HiFi4) and the bias tiles are Float32; when the resident
//!   weights leave no room for double buffering (convPa/convDa: 1.18 MB) the im2col and output
//!   CBs hold one stage.
//! * **max_pool2**: with bf16 activations and an output width that is a multiple of 16 (all
//!   three pools of SuperPoint), each half of an output tile (16 pixels of one output row) pools
//!   two whole input tiles (input rows 2y and 2y+1, 32 columns): the reader streams the four by
//!   page reads, the compute kernel takes the SFPU maximum `V(h) = max(T(0,h), T(1,h))` of the
//!   two input rows of each half, forms each horizontal tap as `S(dx,0)·V(0) + S(dx,1)·V(1)`
//!   with 0/1 row-selection tiles `S` in SrcB (exact from HiFi2: the activation stays whole in
//!   SrcA) and takes the maximum of the two taps — no RISC-V element loops. Otherwise
//!   (narrower outputs, Float32 activations, where SrcA would cut tf32 values, LoFi) the reader
//!   gathers the four tap tiles of each (block, channel tile) through a small tile cache and the
//!   compute kernel takes their maximum with `binary_max_tile`. Where the conv before the pool
//!   gives every core whole pairs of image rows (conv1b and conv2b on 12×10) the pool runs in
//!   the conv's step ([`ops::conv_pool`]): the vertical maximum in DST as each lower-row block is
//!   packed, the same selection matmuls after every two, only the pooled tiles written.
//! * **input plane + resize** ([`ops::resize`]): the host uploads the full-size u8 plane (one
//!   DRAM page per row, padded to 64 B); the program is specialised per input size
//!   ([`PlanParams::input_size`], default the frame size, where the resize is the identity).
//!   Pillow's BILINEAR coefficients are computed on the host and passed as data: per output
//!   tile, only its non-zero band of input tiles, each 22-bit fixed-point weight split into three
//!   parts of 7 significant bits (what SrcB holds at every fidelity) whose sum is exact. Each
//!   32×32 output block: the reader converts the band from u8 to bf16 through a 256-entry table
//!   in L1; the compute kernel runs Pillow's two passes in Pillow's order (vertical first when
//!   the height shrinks by more than twice the width's shrink), the data in SrcA (exact from
//!   HiFi2 up; LoFi truncates it to 5 bits), accumulating the first two weight parts and the
//!   third in separate DST tiles so both sums are exact in fp32, and after each pass reproduces
//!   Pillow's `clip8((S + 2²¹) >> 22)` exactly (`add/sub_binary_tile`, `add/sub_unary_tile`
//!   with the 1.5·2²³ round-to-nearest trick, `relu_max_tile`; the planner checks the bound this
//!   needs), the intermediate kept as bf16 u8 values; the result is
//!   scaled by 1/255; the compute kernel then packs the block untilized three times, as is and
//!   shifted by one pixel either way inside the tile (0/1 shift matmuls, exact), and the writer
//!   puts each 32-value row stretch into the frame's row pages ([`DeviceTensor::FrameRows`]).
//!   The frame is Pillow's u8 result /255 within ½ bf16 ulp (measured: no u8 level differs on
//!   any test, max 0.496/255 from the host resize). Where the plane is as large as the frame
//!   (Pillow's resize is then a copy) the step has no compute kernel ([`ops::resize_copy`]):
//!   both data-movement cores of each core convert their half of its run of column tiles
//!   through a host-computed table of each level's frame value (the filtered path's bits) into
//!   the three copies and write them; the same frame bytes, half the step's modeled time.
//! * **conv1a** ([`ops::frame_conv`]): the one conv that reads the frame, split by image rows;
//!   per image row three NoC reads build a row-major block of its nine tap rows, the RISC-V
//!   stores the 2·(W/32 − 1) tile-edge values per tap row, and the compute kernel tilizes the
//!   block and transposes each tile into the im2col tile of the generic conv block.
//! * **sample_descriptors** ([`ops::sample`]): region `i` of the candidates on core `i`. Its
//!   count is only known at run time: the reader reads it from the counts buffer and pushes that
//!   page through `cb_count`, the compute kernel reads it with `read_tile_value`, the writer reads
//!   it itself; the loops over tiles of 32 candidates are [`kir::Trips::Counted`] (bounded by
//!   `capacity / 32`, the figure the checks and the report use; [`model`] charges the counts a
//!   run left, read back through the node's [`kir::CountSource`]). The reader computes the
//!   bilinear taps in integers (the formula ×2 is a ratio of integers; weights by long division
//!   to f32, no FPU needed) and reads each corner's 256 channels from the pixel-rows map
//!   ([`DeviceTensor::PixelRows`]) with one NoC read (512 B bf16, 1 KiB Float32) into row `c` of
//!   that corner's row-major block, and writes the weights into column 0 of four fp32 tiles
//!   (zero beyond the count). The compute kernel (fp32 DST, HiFi4 by default since weights and
//!   sums pass SrcA/SrcB as tf32) tilizes the four blocks, sums `mul_tiles_bcast_cols` products
//!   by packing with L1 accumulation, squares, `reduce_tile` row sums, adds 1e-24,
//!   `rsqrt_tile`, and scales with `pack_untilize_dest`, so the writer writes each candidate's
//!   descriptor row with one 1 KiB NoC write. CBs: `cb_rows` (0, 2 × 32 tiles of the map's
//!   format), `cb_weights` (1, fp32), `cb_scaler` (2), `cb_count` (3), scratch `cb_records` and
//!   `cb_writer_count` (4, 5), `cb_out` (16, fp32, 2 × 8 untilized tiles), `cb_sum`, `cb_sq`,
//!   `cb_inv` (24–26, fp32 intermediates), `cb_neighbours` (27, 32 tilized tiles).
//! * CBs: conv `cb_im2col` (0, 2·K tiles, or K when L1 is short; with shifted views two 16-byte
//!   pages), `cb_weights` (1, bf16), `cb_bias` (2), `cb_ring` (3, scratch, (2·reach + 1) × in
//!   tiles; with shifted views resident, a zero slot and 2·W/32 + 4 slots of 3 × in tiles,
//!   pushed once by the reader and held by the compute), `cb_zero` (4, scratch, one
//!   zeroed tile), `cb_out` (16, 2 groups or 1); the frame conv has `cb_rows` (3, 2 × W/32
//!   row-major tiles) and `cb_taps` (4, W/32) instead of the ring and the zero tile, and
//!   `cb_im2col` of 2 tiles; pool `cb_taps` (0, 2×4), `cb_cache` (1),
//!   `cb_out` (16), or for row selection `cb_src` (0, 2×4), `cb_select` (1, the 4 selection
//!   tiles), `cb_vmax` (2, the two row maxima), `cb_out` (16).
//! * **softmax + dustbin fold** ([`ops::softmax_fold`]): a `Softmax` whose only consumer is a
//!   `DustbinFold{cell: 8}` is planned with it as one program named after the fold, reading
//!   convPb's activation and writing the Float32 score map (Map layout); the 65-channel
//!   probabilities never reach DRAM. A lone softmax (or a fold without its softmax) is a typed
//!   plan error. The work unit is two map tiles (32 cells): the reader gathers their cells into
//!   one channels-last tile row through a 4-slot cache of input blocks (one per cell row of a
//!   map tile) and writes the lowest finite value into the padding channels (once per half of
//!   `cb_in`), so they leave the max and the sum. Compute (fp32 DST): reduce-MAX over the 3 channel tiles, `sub_tiles_bcast<COL>`,
//!   `exp_tile`, reduce-SUM, `recip_tile`, `mul_tiles_bcast<COL>` on the 2 kept tiles, packed
//!   Float32. The writer does the fold as a data move: channel k of a cell is row k/8, columns
//!   k%8 of its 8×8 patch, 8 consecutive values of one face row on both sides, so each cell is 8
//!   local NoC copies of 32 B into map tiles assembled in L1, each written as one 4 KiB page. CBs `cb_in`
//!   (0), `cb_scaler` (1), `cb_rows` (2, scratch), `cb_max` / `cb_exp` / `cb_recip` (3–5,
//!   Float32), `cb_out` (16, Float32), `cb_map` (17, Float32 scratch).
//! * **l2_normalize** ([`ops::l2_normalize`]): per block of 32 pixels, squares of the 8 channel
//!   tiles (Float32), reduce-SUM over all of them, `binary_max_tile` with a constant 1e-24 tile
//!   (the reference's `max(‖x‖, 1e-12)`: a zero vector stays zero), `rsqrt_tile`, and
//!   `mul_tiles_bcast<COL>` back to the input's format, packed with `pack_untilize_dest` and
//!   written as one [`DeviceTensor::PixelRows`] page per block (the sampler's layout).
//! * Both normalising ops default to **HiFi4** (a per-node override still wins): their
//!   multiplies put the broadcast factor (and for L2 the squared operand) in SrcB, which HiFi2
//!   truncates to 7 bits. Measured on the emulator: L2 at HiFi2 is up to 3.2 bf16 ulp off, at
//!   HiFi4 0.64; the score map's largest error is 7.7e-3 at HiFi2 and 4.4e-4 at HiFi4. Both
//!   need the fp32 DST of the default precision: with a bf16 DST (HiFi4) L2 is 2.2 ulp off and
//!   the map 5.5e-3.
//! * **nms** (radius 1..=8; 0 and larger radii stay on the host): the separable window maximum in
//!   two passes of one program over the map's tiles ([`ops::nms`]). The reader reads a tile and
//!   the r rows next to it of its two neighbours along the pass's axis once, each half of the
//!   rows as a strip of consecutive 64-byte face rows; a tile shifted by d rows is then 4 local
//!   NoC copies of 1 KiB (one more per face that clips at the image's edge, where the unshifted
//!   row stands in for the one beyond it); the compute kernel transposes each of the 2r+1 shifted
//!   tiles into the fp32 DST and takes their maximum with `binary_max_tile`. Pass 1 shifts along
//!   y and the writer stores the column maxima transposed in an intermediate buffer
//!   (`<node>.vertical`; faces 1 and 2 swapped, so that pass 1 copies and pass 2 reads 2 KiB
//!   runs); pass 2 shifts those along x (their rows) and transposes back, which
//!   also serves as the halo exchange between cores: each core's writer then increments semaphore
//!   0 of itself and of its neighbours in the split, and its reader starts pass 2 once it has
//!   three increments. The compute kernel then keeps S (fed by the writer through `cb_scores`)
//!   where S == max on the SFPU (`eq_binary_tile`, `where_tile`) and the writer writes the Map.
//!   Bit-identical to the reference. CBs `cb_shift` (0, 2), `cb_scores` (1, 2), `cb_window` (2, 3
//!   pages, scratch), `cb_out` (16, 2), fp32.
//! * **select_keypoints**: each core of the map's tile split scans its tiles (strict `>`
//!   threshold on f32 bit patterns, border) and appends candidate records into its region of the
//!   Candidates layout (a tile's records staged in L1, then one 8-byte page write each), then its
//!   count. Fused into the NMS writer when the NMS runs in the same program (it holds every
//!   output value); a program of its own (one data-movement kernel reading the map) when the map
//!   is already in DRAM. Fused with a positive normal threshold, the NMS compute kernel also
//!   makes candidate bits (`max(N, T) == T` on the SFPU, times a tile of powers of two on the
//!   matrix unit: one word per 8 columns of each row, [`plan::select_keypoints::candidate_bits`]),
//!   so the writer reads 4 words per tile row and touches only the candidates; its per-record
//!   work is a [`kir::Trips::Counted`] loop over the region's count. The host merges, orders and
//!   cuts ([`ops::select_keypoints::merge`], DESIGN §2 step 5).
//!
//! * **Float32 on silicon**: the unpacker cuts a Float32 tile to TF32 on its way into SrcA/SrcB.
//!   Where a compute kernel copies or transposes Float32 tiles into DST and needs them exact (the
//!   conv bias, the gathered pool taps, the L2 floor, NMS's shifted tiles, scores and threshold)
//!   its [`kir::Kernel::unpack_to_dest_fp32`] lists the CBs, and the dispatch program asks
//!   tt-metal to unpack them straight to the fp32 DST (`UnpackToDestFp32`); the emulator does the
//!   same, and cuts every other Float32 operand.
//!
//! # The artifacts a reviewer reads
//!
//! `cargo run -p kernel-gen` writes each shipped program ([`variants`]) to a folder of
//! `kernel-gen/artifacts/` as `program.json` and as a Rust module, `program.rs` ([`emit`]), which a
//! crate embeds with `include!` instead of parsing JSON. The kernels go to the shared
//! `artifacts/kernels/` folder, one file per distinct text: a kernel's text names no node (its
//! node-specific values are compile-time args), and its file is named by its template and a
//! CRC-32 of what the template renders it from ([`render::Interface::file`]), so every step and
//! every program that runs the same text names the same file (the NMS variants share the main
//! program's). The program states each kernel's per-core runtime args by rule
//! ([`program::rules`]: runs of constants, of block ranges counting along the cores, of buffer
//! addresses and NoC coordinates, one run where all cores agree), which the runner expands when
//! it loads the program. The insta snapshots of `snapshots/` hold one file per distinct kernel
//! text and a readable summary of each snapshotted program ([`summary`]).
//!
//! convPa and convDa, which read the same input with the same shape, run as one step
//! (`convPa+convDa`, [`plan::conv::FusedConv`]) in four output-channel slices, each slice
//! reading its conv's weights and bias and writing its conv's output (bf16 only: two Float32
//! outputs alive together leave the L1 arena).
//!
//! Next steps (DESIGN §3 hints; `superpoint bench --backend tensix` prints the per-node model):
//! the half-block shifted views pay off only
//! at about six or more blocks a core, so the 80-wide convs keep row runs on the full grids;
//! the fused pool's horizontal maximum from even/odd pixel views instead of selection matmuls;
//! conv1a's bias as a row of K (9 taps leave 23 free).

pub mod arena;
pub mod check;
pub mod device;
pub mod dispatch;
pub mod emit;
pub mod kir;
pub mod layout;
pub mod lower;
pub mod model;
pub mod multicast;
pub mod ops;
pub mod phases;
pub mod plan;
pub mod program;
pub mod render;
pub mod report;
pub mod runner;
pub mod staging;
pub mod summary;
pub mod variants;

use superpoint_graph::Graph;
use thiserror::Error;

pub use check::CheckError;
pub use device::{Core, CoreRange, Fidelity, Format, Grid, Limits, Precision};
pub use kir::{Arg, CompileArg, CoreArgs, KirError, Role};
pub use layout::{DeviceTensor, Part};
pub use plan::{BufferPlan, CbKind, CbPlan, Content, PlanError, PlanParams};
pub use program::{Compiled, DeviceProgram, KernelDesc, ProgramError, Step};
pub use render::RenderError;

/// Any failure of the pipeline.
#[derive(Debug, Error)]
pub enum CompileError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Kir(#[from] KirError),
    #[error(transparent)]
    Check(#[from] CheckError),
    #[error(transparent)]
    Program(#[from] ProgramError),
}

/// Compiles `graph`: plan (with staged weights where `params` asks, [`staging::plan`]), lower,
/// check, render and assemble.
pub fn compile(graph: &Graph, params: &PlanParams) -> Result<Compiled, CompileError> {
    compile_plan(&staging::plan(graph, params)?)
}

/// Lowers, checks, renders and assembles `plan`: [`compile`]'s stages after planning, for a
/// plan the caller made or edited.
pub fn compile_plan(plan: &plan::Plan) -> Result<Compiled, CompileError> {
    let kir = lower::lower(plan)?;
    check::check(&kir, &plan.limits, plan.grid)?;
    Ok(program::assemble(plan.grid, &plan.buffers, &kir)?)
}
