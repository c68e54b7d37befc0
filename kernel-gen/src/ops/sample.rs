//! `SampleDescriptors` on the device: bilinear sampling of the L2-normalised dense descriptor map
//! (pixel rows, C channels at Hc×Wc) at every keypoint candidate (the Candidates layout
//! written by `SelectKeypoints`), with the SuperGlue/HF formula and a second L2 normalisation,
//! into the Descriptors layout (row-major f32, row `region·capacity + record`).
//!
//! Design (the crate docs have the summary):
//! * **Work split**: region `i` of the candidates on core `i` of the grid (the same cores the
//!   candidates were split over). A core's output blocks are its tiles of 32 candidates; their
//!   number is only known at run time, at most `capacity / 32`, so the loops over them are
//!   [`Trips::Counted`] (bounded by the data, the bound is what the checks and the report use).
//! * **Count**: the reader reads the region's count (one 64-byte page of the counts buffer),
//!   clamps it to the capacity and pushes that page through `cb_count`; the compute kernel waits
//!   for it and reads it with `read_tile_value` (the one value all three compute threads see); the
//!   writer reads the count page itself.
//! * **Taps on the reader** (a data-movement RISC-V, no FPU): in integers, u = nx / dx with
//!   nx = (2x − cell + 1)(Wc − 1), dx = 2·cell·Wc − cell − 1 (the formula times 2), x0 =
//!   floor(nx / dx), remainder rx; each corner's weight is a ratio of integer products converted
//!   to f32 by long division (exact up to the 24-bit truncation). Needs dx·dy and |nx|, |ny|
//!   below 2³¹ (checked: frames up to thousands of pixels a side). The M extension (integer
//!   multiply and divide) is assumed; without it the compiler's libgcc calls are slower. Corners
//!   outside the map get weight 0 and a clamped row.
//! * **Gather**: 32 candidates per tile, candidate `c` on tile row `c`. The map is in the
//!   [`PixelRows`](crate::DeviceTensor::PixelRows) layout `L2Normalize` writes, so each corner
//!   of a candidate is one NoC read of the pixel's `32·channel_tiles` contiguous values (512 B
//!   bf16, 1 KiB Float32) into row `c` of that corner's row-major block of `cb_rows`. The
//!   weights go into column 0 of four fp32 tiles (zero on the rows beyond the count).
//! * **Compute** (fp32 DST): `tilize_block` of each corner's block into `channel_tiles` tiles
//!   (a datacopy through SrcA: a Float32 map is cut to TF32 there, as the multiply after it would
//!   cut it anyway); `mul_tiles_bcast_cols` per corner, the four products summed by
//!   packing with L1 accumulation into fp32 tiles; squares summed the same way; `reduce_tile`
//!   row sum; + 1e-24 (so a zero vector stays zero, as `max(‖v‖, 1e-12)` does); `rsqrt_tile`; a
//!   last `mul_tiles_bcast_cols` packed with `pack_untilize_dest`, so the tile leaves as 32
//!   row-major descriptor rows. The weights and the sampled values pass SrcB / SrcA as tf32, so
//!   the node runs at HiFi4 unless overridden (HiFi2 would cut the weights to 7 bits).
//! * **Writer**: one NoC write of a whole descriptor row (1 KiB) per candidate; rows beyond
//!   the count are left untouched.
//!
//! Per candidate: 4 NoC reads of one pixel row and one 8-byte record read, one 1 KiB write;
//! per tile of 32, 4·channel_tiles tilizes and 49 FPU tile operations at HiFi4, 2 SFPU and 49
//! packs. Next steps: read the two corners of a row (pixels p, p + 1 of one page) with one
//! read of two rows into a block two corners wide (halves the reads), and fetch each region's
//! neighbourhood of map rows once when its count is large (cuts the DRAM bytes).

use crate::kir::{
    self, Arg, Call, CoreArgs, Kernel, KirError, Lowering, ReduceOp, Role, SfpuOp, Trips, ALL_FACES,
};
use crate::layout::tensor::{CANDIDATE_BYTES, COUNT_STRIDE};
use crate::plan::sample::{SamplePlan, CORNERS, PER_TILE};
use crate::plan::NodePlan;

impl Lowering for SamplePlan {
    fn op(&self) -> &'static str {
        "sample_descriptors"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }

    fn counted(&self) -> Option<kir::CountSource> {
        Some(count_source(self))
    }
}

/// Where the counted loops get their trips: region `i`'s count page, one trip per tile of 16.
fn count_source(s: &SamplePlan) -> kir::CountSource {
    kir::CountSource {
        buffer: s.counts.clone(),
        page_bytes: COUNT_STRIDE,
        per_trip: PER_TILE,
        per_block: 1,
    }
}

/// The runtime args of every core: `f(region)`.
fn per_region(node: &NodePlan, f: impl Fn(u32) -> Vec<Arg>) -> Vec<CoreArgs> {
    node.split
        .work
        .iter()
        .enumerate()
        .map(|(region, w)| CoreArgs {
            core: w.core,
            args: f(region as u32),
        })
        .collect()
}

/// The reader, compute and writer kernels of a sampling node.
fn kernels(node: &NodePlan, s: &SamplePlan) -> Result<Vec<Kernel>, KirError> {
    let id = |name: &'static str| kir::cb_id(node, name);
    let (rows, neighbours, weights, scaler, count) = (
        id("cb_rows")?,
        id("cb_neighbours")?,
        id("cb_weights")?,
        id("cb_scaler")?,
        id("cb_count")?,
    );
    let (records, writer_count, out) = (id("cb_records")?, id("cb_writer_count")?, id("cb_out")?);
    let (sum, sq, inv) = (id("cb_sum")?, id("cb_sq")?, id("cb_inv")?);
    let ct = s.channel_tiles;
    let map_format = kir::cb_format(node, "cb_rows")?;
    let [tile_bytes, fp32] = kir::format_args(map_format);
    let row_bytes = ct * map_format.tile_bytes() / 32;
    let shape = kir::args(&[
        ("width", s.width),
        ("height", s.height),
        ("cell", s.cell),
        ("coarse_width", s.coarse_width),
        ("coarse_height", s.coarse_height),
        ("channel_tiles", ct),
        ("capacity", s.capacity),
        ("group", s.group),
        ("record_bytes", CANDIDATE_BYTES),
        ("count_bytes", COUNT_STRIDE),
        tile_bytes,
        fp32,
    ]);
    let counted = |body: Vec<Call>| Call::Loop {
        trips: Trips::Counted,
        body,
    };
    let reserve = |cb, pages| Call::CbReserve { cb, pages };
    let push = |cb, pages| Call::CbPush { cb, pages };
    let wait = |cb, pages| Call::CbWait { cb, pages };
    let pop = |cb, pages| Call::CbPop { cb, pages };
    let read_count = |cb| Call::DramPart {
        buffer: s.counts.clone(),
        write: false,
        transfers: 1,
        bytes: COUNT_STRIDE,
        offset_step: 0,
        cb,
    };
    let reader = Kernel {
        role: Role::Reader,
        template: "sample_descriptors/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: kir::names(&["map_addr", "candidates_addr", "counts_addr", "region"]),
        runtime_args: per_region(node, |region| {
            vec![
                Arg::BufferAddress(s.map.clone()),
                Arg::BufferAddress(s.candidates.clone()),
                Arg::BufferAddress(s.counts.clone()),
                Arg::Const(region),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            vec![
                reserve(count, 1),
                read_count(count),
                push(count, 1),
                reserve(scaler, 1),
            ],
            kir::reduce_scaler(scaler),
            vec![
                push(scaler, 1),
                reserve(records, 1),
                counted(vec![
                    Call::DramPart {
                        buffer: s.candidates.clone(),
                        write: false,
                        transfers: PER_TILE,
                        bytes: CANDIDATE_BYTES,
                        offset_step: 0,
                        cb: records,
                    },
                    reserve(rows, CORNERS * ct),
                    reserve(weights, CORNERS),
                    Call::DramPart {
                        buffer: s.map.clone(),
                        write: false,
                        transfers: PER_TILE * CORNERS,
                        bytes: row_bytes,
                        offset_step: row_bytes,
                        cb: rows,
                    },
                    // Per candidate and corner: the zeroed weight and the weight.
                    Call::L1Gather {
                        bytes: 2 * PER_TILE * CORNERS * 4,
                    },
                    push(rows, CORNERS * ct),
                    push(weights, CORNERS),
                ]),
            ],
        ]
        .concat(),
    };
    let groups = ct / s.group;
    let compute = Kernel {
        role: Role::Compute,
        template: "sample_descriptors/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: Vec::new(),
        runtime_args: per_region(node, |_| Vec::new()),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            wait(count, 1),
            pop(count, 1),
            wait(scaler, 1),
            counted(vec![
                reserve(neighbours, CORNERS * ct),
                Call::Loop {
                    trips: Trips::Fixed(CORNERS),
                    body: vec![
                        wait(rows, ct),
                        Call::Loop {
                            trips: Trips::Fixed(ct),
                            body: vec![Call::Dst {
                                tiles: 1,
                                body: vec![
                                    Call::Copy { tiles: 1 },
                                    Call::Pack {
                                        cb: neighbours,
                                        tiles: 1,
                                    },
                                ],
                            }],
                        },
                        pop(rows, ct),
                    ],
                },
                push(neighbours, CORNERS * ct),
                wait(neighbours, CORNERS * ct),
                wait(weights, CORNERS),
                reserve(sum, ct),
                Call::Loop {
                    trips: Trips::Fixed(ct),
                    body: vec![Call::Dst {
                        tiles: CORNERS,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::MulBcastCols,
                                tiles: CORNERS,
                            },
                            Call::Pack {
                                cb: sum,
                                tiles: CORNERS,
                            },
                        ],
                    }],
                },
                push(sum, ct),
                pop(weights, CORNERS),
                pop(neighbours, CORNERS * ct),
                wait(sum, ct),
                reserve(sq, 1),
                Call::Loop {
                    trips: Trips::Fixed(groups),
                    body: vec![Call::Dst {
                        tiles: s.group,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::Mul,
                                tiles: s.group,
                            },
                            Call::Pack {
                                cb: sq,
                                tiles: s.group,
                            },
                        ],
                    }],
                },
                push(sq, 1),
                wait(sq, 1),
                reserve(inv, 1),
                Call::Dst {
                    tiles: 1,
                    body: vec![
                        Call::Reduce {
                            op: ReduceOp::SumRow,
                            tiles: 1,
                        },
                        Call::Sfpu {
                            op: SfpuOp::AddScalar,
                            tiles: 1,
                            faces: ALL_FACES,
                        },
                        Call::Sfpu {
                            op: SfpuOp::Rsqrt,
                            tiles: 1,
                            faces: ALL_FACES,
                        },
                        Call::Pack { cb: inv, tiles: 1 },
                    ],
                },
                push(inv, 1),
                pop(sq, 1),
                wait(inv, 1),
                reserve(out, ct),
                Call::Loop {
                    trips: Trips::Fixed(groups),
                    body: vec![Call::Dst {
                        tiles: s.group,
                        body: vec![
                            Call::Binary {
                                op: kir::BinaryOp::MulBcastCols,
                                tiles: s.group,
                            },
                            Call::Pack {
                                cb: out,
                                tiles: s.group,
                            },
                        ],
                    }],
                },
                push(out, ct),
                pop(inv, 1),
                pop(sum, ct),
            ]),
            pop(scaler, 1),
        ],
    };
    let writer = Kernel {
        role: Role::Writer,
        template: "sample_descriptors/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: kir::names(&["output_addr", "counts_addr", "region"]),
        runtime_args: per_region(node, |region| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::BufferAddress(s.counts.clone()),
                Arg::Const(region),
            ]
        }),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            reserve(writer_count, 1),
            read_count(writer_count),
            counted(vec![
                wait(out, ct),
                Call::DramPart {
                    buffer: node.output.clone(),
                    write: true,
                    transfers: PER_TILE,
                    bytes: ct * 32 * 4,
                    offset_step: 0,
                    cb: out,
                },
                pop(out, ct),
            ]),
        ],
    };
    Ok(vec![reader, compute, writer])
}
