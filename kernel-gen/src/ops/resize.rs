//! The device resize: the u8 image plane the host uploads (one DRAM page per row) resized to the
//! network frame with Pillow's BILINEAR filter, bit for bit, written in the frame's activation
//! layout (one channel, bf16 or Float32 as the node's precision says; [`FrameRows`](crate::DeviceTensor::FrameRows): each
//! image row with its copies shifted by one pixel either way, so conv1a builds its taps from whole rows). The program is specialised per input
//! size (the filter is data the host computes per size, [`crate::ops::resize_filter`]).
//!
//! Pillow runs one pass per axis, in the order [`vertical_first`] decides, each output
//! `clip8(⌊(S + 2²¹) / 2²²⌋)` of the integer sum S = Σ v·k of u8 samples and 22-bit weights.
//! The device does the same per 32×32 output block (row tile i, column tile j); the unit of work
//! split over the cores is a block, or half a block (16 output rows) where that spreads the
//! reader's conversion and the writer's rows more evenly ([`unit_rows`]; the compute kernel still
//! computes the unit's whole block, the writer writes the unit's rows):
//! * the reader converts the band rows the unit's outputs read (of the block's `kv` × `kh` input
//!   tiles starting at the band table's row and column) from u8 to bf16; the other rows (and
//!   the columns past the plane) keep what the tiles held, zeros or an earlier unit's levels,
//!   which their zero weights turn into +0 products as zeros would through a 256-entry table in L1 (every u8 is exact in bf16;
//!   the unpacker has no u8 format in the emulator and the conversion costs the data-movement core
//!   one load per byte), and provides the block's weights, three parts per weight tile: the
//!   page set the band table names for its row tile and for its column tile
//!   ([`crate::ops::resize_filter`]: tiles with the same weights share a set). Each weight CB
//!   is a ring of two slots the compute kernel only reads, so the reader reads a set from DRAM
//!   only when neither slot holds it (a local copy from the other slot otherwise, or nothing):
//!   the identity resize reads one set per axis per core instead of one per block;
//! * the compute kernel runs the first pass into the `k2` intermediate tiles (vertical first:
//!   Z_t = Σ_a V_a · P_at; horizontal first: Y_aᵀ = Σ_t H_t · P_atᵀ), rounds them to u8 values
//!   (bf16, exact), then the second pass (Fᵀ = Σ_t H_t · Z_tᵀ, or F = Σ_a V_a · Y_a), rounds,
//!   and scales by 1/255. Weights sit in in0 (SrcB), data in in1 (SrcA, exact from HiFi2 up).
//!   Weight parts 0 + 1 accumulate A in DST 0 and part 2 accumulates B in DST 1, both exact in
//!   fp32 (A + B = S / 2²²; [`crate::ops::resize_filter`]; the planner checks B's bound through
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
//!   holds the u8 levels and each copy is scaled by 1/255 in DST (a bf16 frame is scaled once,
//!   before the copies: bf16 passes SrcA whole); each is packed
//!   untilized, the three side by side, and the writer puts each 32-value row stretch at its
//!   place in the frame page of its image row. Shifting on the matrix unit is what lets conv1a
//!   build its taps from whole rows: a one-pixel shift is 2 bytes, which no NoC copy can do.
//!
//! Only the non-zero bands are multiplied: 3·kv·kh + 3·kh tile products per block (vertical
//! first), 3·kv·kh + 3·kv (horizontal first).

use serde::{Deserialize, Serialize};

use crate::device::{Format, Grid, Precision};
use crate::kir::{
    args, blocks, cb_format, cb_id, format_args, input, names, per_core, Arg, Call, Kernel,
    KirError, Role, SfpuOp, Trips,
};
use crate::layout::DeviceTensor;
use crate::ops::resize_filter::{axis_filter, pack_bands, AxisFilter, PARTS};
use crate::plan::{
    output_buffers, BufferPlan, CbKind, CbPlan, Content, NodePlan, OpPlan, PlanError, Split,
};
use superpoint_graph::reference::resize::vertical_first;

/// The largest input plane side the device resize takes (one 4 KiB DRAM page per row).
pub const MAX_PLANE_SIDE: u32 = 4096;

/// The largest [`AxisFilter::rest_sum`] the rounding stays exact for: then every partial sum of
/// B is a multiple of 2⁻²² below 255·sum·2⁻²² < 4, exact in fp32 (module docs).
pub const MAX_REST_SUM: u32 = ((1 << 24) - 1) / 255;

/// The axis a resize filter acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Axis {
    /// Along rows (input width → frame width).
    Horizontal,
    /// Along columns (input height → frame height).
    Vertical,
}

/// A resize node's shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResizePlan {
    pub in_width: u32,
    pub in_height: u32,
    /// Bytes of one plane row page (width padded to 64).
    pub row_bytes: u32,
    pub width: u32,
    pub height: u32,
    pub width_tiles: u32,
    /// Input column tiles of one output column tile's band.
    pub kh: u32,
    /// Input row tiles of one output row tile's band.
    pub kv: u32,
    /// Pillow's pass order for these sizes: the vertical pass first (else the horizontal one).
    pub vertical_first: bool,
    /// Bytes of one staged input row: the band's columns plus 64-byte alignment on both sides.
    pub window: u32,
    /// Output rows of one unit of work: 32 (a block), or 16 (half a block) when that spreads the
    /// work more evenly over the grid ([`unit_rows`]).
    pub unit_rows: u32,
    /// The most band rows one unit reads ([`AxisFilter::unit_spans`]).
    pub unit_band_rows: u32,
    /// Bytes of the band table page.
    pub bands_bytes: u32,
    pub hweights: String,
    pub vweights: String,
    pub bands: String,
}

/// The host bytes of a resize filter buffer (weights or band table); `None` for other contents.
pub fn filter_bytes(content: &Content) -> Option<Vec<u8>> {
    match content {
        Content::ResizeWeights { input, output, .. } => {
            Some(axis_filter(*input as usize, *output as usize).pages)
        }
        Content::ResizeBands {
            in_width,
            in_height,
            width,
            height,
            unit_rows,
            bytes,
        } => {
            let cols = axis_filter(*in_width as usize, *width as usize);
            let rows = axis_filter(*in_height as usize, *height as usize);
            Some(pack_bands(
                &cols,
                &rows,
                *unit_rows as usize,
                *bytes as usize,
            ))
        }
        _ => None,
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

fn stream(
    id: u32,
    name: &str,
    pages: u32,
    page_bytes: u32,
    format: Format,
    kind: CbKind,
) -> CbPlan {
    CbPlan {
        id,
        name: name.to_string(),
        pages,
        page_bytes,
        format,
        kind,
    }
}

/// The output rows of a unit of work for `blocks` blocks on `cores` cores: half a block when the
/// slowest core then converts and writes fewer rows (300 blocks on 120 cores: 5 halves instead of
/// 3 blocks), else a whole block (on 110 cores 6 halves are no fewer rows than 3 blocks, and each
/// unit costs the compute kernel a whole block).
pub fn unit_rows(blocks: u32, cores: u32) -> u32 {
    let cores = cores.max(1);
    if (2 * blocks).div_ceil(cores) < 2 * blocks.div_ceil(cores) {
        16
    } else {
        32
    }
}

/// Band tiles of a filter, as a u32.
fn band(f: &AxisFilter) -> u32 {
    f.band_tiles as u32
}

/// Plans resize node `name` from the plane `input` (laid out as `plane`) to a `width`×`height`
/// frame: its node and the buffers it writes or reads besides its input.
pub fn plan_node(
    name: &str,
    input: &str,
    plane: DeviceTensor,
    (width, height): (usize, usize),
    grid: Grid,
    precision: Precision,
) -> Result<(NodePlan, Vec<BufferPlan>), PlanError> {
    let DeviceTensor::Plane {
        width: in_width,
        height: in_height,
    } = plane
    else {
        return Err(PlanError::NotOnDevice {
            node: name.to_string(),
            input: input.to_string(),
        });
    };
    if in_width == 0 || in_height == 0 || in_width > MAX_PLANE_SIDE || in_height > MAX_PLANE_SIDE {
        return Err(PlanError::PlaneSize {
            node: name.to_string(),
            width: in_width,
            height: in_height,
            max: MAX_PLANE_SIDE,
        });
    }
    if width % 32 != 0 || height % 32 != 0 {
        return Err(PlanError::FrameNotMultiple32 {
            node: name.to_string(),
            width,
            height,
        });
    }
    let cols = axis_filter(in_width as usize, width);
    let rows = axis_filter(in_height as usize, height);
    for (axis, filter, input, output) in [
        (Axis::Horizontal, &cols, in_width, width),
        (Axis::Vertical, &rows, in_height, height),
    ] {
        if filter.rest_sum > MAX_REST_SUM {
            return Err(PlanError::ResizeRounding {
                node: name.to_string(),
                axis,
                input,
                output: output as u32,
                sum: filter.rest_sum,
                max: MAX_REST_SUM,
            });
        }
    }
    let (kh, kv) = (band(&cols), band(&rows));
    let width_tiles = (width / 32) as u32;
    let height_tiles = (height / 32) as u32;
    let window = (kh * 32 + 128).div_ceil(64) * 64;
    let unit = unit_rows(width_tiles * height_tiles, grid.cores());
    let unit_band_rows = rows
        .unit_spans(unit as usize)
        .iter()
        .map(|(lo, hi)| hi - lo)
        .max()
        .unwrap_or(0);
    let row_words = 2 + 2 * 32 / unit;
    let bands_bytes = ((width_tiles * 2 + height_tiles * row_words) * 4).div_ceil(64) * 64;
    let format = precision.format;
    let frame = DeviceTensor::FrameRows {
        height: height as u32,
        width: width as u32,
        format,
    };
    let hweights = format!("{name}.hweights");
    let vweights = format!("{name}.vweights");
    let bands = format!("{name}.bands");
    let mut buffers = output_buffers(name, frame);
    buffers.push(BufferPlan {
        name: hweights.clone(),
        pages: cols.set_count() as u32 * PARTS as u32 * kh,
        page_bytes: 2048,
        content: Content::ResizeWeights {
            axis: Axis::Horizontal,
            input: in_width,
            output: width as u32,
        },
        l1_offset: None,
    });
    buffers.push(BufferPlan {
        name: vweights.clone(),
        pages: rows.set_count() as u32 * PARTS as u32 * kv,
        page_bytes: 2048,
        content: Content::ResizeWeights {
            axis: Axis::Vertical,
            input: in_height,
            output: height as u32,
        },
        l1_offset: None,
    });
    buffers.push(BufferPlan {
        name: bands.clone(),
        pages: 1,
        page_bytes: bands_bytes,
        content: Content::ResizeBands {
            in_width,
            in_height,
            width: width as u32,
            height: height as u32,
            unit_rows: unit,
            bytes: bands_bytes,
        },
        l1_offset: None,
    });
    let bf16 = Format::Bf16;
    let parts = PARTS as u32;
    let vertical_first = vertical_first(in_width as usize, in_height as usize, width, height);
    let mid_tiles = if vertical_first { kh } else { kv };
    let node = NodePlan {
        name: name.to_string(),
        inputs: vec![input.to_string()],
        output: name.to_string(),
        precision,
        split: Split::new(grid, width_tiles * height_tiles * 32 / unit),
        cbs: vec![
            stream(0, "cb_plane", 2 * kv * kh, 2048, bf16, CbKind::Stream),
            stream(1, "cb_vweights", 2 * parts * kv, 2048, bf16, CbKind::Stream),
            stream(2, "cb_hweights", 2 * parts * kh, 2048, bf16, CbKind::Stream),
            stream(3, "cb_mid", mid_tiles, 2048, bf16, CbKind::Stream),
            stream(4, "cb_lut", 1, 512, bf16, CbKind::Scratch),
            stream(5, "cb_bands", 1, bands_bytes, bf16, CbKind::Scratch),
            stream(6, "cb_rows", 1, 32 * kv * window, bf16, CbKind::Scratch),
            stream(7, "cb_shift", 2, 2048, bf16, CbKind::Stream),
            stream(
                8,
                "cb_final",
                1,
                format.tile_bytes(),
                format,
                CbKind::Stream,
            ),
            stream(9, "cb_tmp", 1, format.tile_bytes(), format, CbKind::Stream),
            stream(16, "cb_out", 6, format.tile_bytes(), format, CbKind::Stream),
        ],
        op: OpPlan::Resize(ResizePlan {
            in_width,
            in_height,
            row_bytes: in_width.div_ceil(64) * 64,
            width: width as u32,
            height: height as u32,
            width_tiles,
            kh,
            kv,
            vertical_first,
            window,
            unit_rows: unit,
            unit_band_rows,
            bands_bytes,
            hweights,
            vweights,
            bands,
        }),
    };
    Ok((node, buffers))
}

fn sfpu(op: SfpuOp) -> Call {
    Call::Sfpu { op, tiles: 1 }
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
    .map(sfpu)
    .collect()
}

/// The reader, compute and writer kernels of a resize node.
pub fn kernels(node: &NodePlan, r: &ResizePlan) -> Result<Vec<Kernel>, KirError> {
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
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(plane.clone()),
                Arg::BufferAddress(r.vweights.clone()),
                Arg::BufferAddress(r.hweights.clone()),
                Arg::BufferAddress(r.bands.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
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
    // The 1/255 scaling: once before the copies of a bf16 frame, after each copy of a Float32
    // one (whose copies move the u8 levels, exact through SrcA; module docs).
    let scaled = |before_copies: bool| -> Vec<Call> {
        if before_copies == (format == Format::Bf16) {
            vec![sfpu(SfpuOp::MulScalar)]
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
                            scaled(true),
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
                    // Copies ∓1: S_dx·Fᵀ through cb_tmp, transposed, packed untilized.
                    Call::Loop {
                        trips: Trips::Fixed(2),
                        body: vec![
                            Call::CbReserve {
                                cb: cb_tmp,
                                pages: 1,
                            },
                            Call::Dst {
                                tiles: 1,
                                body: vec![
                                    matmuls(1),
                                    Call::Pack {
                                        cb: cb_tmp,
                                        tiles: 1,
                                    },
                                ],
                            },
                            Call::CbPush {
                                cb: cb_tmp,
                                pages: 1,
                            },
                            Call::CbWait {
                                cb: cb_tmp,
                                pages: 1,
                            },
                            Call::Dst {
                                tiles: 1,
                                body: [
                                    vec![Call::Transpose { tiles: 1 }],
                                    scaled(false),
                                    vec![Call::Pack {
                                        cb: cb_out,
                                        tiles: 1,
                                    }],
                                ]
                                .concat(),
                            },
                            Call::CbPop {
                                cb: cb_tmp,
                                pages: 1,
                            },
                        ],
                    },
                    // Copy 0: F, or Fᵀ transposed.
                    Call::Dst {
                        tiles: 1,
                        body: [
                            vec![if r.vertical_first {
                                Call::Transpose { tiles: 1 }
                            } else {
                                Call::Copy { tiles: 1 }
                            }],
                            scaled(false),
                            vec![Call::Pack {
                                cb: cb_out,
                                tiles: 1,
                            }],
                        ]
                        .concat(),
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
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(node.output.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
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

    #[test]
    fn filter_bytes_fill_the_planned_buffers() {
        let grid = Grid::ETH_DISPATCH;
        let plane = DeviceTensor::Plane {
            width: 100,
            height: 70,
        };
        let (_, buffers) =
            plan_node("frame", "input", plane, (64, 32), grid, Precision::PORT).expect("plans");
        for b in &buffers[1..] {
            let bytes = filter_bytes(&b.content).expect("a filter buffer");
            assert_eq!(bytes.len() as u32, b.pages * b.page_bytes, "{}", b.name);
        }
        assert_eq!(filter_bytes(&buffers[0].content), None);
    }

    // The strongest downscales the planner takes (4096 → 32 samples, and a few odd sizes near
    // it) keep the rounding's bound on |B| with room to spare.
    #[test]
    fn rest_sums_of_the_strongest_downscales_are_within_the_bound() {
        for input in [4096, 4095, 4001, 3333, 2048] {
            let sum = axis_filter(input, 32).rest_sum;
            println!("{input} -> 32: rest sum {sum} (limit {MAX_REST_SUM})");
            assert!(sum <= MAX_REST_SUM, "{input}: {sum}");
        }
        let plane = DeviceTensor::Plane {
            width: 4096,
            height: 4096,
        };
        let planned = plan_node(
            "frame",
            "input",
            plane,
            (32, 32),
            Grid::ETH_DISPATCH,
            Precision::PORT,
        );
        assert!(planned.is_ok());
    }

    // Halves when they lower the slowest core's rows: 300 blocks on 120 cores, 5 halves (80 rows)
    // instead of 3 blocks (96); on 110 cores 6 halves = 3 blocks; 6 blocks on 2 cores, 3 each.
    #[test]
    fn units_are_half_blocks_only_where_they_balance() {
        assert_eq!(unit_rows(300, 120), 16);
        assert_eq!(unit_rows(300, 110), 32);
        assert_eq!(unit_rows(6, 2), 32);
        assert_eq!(unit_rows(5, 2), 16);
    }

    #[test]
    fn pass_order_follows_pillow() {
        let order = |width, height, frame| {
            let plane = DeviceTensor::Plane { width, height };
            let (node, _) = plan_node(
                "frame",
                "input",
                plane,
                frame,
                Grid::ETH_DISPATCH,
                Precision::PORT,
            )
            .expect("plans");
            match node.op {
                OpPlan::Resize(r) => r.vertical_first,
                other => panic!("expected a resize, got {other:?}"),
            }
        };
        assert!(order(70, 300, (64, 64)));
        assert!(!order(200, 150, (96, 64)));
        assert!(!order(64, 64, (64, 64)));
    }
}
