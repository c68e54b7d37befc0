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
//! (`transpose_tile`; max commutes with it). So the op is two programs of the same reader and
//! compute kernels:
//! 1. `<node>.vertical`: shift along y (neighbours one tile row away), max over the 2r+1 shifts,
//!    transposed → the column maxima, stored transposed in an intermediate Map-sized buffer;
//! 2. `<node>`: shift those along their rows (= x; neighbours one tile column away), max,
//!    transposed back → the window maximum M. The writer feeds the score tile S to compute
//!    (`cb_scores`), which keeps S where S == M and +0 elsewhere on the SFPU (`eq_binary_tile`,
//!    then `where_tile`), and writes the output.
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
//! (`nms/bits_compute.cpp.tera`, [`select_keypoints::candidate_bits`]).
//!
//! Both programs split the map's tiles over the grid like every node (`Split`). A second program
//! instead of one is the halo exchange: the row pass needs column maxima of the neighbouring
//! tiles, which other cores compute. Max and transpose are exact in the fp32 DST, so the result
//! is bit for bit the reference's (denormal scores excepted: the unpacker flushes them).
//!
//! On silicon the compute kernel must unpack `cb_shift` and `cb_scores` straight to the fp32 DST
//! (`UnpackToDestFp32`, with which tt-metal transposes 32-bit tiles in DST); through SrcA an fp32
//! tile is cut to TF32 and the equality mask would fail. The emulator unpacks copies and
//! transposes exactly; the dispatch program does not carry unpack-to-dest modes yet.

use serde::{Deserialize, Serialize};

use crate::device::{Grid, Precision};
use crate::kir::{
    args, blocks, cb_id, input, names, per_core, Arg, Call, CompileArg, CoreArgs, CountSource,
    Kernel, KirError, Role, SfpuOp, Trips,
};
use crate::layout::tensor::MAP_PAGE_BYTES;
use crate::layout::DeviceTensor;
use crate::ops::select_keypoints::{self, SelectPlan};
use crate::plan::{
    cb_fp32, tensor_buffers, BufferPlan, CbKind, Content, NodePlan, OpPlan, PlanError, Split,
};

/// Bytes of one row of a 16×16 face of f32.
const FACE_ROW_BYTES: u32 = 64;
/// Bytes of a 16×16 face of f32.
const FACE_BYTES: u32 = 16 * FACE_ROW_BYTES;

/// The largest radius the device lowers: the window must stay within the neighbouring tiles and
/// a shift must cut a 16-row face into at most two runs. Larger radii run on the host.
pub const MAX_DEVICE_RADIUS: usize = 8;

/// Which of the two passes a program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NmsPass {
    /// Column maxima along y, stored transposed.
    Vertical,
    /// Row maxima of the column maxima along x, transposed back, then the equality mask.
    Horizontal,
}

/// One pass of an NMS node, in tiles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NmsPlan {
    pub pass: NmsPass,
    pub radius: u32,
    pub tiles_x: u32,
    pub tiles_y: u32,
    /// The keypoint selection fused into the row pass's writer, if any.
    pub select: Option<SelectPlan>,
}

/// The buffers and the two programs of NMS node `name` on the `height`×`width` map `scores`.
/// The caller adds the output buffer (the node's Map).
pub fn plan(
    name: &str,
    scores: &str,
    (height, width): (u32, u32),
    radius: usize,
    precision: Precision,
    grid: Grid,
) -> Result<(Vec<BufferPlan>, Vec<NodePlan>), PlanError> {
    if radius == 0 || radius > MAX_DEVICE_RADIUS {
        return Err(PlanError::NmsRadius {
            node: name.to_string(),
            radius,
            max: MAX_DEVICE_RADIUS,
        });
    }
    if !precision.fp32_dest {
        return Err(PlanError::NmsNeedsFp32Dst {
            node: name.to_string(),
        });
    }
    if height % 32 != 0 || width % 32 != 0 {
        return Err(PlanError::FrameNotMultiple32 {
            node: name.to_string(),
            width: width as usize,
            height: height as usize,
        });
    }
    let (tiles_x, tiles_y) = (width / 32, height / 32);
    let vertical = format!("{name}.vertical");
    let intermediate = DeviceTensor::Map { height, width };
    let buffers = tensor_buffers(&vertical, intermediate, |_| Content::Scratch {
        node: name.to_string(),
        tensor: intermediate,
    });
    let node = |step: &str, inputs: Vec<String>, pass: NmsPass| {
        let mut cbs = vec![
            cb_fp32(0, "cb_shift", 2, CbKind::Stream),
            cb_fp32(2, "cb_window", 3, CbKind::Scratch),
            cb_fp32(16, "cb_out", 2, CbKind::Stream),
        ];
        if pass == NmsPass::Horizontal {
            cbs.insert(1, cb_fp32(1, "cb_scores", 2, CbKind::Stream));
        }
        NodePlan {
            name: step.to_string(),
            inputs,
            output: step.to_string(),
            precision,
            split: Split::new(grid, tiles_x * tiles_y),
            cbs,
            op: OpPlan::Nms(NmsPlan {
                pass,
                radius: radius as u32,
                tiles_x,
                tiles_y,
                select: None,
            }),
        }
    };
    let nodes = vec![
        node(&vertical, vec![scores.to_string()], NmsPass::Vertical),
        node(
            name,
            vec![vertical.clone(), scores.to_string()],
            NmsPass::Horizontal,
        ),
    ];
    Ok((buffers, nodes))
}

/// Where the counted loop of the row pass's writer gets its trips: the fused selection's counts,
/// when it scans by candidate bits.
pub fn count_source(p: &NmsPlan) -> Option<CountSource> {
    p.select
        .as_ref()
        .filter(|s| select_keypoints::candidate_bits(s))
        .map(select_keypoints::count_source)
}

/// The reader, compute and writer of one pass.
pub fn kernels(node: &NodePlan, p: &NmsPlan) -> Result<Vec<Kernel>, KirError> {
    let source = input(node, 0)?;
    let shift = cb_id(node, "cb_shift")?;
    let window = cb_id(node, "cb_window")?;
    let out = cb_id(node, "cb_out")?;
    let taps = 2 * p.radius + 1;
    let axis = match p.pass {
        NmsPass::Vertical => 0,
        NmsPass::Horizontal => 1,
    };
    let shape = args(&[
        ("tiles_x", p.tiles_x),
        ("tiles_y", p.tiles_y),
        ("radius", p.radius),
        ("axis", axis),
    ]);
    let reader = Kernel {
        role: Role::Reader,
        template: "nms/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: shape.clone(),
        runtime_arg_names: names(&["input_addr", "tile_start", "tile_count"]),
        runtime_args: per_core(node, |start, count| {
            vec![
                Arg::BufferAddress(source.clone()),
                Arg::Const(start),
                Arg::Const(count),
            ]
        }),
        precision: None,
        body: vec![
            Call::CbReserve {
                cb: window,
                pages: 3,
            },
            blocks(
                Trips::Blocks,
                vec![
                    // The tile's four faces into the window's strips, and the `radius` rows next
                    // to it of its neighbours along the axis: a run of face rows in each of two
                    // faces (none at the edges).
                    Call::DramPart {
                        buffer: source.clone(),
                        write: false,
                        transfers: 4,
                        bytes: FACE_BYTES,
                        offset_step: FACE_BYTES,
                        cb: window,
                    },
                    Call::DramPart {
                        buffer: source.clone(),
                        write: false,
                        transfers: 4,
                        bytes: p.radius * FACE_ROW_BYTES,
                        offset_step: FACE_ROW_BYTES,
                        cb: window,
                    },
                    Call::Loop {
                        trips: Trips::Fixed(taps),
                        // A shifted tile: a 1 KiB local NoC copy per face from the window's
                        // strips, two where it clips at an edge (NoC work the emulator counts,
                        // no RISC-V element loop).
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
                    },
                ],
            ),
        ],
    };
    let bits = p
        .select
        .as_ref()
        .is_some_and(select_keypoints::candidate_bits);
    let mut dst = vec![
        Call::Loop {
            trips: Trips::Fixed(taps),
            body: vec![
                Call::CbWait {
                    cb: shift,
                    pages: 1,
                },
                Call::Transpose { tiles: 1 },
                Call::CbPop {
                    cb: shift,
                    pages: 1,
                },
            ],
        },
        Call::Sfpu {
            op: SfpuOp::Max,
            tiles: taps - 1,
        },
    ];
    // The window pass's DST work per block, then one output tile packed and pushed.
    let packed_per_block = |template: &'static str, mut dst: Vec<Call>| {
        dst.extend([
            Call::CbReserve { cb: out, pages: 1 },
            Call::Pack { cb: out, tiles: 1 },
        ]);
        (
            template,
            vec![blocks(
                Trips::Blocks,
                vec![
                    Call::Dst {
                        tiles: 2,
                        body: dst,
                    },
                    Call::CbPush { cb: out, pages: 1 },
                ],
            )],
            shape.clone(),
        )
    };
    let (template, body, compute_args) = match p.pass {
        NmsPass::Vertical => packed_per_block("nms/compute.cpp.tera", dst),
        NmsPass::Horizontal => {
            let scores = cb_id(node, "cb_scores")?;
            dst.extend([
                Call::CbWait {
                    cb: scores,
                    pages: 1,
                },
                Call::Copy { tiles: 1 },
                Call::CbPop {
                    cb: scores,
                    pages: 1,
                },
                Call::Sfpu {
                    op: SfpuOp::Eq,
                    tiles: 1,
                },
                Call::Sfpu {
                    op: SfpuOp::Where,
                    tiles: 1,
                },
            ]);
            if bits {
                bits_compute(node, dst, &shape)?
            } else {
                packed_per_block("nms/mask_compute.cpp.tera", dst)
            }
        }
    };
    let compute = Kernel {
        role: Role::Compute,
        template: template.into(),
        ranges: node.split.ranges.clone(),
        compile_args: compute_args,
        runtime_arg_names: names(&["tile_count"]),
        runtime_args: per_core(node, |_, count| vec![Arg::Const(count)]),
        precision: Some(node.precision),
        body,
    };
    let write = Call::DramWrite {
        buffer: node.output.clone(),
        pages: 1,
        page_bytes: MAP_PAGE_BYTES,
        cb: out,
    };
    let writer = match p.pass {
        NmsPass::Vertical => Kernel {
            role: Role::Writer,
            template: "nms/vertical_writer.cpp.tera".into(),
            ranges: node.split.ranges.clone(),
            compile_args: shape,
            runtime_arg_names: names(&["output_addr", "tile_start", "tile_count"]),
            runtime_args: per_core(node, |start, count| {
                vec![
                    Arg::BufferAddress(node.output.clone()),
                    Arg::Const(start),
                    Arg::Const(count),
                ]
            }),
            precision: None,
            body: vec![blocks(
                Trips::Blocks,
                vec![
                    Call::CbWait { cb: out, pages: 1 },
                    write,
                    Call::CbPop { cb: out, pages: 1 },
                ],
            )],
        },
        NmsPass::Horizontal => mask_writer(node, p, shape, write)?,
    };
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
        },
        Call::Sfpu {
            op: SfpuOp::Eq,
            tiles: 1,
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

/// The writer of the row pass: feeds the score tiles to compute's equality mask and writes the
/// output, fused with the keypoint selection when the plan put one here
/// ([`crate::ops::select_keypoints::place`]).
fn mask_writer(
    node: &NodePlan,
    p: &NmsPlan,
    mut compile_args: Vec<CompileArg>,
    write: Call,
) -> Result<Kernel, KirError> {
    let scores = input(node, 1)?;
    let scores_cb = cb_id(node, "cb_scores")?;
    let out = cb_id(node, "cb_out")?;
    let mut arg_names = names(&["output_addr", "scores_addr", "tile_start", "tile_count"]);
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
        write,
    ];
    let mut body = Vec::new();
    let mut end = Vec::new();
    let template = match &p.select {
        None => "nms/writer.cpp.tera",
        Some(sel) => {
            compile_args.extend(select_keypoints::compile_args(sel));
            arg_names.extend(names(&select_keypoints::RUNTIME_ARG_NAMES));
            let calls = select_keypoints::record_calls(node, sel)?;
            if select_keypoints::candidate_bits(sel) {
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
            .zip(0u32..)
            .map(|(w, region)| {
                let mut args = vec![
                    Arg::BufferAddress(node.output.clone()),
                    Arg::BufferAddress(scores.clone()),
                    Arg::Const(w.start),
                    Arg::Const(w.count),
                ];
                if let Some(sel) = &p.select {
                    args.extend(select_keypoints::runtime_args(sel, region));
                }
                CoreArgs { core: w.core, args }
            })
            .collect(),
        precision: None,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Fidelity;

    #[test]
    fn two_passes_over_the_map_tiles_with_an_intermediate_buffer() {
        let (buffers, nodes) = plan(
            "nms",
            "scores",
            (64, 96),
            4,
            Precision::PORT,
            Grid::ETH_DISPATCH,
        )
        .expect("plans");
        assert_eq!(buffers.len(), 1);
        assert_eq!(
            (buffers[0].name.as_str(), buffers[0].pages),
            ("nms.vertical", 6)
        );
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, vec!["nms.vertical", "nms"]);
        assert_eq!(nodes[1].inputs, vec!["nms.vertical", "scores"]);
        assert_eq!(nodes[1].split.work.len(), 6);
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
            let kir = crate::kir::lower(&crate::plan::plan(&graph, &params).expect("plans"))
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

    #[test]
    fn radius_and_dst_mode_are_checked() {
        let bf16_dst = Precision {
            fp32_dest: false,
            fidelity: Fidelity::HiFi4,
            ..Precision::PORT
        };
        let err = plan("n", "s", (32, 32), 2, bf16_dst, Grid::ETH_DISPATCH).err();
        assert_eq!(
            err,
            Some(PlanError::NmsNeedsFp32Dst {
                node: "n".to_string()
            })
        );
        let err = plan("n", "s", (32, 32), 9, Precision::PORT, Grid::ETH_DISPATCH).err();
        assert_eq!(
            err,
            Some(PlanError::NmsRadius {
                node: "n".to_string(),
                radius: 9,
                max: MAX_DEVICE_RADIUS
            })
        );
    }
}
