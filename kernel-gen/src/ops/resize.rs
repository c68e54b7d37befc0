//! The device resize: the u8 image plane the host uploads (one DRAM page per row) resized to the
//! network frame with Pillow's BILINEAR filter, bit for bit, written in the frame's activation
//! layout (one channel, bf16 or Float32 as the node's precision says; [`FrameRows`](crate::DeviceTensor::FrameRows): each
//! image row with its copies shifted by one pixel either way, so conv1a builds its taps from whole rows). The program is specialised per input
//! size (the filter is data the host computes per size, [`crate::plan::resize_filter`]).
//!
//! Pillow runs one pass per axis, in the order [`vertical_first`] decides, each output
//! `clip8(⌊(S + 2²¹) / 2²²⌋)` of the integer sum S = Σ v·k of u8 samples and 22-bit weights.
//! The device does the same per 32×32 output block (row tile i, column tile j); the unit of work
//! split over the cores is a block, or half a block (16 output rows) where that halves the
//! reader's conversion and the writer's rows without adding a unit to the slowest core
//! ([`unit_rows`]; the compute kernel still computes the unit's whole block, the writer writes
//! the unit's rows):
//! * the reader converts the band rows the unit's outputs read (of the block's `kv` × `kh` input
//!   tiles starting at the band table's row and column) from u8 to bf16; the other rows (and
//!   the columns past the plane) keep what the tiles held, zeros or an earlier unit's levels,
//!   which their zero weights turn into +0 products as zeros would through a 256-entry table in L1 (every u8 is exact in bf16;
//!   the unpacker has no u8 format in the emulator and the conversion costs the data-movement core
//!   one load per byte), and provides the block's weights, three parts per weight tile: the
//!   page set the band table names for its row tile and for its column tile
//!   ([`crate::plan::resize_filter`]: tiles with the same weights share a set). Each weight CB
//!   is a ring of two slots the compute kernel only reads, so the reader reads a set from DRAM
//!   only when neither slot holds it (a local copy from the other slot otherwise, or nothing):
//!   the identity resize reads one set per axis per core instead of one per block;
//! * the compute kernel runs the first pass into the `k2` intermediate tiles (vertical first:
//!   Z_t = Σ_a V_a · P_at; horizontal first: Y_aᵀ = Σ_t H_t · P_atᵀ), rounds them to u8 values
//!   (bf16, exact), then the second pass (Fᵀ = Σ_t H_t · Z_tᵀ, or F = Σ_a V_a · Y_a), rounds,
//!   and scales by 1/255. Weights sit in in0 (SrcB), data in in1 (SrcA, exact from HiFi2 up).
//!   Weight parts 0 + 1 accumulate A in DST 0 and part 2 accumulates B in DST 1, both exact in
//!   fp32 (A + B = S / 2²²; [`crate::plan::resize_filter`]; the planner checks B's bound through
//!   [`MAX_REST_SUM`]). The rounding is then exact too: q = fl(A + B) rounded to an integer
//!   (adding and subtracting 1.5·2²³, `add/sub_unary_tile`), and the result
//!   q + round(A − q + B + 2⁻²³) (`sub/add_binary_tile`, the same trick): A − q + B is a
//!   multiple of 2⁻²² within ½ + 2⁻¹⁶ of 0, so adding 2⁻²³ is exact and never leaves a tie, and
//!   rounding it to nearest equals Pillow's ⌊A + B + ½⌋ − q. The result is clamped to 0..255
//!   (`relu_max_tile`, clip8, which BILINEAR's non-negative weights never reach). So the frame
//!   is Pillow's u8 result /255 up to the f32 product and the bf16 pack: within ½ bf16 ulp
//!   (≤ 2⁻⁹) of the host value (a Float32 frame: up to the f32 product only). This rests on two properties of the device, both of the
//!   emulator: the matrix unit and the SFPU add exactly representable fp32 sums exactly, and
//!   SFPU fp32 adds round to nearest (either tie rule: no step here meets a tie that matters);
//! * the compute kernel then turns the output tile (Fᵀ or F, in `cb_final`) into the block's
//!   [`FrameRows`](crate::DeviceTensor::FrameRows): copy 0 is F (a transpose of Fᵀ), copies ±1
//!   are S_dx·Fᵀ transposed, S_dx a 0/1 tile the reader builds whose row x picks row x + dx of Fᵀ
//!   (exact: Fᵀ sits in SrcA, one product per element). The unpacker cuts Float32 to TF32 on
//!   the way into SrcA, which keeps integers but not level/255, so a Float32 frame's `cb_final`
//!   holds the u8 levels and the copies are scaled by 1/255 in DST (a bf16 frame is scaled once,
//!   before the copies: bf16 passes SrcA whole). Both shifted products go through `cb_tmp` in
//!   one acquire, and the three copies sit in DST 0..2 together, packed untilized in one pack
//!   as the row of three tiles (one matmul, transpose and untilize init a block, not one a
//!   copy); the writer puts each 32-value row stretch at its
//!   place in the frame page of its image row. Shifting on the matrix unit is what lets conv1a
//!   build its taps from whole rows: a one-pixel shift is 2 bytes, which no NoC copy can do.
//!
//! Only the non-zero bands are multiplied: 3·kv·kh + 3·kh tile products per block (vertical
//! first), 3·kv·kh + 3·kv (horizontal first).
//!
//! [`vertical_first`]: superpoint_graph::reference::resize::vertical_first
//! [`unit_rows`]: crate::plan::resize::unit_rows
//! [`MAX_REST_SUM`]: crate::plan::resize::MAX_REST_SUM

use crate::device::Format;
use crate::kir::{
    args, blocks, cb_format, cb_id, fill_copies, format_args, input, names, per_core, share_args,
    Arg, Call, Kernel, KirError, Lowering, Role, SfpuOp, Trips, ALL_FACES,
};
use crate::plan::resize::ResizePlan;
use crate::plan::resize_filter::PARTS;
use crate::plan::NodePlan;

pub use crate::plan::resize::MAX_PLANE_SIDE;

impl Lowering for ResizePlan {
    fn op(&self) -> &'static str {
        "resize"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }
}

/// A u8 plane (channel 0 of `plane`) in the Plane layout: one row per page, padded to 64 bytes.
pub fn pack_plane(plane: &superpoint_graph::Tensor<u8>) -> Vec<u8> {
    let row_bytes = plane.width.div_ceil(64) * 64;
    let mut out = vec![0u8; row_bytes * plane.height];
    for (y, row) in plane.plane(0).chunks(plane.width.max(1)).enumerate() {
        out[y * row_bytes..y * row_bytes + row.len()].copy_from_slice(row);
    }
    out
}

/// `op` over `tiles` whole DST tiles.
fn sfpu(op: SfpuOp, tiles: u32) -> Call {
    Call::Sfpu {
        op,
        tiles,
        faces: ALL_FACES,
    }
}

/// Pillow's rounding of DST 0 (A) + DST 1 (B) into DST 0, DST 2 holding q (module docs).
fn round_half_up() -> Vec<Call> {
    [
        SfpuOp::AddBinary,
        SfpuOp::AddScalar,
        SfpuOp::AddScalar,
        SfpuOp::SubBinary,
        SfpuOp::AddBinary,
        SfpuOp::AddScalar,
        SfpuOp::AddScalar,
        SfpuOp::AddScalar,
        SfpuOp::AddBinary,
        SfpuOp::ReluMax,
    ]
    .into_iter()
    .map(|op| sfpu(op, 1))
    .collect()
}

/// The reader, compute and writer kernels of a resize node.
fn kernels(node: &NodePlan, r: &ResizePlan) -> Result<Vec<Kernel>, KirError> {
    let plane = input(node, 0)?;
    let cb_plane = cb_id(node, "cb_plane")?;
    let cb_v = cb_id(node, "cb_vweights")?;
    let cb_h = cb_id(node, "cb_hweights")?;
    let cb_mid = cb_id(node, "cb_mid")?;
    let cb_lut = cb_id(node, "cb_lut")?;
    let cb_bands = cb_id(node, "cb_bands")?;
    let cb_rows = cb_id(node, "cb_rows")?;
    let cb_shift = cb_id(node, "cb_shift")?;
    let cb_final = cb_id(node, "cb_final")?;
    let cb_tmp = cb_id(node, "cb_tmp")?;
    let cb_out = cb_id(node, "cb_out")?;
    let (kh, kv) = (r.kh, r.kv);
    let parts = PARTS as u32;
    let format = cb_format(node, "cb_out")?;
    let frame_tile = format.tile_bytes();
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("in_width", r.in_width),
        ("in_height", r.in_height),
        ("row_bytes", r.row_bytes),
        ("width_tiles", r.width_tiles),
        ("kh", kh),
        ("kv", kv),
        ("vertical_first", u32::from(r.vertical_first)),
        ("parts", parts),
        ("window", r.window),
        ("unit_rows", r.unit_rows),
        ("bands_bytes", r.bands_bytes),
        tile_bytes,
        fp32,
    ]);
    // The first pass's weights and band tiles, then the second's (= the intermediate tiles).
    let (cb_w1, k1, cb_w2, k2) = if r.vertical_first {
        (cb_v, kv, cb_h, kh)
    } else {
        (cb_h, kh, cb_v, kv)
    };
    let read_weights = |cb: u32, buffer: &str, pages: u32| {
        vec![
            Call::CbReserve { cb, pages },
            Call::DramRead {
                buffer: buffer.to_string(),
                pages,
                page_bytes: 2048,
                cb,
            },
            Call::CbPush { cb, pages },
        ]
    };
    let mut per_block = vec![Call::DramRead {
        buffer: plane.clone(),
        pages: r.unit_band_rows,
        page_bytes: r.window,
        cb: cb_rows,
    }];
    // The weight reads as if no slot ever held the needed set (the worst case).
    per_block.extend(read_weights(cb_v, &r.vweights, parts * kv));
    per_block.extend(read_weights(cb_h, &r.hweights, parts * kh));
    per_block.extend([
        Call::CbReserve {
            cb: cb_plane,
            pages: kv * kh,
        },
        Call::L1Gather {
            bytes: r.unit_band_rows * kh * 64,
        },
        Call::CbPush {
            cb: cb_plane,
            pages: kv * kh,
        },
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "resize/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&[
            "plane_addr",
            "vweights_addr",
            "hweights_addr",
            "bands_addr",
            "unit_start",
            "unit_count",
        ]),
        runtime_args: share_args(node, &[&plane, &r.vweights, &r.hweights, &r.bands]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbReserve {
                cb: cb_shift,
                pages: 2,
            },
            // `zero_fill` (64 bytes stored, doubled by local NoC copies), then 62 ones.
            Call::L1Gather { bytes: 64 + 62 * 2 },
            Call::L1Copy {
                from: cb_shift,
                cb: cb_shift,
                tiles: 2,
                row_bytes: 64,
                transfers: fill_copies(2 * 2048),
            },
            Call::CbPush {
                cb: cb_shift,
                pages: 2,
            },
            Call::CbReserve {
                cb: cb_lut,
                pages: 1,
            },
            Call::L1Gather { bytes: 512 },
            Call::CbReserve {
                cb: cb_bands,
                pages: 1,
            },
            Call::DramRead {
                buffer: r.bands.clone(),
                pages: 1,
                page_bytes: r.bands_bytes,
                cb: cb_bands,
            },
            Call::CbReserve {
                cb: cb_rows,
                pages: 1,
            },
            // Both slots of the plane ring zeroed once (`zero_fill`).
            Call::CbReserve {
                cb: cb_plane,
                pages: 2 * kv * kh,
            },
            Call::L1Gather { bytes: 64 },
            Call::L1Copy {
                from: cb_plane,
                cb: cb_plane,
                tiles: 2 * kv * kh,
                row_bytes: 64,
                transfers: fill_copies(2 * kv * kh * 2048),
            },
            blocks(Trips::Blocks, per_block),
        ],
    };
    let matmuls = |trips: u32| Call::Loop {
        trips: Trips::Fixed(trips),
        body: vec![Call::Matmul {
            ct: 1,
            rt: 1,
            kt: 1,
        }],
    };
    // The 1/255 scaling: once before the copies of a bf16 frame, after the three copies of a Float32
    // one (whose copies move the u8 levels, exact through SrcA; module docs).
    let scaled = |before_copies: bool, tiles: u32| -> Vec<Call> {
        if before_copies == (format == Format::Bf16) {
            vec![sfpu(SfpuOp::MulScalar, tiles)]
        } else {
            Vec::new()
        }
    };
    let compute = Kernel {
        role: Role::Compute,
        template: "resize/compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["unit_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        unpack_to_dest_fp32: Vec::new(),
        body: vec![
            Call::CbWait {
                cb: cb_shift,
                pages: 2,
            },
            blocks(
                Trips::Blocks,
                vec![
                    Call::CbWait {
                        cb: cb_plane,
                        pages: kv * kh,
                    },
                    Call::CbWait {
                        cb: cb_w1,
                        pages: parts * k1,
                    },
                    Call::CbReserve {
                        cb: cb_mid,
                        pages: k2,
                    },
                    Call::Loop {
                        trips: Trips::Fixed(k2),
                        body: vec![Call::Dst {
                            tiles: 3,
                            body: [
                                vec![matmuls(parts * k1)],
                                round_half_up(),
                                vec![Call::Pack {
                                    cb: cb_mid,
                                    tiles: 1,
                                }],
                            ]
                            .concat(),
                        }],
                    },
                    Call::CbPush {
                        cb: cb_mid,
                        pages: k2,
                    },
                    Call::CbPop {
                        cb: cb_w1,
                        pages: parts * k1,
                    },
                    Call::CbPop {
                        cb: cb_plane,
                        pages: kv * kh,
                    },
                    Call::CbWait {
                        cb: cb_mid,
                        pages: k2,
                    },
                    Call::CbWait {
                        cb: cb_w2,
                        pages: parts * k2,
                    },
                    Call::CbReserve {
                        cb: cb_final,
                        pages: 1,
                    },
                    Call::Dst {
                        tiles: 3,
                        body: [
                            vec![matmuls(parts * k2)],
                            round_half_up(),
                            scaled(true, 1),
                            vec![Call::Pack {
                                cb: cb_final,
                                tiles: 1,
                            }],
                        ]
                        .concat(),
                    },
                    Call::CbPush {
                        cb: cb_final,
                        pages: 1,
                    },
                    Call::CbPop {
                        cb: cb_w2,
                        pages: parts * k2,
                    },
                    Call::CbPop {
                        cb: cb_mid,
                        pages: k2,
                    },
                    Call::CbWait {
                        cb: cb_final,
                        pages: 1,
                    },
                    Call::CbReserve {
                        cb: cb_out,
                        pages: 3,
                    },
                    // Copies ∓1: S_-1·Fᵀ and S_+1·Fᵀ in one acquire, through cb_tmp.
                    Call::CbReserve {
                        cb: cb_tmp,
                        pages: 2,
                    },
                    Call::Dst {
                        tiles: 2,
                        body: vec![
                            matmuls(2),
                            Call::Pack {
                                cb: cb_tmp,
                                tiles: 2,
                            },
                        ],
                    },
                    Call::CbPush {
                        cb: cb_tmp,
                        pages: 2,
                    },
                    Call::CbWait {
                        cb: cb_tmp,
                        pages: 2,
                    },
                    // The three copies in one acquire (those two transposed, F or Fᵀ), packed
                    // untilized as one row of three tiles.
                    Call::Dst {
                        tiles: 3,
                        body: [
                            vec![
                                Call::Transpose { tiles: 2 },
                                if r.vertical_first {
                                    Call::Transpose { tiles: 1 }
                                } else {
                                    Call::Copy { tiles: 1 }
                                },
                            ],
                            scaled(false, 3),
                            vec![Call::Pack {
                                cb: cb_out,
                                tiles: 3,
                            }],
                        ]
                        .concat(),
                    },
                    Call::CbPop {
                        cb: cb_tmp,
                        pages: 2,
                    },
                    Call::CbPush {
                        cb: cb_out,
                        pages: 3,
                    },
                    Call::CbPop {
                        cb: cb_final,
                        pages: 1,
                    },
                ],
            ),
            Call::CbPop {
                cb: cb_shift,
                pages: 2,
            },
        ],
    };
    let element = frame_tile / 1024;
    let writer = Kernel {
        role: Role::Writer,
        template: "resize/writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape,
        runtime_arg_names: names(&["output_addr", "unit_start", "unit_count"]),
        runtime_args: share_args(node, &[&node.output]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: vec![blocks(
            Trips::Blocks,
            vec![
                Call::CbWait {
                    cb: cb_out,
                    pages: 3,
                },
                // The unit's image rows × 3 copies, each a 32-value stretch at a multiple of its
                // size.
                Call::DramPart {
                    buffer: node.output.clone(),
                    write: true,
                    transfers: 3 * r.unit_rows,
                    bytes: 32 * element,
                    offset_step: 32 * element,
                    cb: cb_out,
                },
                Call::CbPop {
                    cb: cb_out,
                    pages: 3,
                },
            ],
        )],
    };
    Ok(vec![reader, compute, writer])
}

#[cfg(test)]
mod tests {
    use super::*;
    use superpoint_graph::Tensor;

    #[test]
    fn plane_rows_are_padded_pages() {
        let plane = Tensor::from_vec(1, 2, 3, vec![1u8, 2, 3, 4, 5, 6]).expect("shape");
        let bytes = pack_plane(&plane);
        assert_eq!(bytes.len(), 128);
        assert_eq!(&bytes[..4], &[1, 2, 3, 0]);
        assert_eq!(&bytes[64..68], &[4, 5, 6, 0]);
    }
}
