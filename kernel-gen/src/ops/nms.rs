//! `Nms{radius}` on a score map (Map layout: Float32 32×32 spatial tiles), bit-identical to the
//! reference `nms`: S where S equals the maximum of its (2r+1)² window clipped at the edges (ties
//! all kept), +0 elsewhere.
//!
//! The window maximum is separable (columns, then rows, each clipped at the edges), and the hard
//! part on Tensix is shifting a tile by a few columns. Rows are easy: in the 4-face layout a tile
//! row is two 64-byte face rows (its left and right half). The reader lays each half out as a
//! strip of consecutive rows in a window: the r rows before the tile (its neighbour's), the tile's
//! 32 (two 1 KiB face reads) and the r rows after it, read once per tile; a face of the tile
//! shifted by d rows is then one 1 KiB local NoC copy from a strip. A row shifted from beyond the
//! image is the unshifted row instead (a second copy for that face), which every window of that
//! row holds: the maximum is the clipped one exactly, with no padding value. Columns become rows by a
//! transpose, which the compute kernel applies to every shifted tile on its way into DST
//! (`transpose_tile`; max commutes with it). So the op is two passes of the same window, shift
//! and compute code, in one program:
//! 1. shift along y (neighbours one tile row away), max over the 2r+1 shifts, transposed → the
//!    column maxima, which the writer stores transposed in an intermediate Map-sized buffer
//!    (`<node>.vertical`, scratch). The reader reads each tile's window and hands it to the
//!    writer (`cb_strips`), which builds the shifted tiles (`cb_shift_y`): the reader, which
//!    also does all of the second pass's NoC work, bounds the program otherwise, while the
//!    writer has slack. The shifted tiles are built with their faces 1 and 2 swapped, so that each half of the rows (faces 0 and 2, or 1 and 3) is one 2 KiB copy
//!    from its strip instead of two of 1 KiB; the transpose of such a tile is the transpose of
//!    the tile with its faces 1 and 2 swapped again, so the column maxima are stored in that
//!    swapped layout, in which each strip the second pass reads is one 2 KiB read;
//! 2. shift those along their rows (= x; neighbours one tile column away; the reader reads the
//!    windows and builds the shifted tiles, `cb_shift`), max, transposed back → the window
//!    maximum M. The writer feeds the score tile S to compute (`cb_scores`), which
//!    keeps S where S == M and +0 elsewhere on the SFPU (`eq_binary_tile`, then `where_tile`), and
//!    writes the output.
//!
//! The second pass is also the halo exchange: it reads the column maxima of the tiles next to
//! the core's run along x, which other cores compute. The split gives each core a run of
//! consecutive tiles, so those are the last tile of the core before it in the split and the first
//! of the core after it, where they are in the same tile row ([`exchange_partners`]); each such
//! pair of cores reads each other's tiles. Handshake on semaphore 0 ([`SEMAPHORES`]): once a
//! core's writer has stored its column maxima (write barrier), it increments the semaphore of
//! itself and of its partners before and after, itself in place of a partner it does not have,
//! so every core receives exactly [`SIGNALS`] increments; the reader runs the second pass once
//! its semaphore has reached them (`noc_semaphore_wait_min`). A program instead of two saves a
//! launch.
//!
//! The equality is `eq_binary_tile`, IEEE equality as its LLK computes it: equal bits and no
//! NaN, or both zero (subnormals count as zero; the unpacker flushes them anyway). It is not a
//! subtraction, whose result the SFPU would flush when S and M are a denormal apart (scores below
//! 2^-103). NaN equals nothing, so a NaN score (bad weights) becomes +0, as the host's `v == max`
//! makes it; the window maximum skips NaN like the host's `f32::max`. `where_tile<Float32>` then
//! moves raw 32-bit words: S's where the condition is 1.0, the condition's own +0.0 elsewhere.
//! The device map is therefore the host NMS of the same score map bit for bit. With a keypoint
//! selection fused into the writer and a positive normal threshold T, the compute kernel also
//! packs the mask `N <= T` (`max(N, T) == T`, exact on f32) and multiplies it by a tile of powers
//! of two, handing the writer one small integer per 8 columns of each row
//! (`nms/bits_compute.cpp.tera`, [`candidate_bits`]).
//!
//! The program splits the map's tiles over the grid like every node (`Split::new`). Max and
//! transpose are exact in the fp32 DST, so the result is bit for bit the reference's.
//!
//! The compute kernel unpacks `cb_shift_y`, `cb_shift`, `cb_scores` (and, fused with the
//! selection, `cb_threshold`) straight to the fp32 DST: the dispatch program marks them
//! `UnpackToDestFp32` ([`crate::kir::Kernel::unpack_to_dest_fp32`]; tt-metal then transposes
//! 32-bit tiles in DST). Through SrcA a Float32 tile is cut to TF32, and scores that differ only
//! below TF32's 10 mantissa bits would all equal their window's maximum.

use crate::device::Core;
use crate::kir::{
    args, blocks, cb_id, exact_fp32_copies, first_core, input, names, per_core, share_args, Arg,
    Call, CompileArg, CoreArgs, CountSource, Kernel, KirError, Lowering, Role, SfpuOp, Trips,
    ALL_FACES,
};
use crate::layout::tensor::MAP_PAGE_BYTES;
use crate::plan::nms::{NmsPlan, FACE_ROW_BYTES};
use crate::plan::{NodePlan, Split};

use crate::plan::select_keypoints::candidate_bits;

use super::select_keypoints;

pub use crate::plan::nms::MAX_DEVICE_RADIUS;

impl Lowering for NmsPlan {
    fn op(&self) -> &'static str {
        "nms"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }

    /// Semaphore 0 of the halo exchange ([`SEMAPHORES`]).
    fn sync(&self, node: &NodePlan) -> Result<(u32, Vec<Vec<Core>>), KirError> {
        Ok((SEMAPHORES, vec![first_core(node)]))
    }

    fn counted(&self) -> Option<CountSource> {
        count_source(self)
    }
}

/// Bytes of a 16×16 face of f32.
const FACE_BYTES: u32 = 16 * FACE_ROW_BYTES;

/// Of the first pass's 2 radius + 1 tiles shifted along y, the reader builds the first
/// `reader_shifts` (d = -radius..-1), the writer the others (d = 0..radius): the balance of the
/// two RISC-Vs' NoC work besides (the reader reads the windows and does all of the second pass,
/// the writer its writes and the fused selection's scan), 4.5 / 4.1 µs on the 640×480 map.
fn reader_shifts_y(radius: u32) -> u32 {
    radius
}

/// Semaphores per core: 0, which counts the signals of the cores whose column maxima the
/// core's second pass reads (module docs).
pub const SEMAPHORES: u32 = 1;

/// Increments every core's semaphore receives once the column maxima it reads are stored: its
/// own writer's, and its partners' before and after it, or its own writer's again in place of
/// each it does not have ([`exchange_partners`]).
pub const SIGNALS: u32 = 3;

/// The cores each core of `split` signals besides itself, before and after it (itself where
/// it has no partner there): the owners of the tiles next to its run along x in the same tile
/// row of a `tiles_x`-wide map, whose column maxima it reads and which read its own. The split
/// gives each core a run of consecutive tiles, so these are at most the last tile of the run
/// before and the first of the run after.
pub fn exchange_partners(split: &Split, tiles_x: u32) -> Vec<(Core, Core)> {
    let owner = |tile: u32, own: Core| {
        split
            .work
            .iter()
            .find(|w| (w.start..w.start + w.count).contains(&tile))
            .map_or(own, |w| w.core)
    };
    split
        .work
        .iter()
        .map(|w| {
            let end = w.start + w.count;
            let before = if w.count > 0 && w.start % tiles_x != 0 {
                owner(w.start - 1, w.core)
            } else {
                w.core
            };
            let after = if w.count > 0 && end % tiles_x != 0 {
                owner(end, w.core)
            } else {
                w.core
            };
            (before, after)
        })
        .collect()
}

/// Where the counted loop of the writer gets its trips: the fused selection's counts, when it
/// scans by candidate bits.
fn count_source(p: &NmsPlan) -> Option<CountSource> {
    p.select
        .as_ref()
        .filter(|s| candidate_bits(s))
        .map(select_keypoints::count_source)
}

/// The reads of one tile of `source` (the score map, or the column maxima) into the two strips
/// of a window in CB `window`: the tile's four faces in runs of `faces` faces (1: the 4-face
/// layout; 2: faces 1 and 2 swapped, each strip's faces next to each other), and the `radius`
/// rows next to it of its neighbours along the axis: a run of face rows in each of two faces
/// (none at the edges).
fn strip_reads(source: &str, faces: u32, radius: u32, window: u32) -> [Call; 2] {
    [
        Call::DramPart {
            buffer: source.to_string(),
            write: false,
            transfers: 4 / faces,
            bytes: faces * FACE_BYTES,
            offset_step: FACE_BYTES,
            cb: window,
        },
        Call::DramPart {
            buffer: source.to_string(),
            write: false,
            transfers: 4,
            bytes: radius * FACE_ROW_BYTES,
            offset_step: FACE_ROW_BYTES,
            cb: window,
        },
    ]
}

/// `count` shifted tiles of one map tile pushed to CB `shift`: local NoC copies from a window's
/// strips, a 2 KiB one per strip along y and a 1 KiB one per face along x, one more where it
/// clips at an edge (NoC work the emulator counts, no RISC-V element loop).
fn shifted_tiles(count: u32, shift: u32) -> Call {
    Call::Loop {
        trips: Trips::Fixed(count),
        body: vec![
            Call::CbReserve {
                cb: shift,
                pages: 1,
            },
            Call::CbPush {
                cb: shift,
                pages: 1,
            },
        ],
    }
}

/// The reader, compute and writer of the program.
fn kernels(node: &NodePlan, p: &NmsPlan) -> Result<Vec<Kernel>, KirError> {
    let scores = input(node, 0)?;
    let shift = cb_id(node, "cb_shift")?;
    let shift_y = cb_id(node, "cb_shift_y")?;
    let window = cb_id(node, "cb_window")?;
    let strips = cb_id(node, "cb_strips")?;
    let out = cb_id(node, "cb_out")?;
    let taps = 2 * p.radius + 1;
    let shape = args(&[
        ("tiles_x", p.tiles_x),
        ("tiles_y", p.tiles_y),
        ("radius", p.radius),
        ("reader_shifts", reader_shifts_y(p.radius)),
    ]);
    let mut reader_args = shape.clone();
    reader_args.extend(args(&[("signals", SIGNALS)]));
    let reader = Kernel {
        role: Role::Reader,
        template: "nms/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: reader_args,
        runtime_arg_names: names(&["scores_addr", "vertical_addr", "tile_start", "tile_count"]),
        runtime_args: share_args(node, &[&scores, &p.vertical]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            blocks(Trips::Blocks, {
                let mut tile = vec![Call::CbReserve {
                    cb: strips,
                    pages: 1,
                }];
                tile.extend(strip_reads(&scores, 1, p.radius, strips));
                tile.extend([
                    Call::CbPush {
                        cb: strips,
                        pages: 1,
                    },
                    shifted_tiles(reader_shifts_y(p.radius), shift),
                ]);
                tile
            }),
            Call::CbReserve {
                cb: window,
                pages: 3,
            },
            Call::SemWait {
                sem: 0,
                value: SIGNALS,
            },
            blocks(Trips::Blocks, {
                let mut tile = strip_reads(&p.vertical, 2, p.radius, window).to_vec();
                tile.push(shifted_tiles(taps, shift));
                tile
            }),
        ],
    };
    let bits = p.select.as_ref().is_some_and(candidate_bits);
    // The maximum of the shifted tiles, each transposed into DST: the first `low` from `shift`,
    // the others from `high`.
    let window_max = |low: u32, high: u32| {
        let taken = |cb: u32, trips: u32| Call::Loop {
            trips: Trips::Fixed(trips),
            body: vec![
                Call::CbWait { cb, pages: 1 },
                Call::Transpose { tiles: 1 },
                Call::CbPop { cb, pages: 1 },
            ],
        };
        let mut calls = vec![taken(shift, low)];
        if low < taps {
            calls.push(taken(high, taps - low));
        }
        calls.push(Call::Sfpu {
            op: SfpuOp::Max,
            tiles: taps - 1,
            faces: ALL_FACES,
        });
        calls
    };
    // A pass's DST work per block, then one output tile packed and pushed.
    let packed_per_block = |mut dst: Vec<Call>| {
        dst.extend([
            Call::CbReserve { cb: out, pages: 1 },
            Call::Pack { cb: out, tiles: 1 },
        ]);
        blocks(
            Trips::Blocks,
            vec![
                Call::Dst {
                    tiles: 2,
                    body: dst,
                },
                Call::CbPush { cb: out, pages: 1 },
            ],
        )
    };
    let column_maxima = packed_per_block(window_max(reader_shifts_y(p.radius), shift_y));
    let scores_cb = cb_id(node, "cb_scores")?;
    let mut nms = window_max(taps, shift);
    nms.extend([
        Call::CbWait {
            cb: scores_cb,
            pages: 1,
        },
        Call::Copy { tiles: 1 },
        Call::CbPop {
            cb: scores_cb,
            pages: 1,
        },
        Call::Sfpu {
            op: SfpuOp::Eq,
            tiles: 1,
            faces: ALL_FACES,
        },
        Call::Sfpu {
            op: SfpuOp::Where,
            tiles: 1,
            faces: ALL_FACES,
        },
    ]);
    let (template, mut body, compute_args) = if bits {
        bits_compute(node, nms, &shape)?
    } else {
        (
            "nms/mask_compute.cpp.tera",
            vec![packed_per_block(nms)],
            shape.clone(),
        )
    };
    body.insert(0, column_maxima);
    let compute = Kernel {
        role: Role::Compute,
        template: template.into(),
        ranges: node.split.ranges.clone(),
        compile_args: compute_args,
        runtime_arg_names: names(&["tile_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(
            node,
            &["cb_shift", "cb_shift_y", "cb_scores", "cb_threshold"],
        ),
        body,
    };
    let writer = writer(node, p, shape)?;
    Ok(vec![reader, compute, writer])
}

/// The compute kernel of a row pass that hands the fused selection candidate bits
/// (`nms/bits_compute.cpp.tera`), from the DST calls `nms` that leave the NMS tile N in DST:
/// the mask `N <= T` against the threshold tile (`max(N, T) == T`), packed, and its product with
/// the bit weights, whose row `i`, column `g` is the byte of row `i`'s mask over columns
/// `8g .. 8g + 8`.
fn bits_compute(
    node: &NodePlan,
    mut nms: Vec<Call>,
    shape: &[CompileArg],
) -> Result<(&'static str, Vec<Call>, Vec<CompileArg>), KirError> {
    let out = cb_id(node, "cb_out")?;
    let threshold = cb_id(node, "cb_threshold")?;
    let weights = cb_id(node, "cb_bit_weights")?;
    let mask = cb_id(node, "cb_mask")?;
    let bits = cb_id(node, "cb_bits")?;
    nms.extend([
        Call::Copy { tiles: 1 },
        Call::Sfpu {
            op: SfpuOp::Max,
            tiles: 1,
            faces: ALL_FACES,
        },
        Call::Sfpu {
            op: SfpuOp::Eq,
            tiles: 1,
            faces: ALL_FACES,
        },
        Call::CbReserve { cb: out, pages: 1 },
        Call::CbReserve { cb: mask, pages: 1 },
        Call::Pack { cb: out, tiles: 1 },
        Call::Pack { cb: mask, tiles: 1 },
    ]);
    let mut body = vec![
        Call::CbWait {
            cb: threshold,
            pages: 1,
        },
        Call::CbWait {
            cb: weights,
            pages: 1,
        },
    ];
    body.push(blocks(
        Trips::Blocks,
        vec![
            Call::Dst {
                tiles: 4,
                body: nms,
            },
            Call::CbPush { cb: out, pages: 1 },
            Call::CbPush { cb: mask, pages: 1 },
            Call::Dst {
                tiles: 1,
                body: vec![
                    Call::CbWait { cb: mask, pages: 1 },
                    Call::Matmul {
                        ct: 1,
                        rt: 1,
                        kt: 1,
                    },
                    Call::CbPop { cb: mask, pages: 1 },
                    Call::CbReserve { cb: bits, pages: 1 },
                    Call::Pack { cb: bits, tiles: 1 },
                ],
            },
            Call::CbPush { cb: bits, pages: 1 },
        ],
    ));
    body.extend([
        Call::CbPop {
            cb: threshold,
            pages: 1,
        },
        Call::CbPop {
            cb: weights,
            pages: 1,
        },
    ]);
    let mut compile_args = shape.to_vec();
    compile_args.extend(select_keypoints::bit_compile_args());
    Ok(("nms/bits_compute.cpp.tera", body, compile_args))
}

/// The writer: stores the column maxima and signals the cores that read them (module docs), then
/// feeds the score tiles to compute's equality mask and writes the output, fused with the
/// keypoint selection when the plan put one here ([`crate::plan::select_keypoints::place`]).
fn writer(
    node: &NodePlan,
    p: &NmsPlan,
    mut compile_args: Vec<CompileArg>,
) -> Result<Kernel, KirError> {
    let scores = input(node, 0)?;
    let scores_cb = cb_id(node, "cb_scores")?;
    let out = cb_id(node, "cb_out")?;
    let strips = cb_id(node, "cb_strips")?;
    let shift_y = cb_id(node, "cb_shift_y")?;
    let mut arg_names = names(&[
        "output_addr",
        "scores_addr",
        "vertical_addr",
        "tile_start",
        "tile_count",
        "before_x",
        "before_y",
        "after_x",
        "after_y",
    ]);
    let write = |buffer: &str| Call::DramWrite {
        buffer: buffer.to_string(),
        pages: 1,
        page_bytes: MAP_PAGE_BYTES,
        cb: out,
    };
    let mut per_tile = vec![
        Call::CbReserve {
            cb: scores_cb,
            pages: 1,
        },
        Call::DramRead {
            buffer: scores.clone(),
            pages: 1,
            page_bytes: MAP_PAGE_BYTES,
            cb: scores_cb,
        },
        Call::CbPush {
            cb: scores_cb,
            pages: 1,
        },
        Call::CbWait { cb: out, pages: 1 },
        write(&node.output),
    ];
    let mut body = vec![
        blocks(
            Trips::Blocks,
            vec![
                Call::CbWait {
                    cb: strips,
                    pages: 1,
                },
                shifted_tiles(2 * p.radius + 1 - reader_shifts_y(p.radius), shift_y),
                Call::CbPop {
                    cb: strips,
                    pages: 1,
                },
                Call::CbWait { cb: out, pages: 1 },
                write(&p.vertical),
                Call::CbPop { cb: out, pages: 1 },
            ],
        ),
        Call::Loop {
            trips: Trips::Fixed(SIGNALS),
            body: vec![Call::SemInc { sem: 0 }],
        },
    ];
    let mut end = Vec::new();
    let template = match &p.select {
        None => "nms/writer.cpp.tera",
        Some(sel) => {
            compile_args.extend(select_keypoints::compile_args(sel));
            arg_names.extend(names(&select_keypoints::RUNTIME_ARG_NAMES));
            let calls = select_keypoints::record_calls(node, sel)?;
            if candidate_bits(sel) {
                compile_args.extend(select_keypoints::bit_compile_args());
                body.extend(select_keypoints::bit_fills(node)?);
                body.push(calls.start);
                let bits = cb_id(node, "cb_bits")?;
                let (per_tile_scan, per_record) = select_keypoints::bit_scan_calls();
                per_tile.extend([
                    Call::CbWait { cb: bits, pages: 1 },
                    per_tile_scan,
                    calls.per_tile,
                    Call::CbPop { cb: bits, pages: 1 },
                ]);
                end.push(per_record);
                end.extend(calls.end);
                "nms/bits_writer.cpp.tera"
            } else {
                body.push(calls.start);
                per_tile.extend([
                    // The candidate scan reads the output tile.
                    Call::L1Gather {
                        bytes: MAP_PAGE_BYTES,
                    },
                    calls.per_tile,
                ]);
                end = calls.end;
                "nms/select_writer.cpp.tera"
            }
        }
    };
    per_tile.push(Call::CbPop { cb: out, pages: 1 });
    body.push(blocks(Trips::Blocks, per_tile));
    body.extend(end);
    Ok(Kernel {
        role: Role::Writer,
        template: template.into(),
        ranges: node.split.ranges.clone(),
        compile_args,
        runtime_arg_names: arg_names,
        runtime_args: node
            .split
            .work
            .iter()
            .zip(exchange_partners(&node.split, p.tiles_x))
            .zip(0u32..)
            .map(|((w, (before, after)), region)| {
                let mut args = vec![
                    Arg::BufferAddress(node.output.clone()),
                    Arg::BufferAddress(scores.clone()),
                    Arg::BufferAddress(p.vertical.clone()),
                    Arg::Const(w.start),
                    Arg::Const(w.count),
                    Arg::NocX(before),
                    Arg::NocY(before),
                    Arg::NocX(after),
                    Arg::NocY(after),
                ];
                if let Some(sel) = &p.select {
                    args.extend(select_keypoints::runtime_args(sel, region));
                }
                CoreArgs { core: w.core, args }
            })
            .collect(),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Grid;

    /// Independently of [`exchange_partners`]: core `j` must hear from every core that owns a
    /// tile next to one of `j`'s along x (same tile row), and each core's semaphore must receive
    /// exactly [`SIGNALS`] increments (its own writer's, plus one from each partner, or its own
    /// again in place of a missing partner).
    #[test]
    fn every_core_hears_from_the_owners_of_the_tiles_its_row_pass_reads() {
        let grids = [
            Grid::ETH_DISPATCH,
            Grid::TENSIX_DISPATCH,
            Grid { x: 4, y: 2 },
            Grid { x: 1, y: 1 },
            Grid { x: 7, y: 3 },
        ];
        for grid in grids {
            for (tiles_x, tiles_y) in [(20, 15), (1, 3), (5, 4), (3, 1), (2, 2), (7, 9)] {
                let split = Split::new(grid, tiles_x * tiles_y);
                let partners = exchange_partners(&split, tiles_x);
                let owner = |t: u32| {
                    split
                        .work
                        .iter()
                        .position(|w| (w.start..w.start + w.count).contains(&t))
                        .expect("every tile has an owner")
                };
                let mut received = vec![0u32; split.work.len()];
                for (w, (before, after)) in split.work.iter().zip(&partners) {
                    for target in [w.core, *before, *after] {
                        let j = split
                            .work
                            .iter()
                            .position(|v| v.core == target)
                            .expect("a core of the split");
                        received[j] += 1;
                    }
                }
                for (j, w) in split.work.iter().enumerate() {
                    let case = format!("{grid:?} {tiles_x}x{tiles_y} core {j}");
                    assert_eq!(received[j], SIGNALS, "{case}");
                    for t in w.start..w.start + w.count {
                        let row = t / tiles_x;
                        for n in [t.wrapping_sub(1), t + 1] {
                            if n / tiles_x != row || n >= tiles_x * tiles_y {
                                continue;
                            }
                            let o = owner(n);
                            let (before, after) = partners[o];
                            assert!(
                                o == j || before == w.core || after == w.core,
                                "{case}: tile {n} of core {o} is read without its signal"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The fused selection scans candidate bits for a positive normal threshold (the row pass's
    /// compute kernel makes them, its writer's counted loop runs over the region's records) and
    /// every pixel otherwise.
    #[test]
    fn the_fused_selection_scans_candidate_bits_for_a_positive_threshold() {
        use superpoint_graph::{names, superpoint_with, SuperPointParams};
        for (threshold, bits) in [(0.005, true), (0.0, false), (-0.5, false)] {
            let graph = superpoint_with(&SuperPointParams {
                frame_width: 64,
                frame_height: 64,
                keypoint_threshold: threshold,
                ..SuperPointParams::default()
            })
            .pruned(&[names::KEYPOINTS]);
            let params = crate::plan::PlanParams {
                external: std::collections::BTreeSet::from([names::SCORES.to_string()]),
                ..crate::plan::PlanParams::default()
            };
            let kir = crate::lower::lower(&crate::plan::plan(&graph, &params).expect("plans"))
                .expect("lowers");
            let row = kir
                .nodes
                .iter()
                .find(|n| n.node == names::NMS)
                .expect("the row pass");
            let templates: Vec<&str> = row.kernels.iter().map(|k| k.template.as_str()).collect();
            let (compute, writer) = if bits {
                ("nms/bits_compute.cpp.tera", "nms/bits_writer.cpp.tera")
            } else {
                ("nms/mask_compute.cpp.tera", "nms/select_writer.cpp.tera")
            };
            assert_eq!(
                templates,
                vec!["nms/reader.cpp.tera", compute, writer],
                "threshold {threshold}"
            );
            assert_eq!(row.counted.is_some(), bits, "threshold {threshold}");
            let has_bits_cb = row.cbs.iter().any(|c| c.name == "cb_bits");
            assert_eq!(has_bits_cb, bits, "threshold {threshold}");
        }
    }
}
