//! The conv that reads the frame (conv1a: one input channel, 3×3, pad 1) from its
//! [`FrameRows`](crate::DeviceTensor::FrameRows) layout, with whole-row NoC copies and a little
//! FPU work instead of an element gather on the RISC-V.
//!
//! The split is by image rows (W/32 output blocks each). Per image row y:
//! * the reader copies, for each tap row dy, frame page y + dy (its copies dx = −1, 0, +1) into
//!   rows 3·(dy+1) .. 3·(dy+1)+2 of a row-major block of 32 rows × W values, so row k = tap
//!   (dy, dx) = ky·3 + kx, the weights' K order for one input channel; three NoC reads of 3·W
//!   values. Rows 9..31 are zero (both CB slots are zeroed once), and so are the tap rows above and
//!   below the image (copied from rows 9..11); with the bias a row of K ([`ConvPlan::bias_row`])
//!   row 31 is ones instead, set once. It then stores the 2·(W/32 − 1) values each tap row
//!   misses at column-tile edges (FrameRows' copies ±1 hold 0 there) from copy 0, on the
//!   RISC-V;
//! * the compute kernel tilizes the block into W/32 tiles T_j (row k = tap k, column c =
//!   output pixel 32j + c) and, for each batch of output blocks (as many as `cb_im2col` holds
//!   and divide W/32), transposes their T_j into im2col tiles (row c = pixel, column k = tap;
//!   exact) under one transpose init, a DST acquire's worth at a time (`transpose_tiles`),
//!   packs them, and runs the conv's block
//!   (`conv2d/block.cpp.tera`: bias, matmul, ReLU) for each, the same operands as the generic
//!   reader's; the packer's ReLU is switched on and off once per batch. With bf16 at HiFi2 or
//!   above the bias is row 31 of the weights' K tile, which the reader fills from the bias tiles
//!   once they land, times the im2col's column of ones ([`ConvPlan::bias_row`]): no bias op in
//!   DST, and a batch's blocks share one matmul init; else the bias is copied into DST;
//! * the writer is the generic conv writer over the core's blocks; with an even number of blocks a
//!   row, only over half of them: the compute packs the others' tiles to `cb_out_reader` and the
//!   reader writes them on its NoC (after reading the next image row, so the compute never
//!   waits for it), which halves the output bytes each NoC's links carry. The reader takes the
//!   odd blocks of each row, or the even ones on the cores where that crosses fewer NoC links
//!   ([`ConvPlan::reader_even`]): its and the compute's runtime arg `reader_first`.

use crate::kir::{
    args, blocks, cb_id, cb_plan, exact_fp32_copies, fill_copies, format_args, input, names,
    per_core, share_args, Arg, Call, CoreArgs, Kernel, KirError, Role, Trips,
};
use crate::plan::frame_conv::OUT_READER_CB_NAME;
use crate::plan::{largest_divisor_within, ConvPlan, NodePlan};

use super::conv2d::{add_conv_weights_fill, block_writes, conv_block_groups, conv_writer};

/// The reader, compute and writer kernels of the frame conv.
pub fn kernels(node: &NodePlan, c: &ConvPlan) -> Result<Vec<Kernel>, KirError> {
    let frame = input(node, 0)?;
    let im2col = cb_id(node, "cb_im2col")?;
    let weights = cb_id(node, "cb_weights")?;
    let bias = cb_id(node, "cb_bias")?;
    let rows = cb_id(node, "cb_rows")?;
    let taps = cb_id(node, "cb_taps")?;
    let out = cb_id(node, "cb_out")?;
    let format = cb_plan(node, "cb_im2col")?.format;
    let tile = format.tile_bytes();
    let element = tile / 1024;
    let row_tiles = c.width / 32;
    let [tile_bytes, fp32] = format_args(format);
    let shape = args(&[
        ("height", c.height),
        ("width", c.width),
        ("width_tiles", row_tiles),
        ("k_tiles", c.k_tiles),
        ("out_tiles", c.out_tiles),
        ("slice_tiles", c.slice_tiles()),
        ("group", c.group),
        ("relu", u32::from(c.relu)),
        tile_bytes,
        fp32,
        ("weight_parts", c.weight_parts),
        ("weight_page_tiles", c.weight_page_tiles),
    ]);
    let resident = c.resident_weight_tiles();
    let pitch = c.width * element;
    // The output tiles the reader writes, half a row's blocks (plan::frame_conv).
    let reader_out = node
        .cbs
        .iter()
        .any(|b| b.name == OUT_READER_CB_NAME)
        .then(|| cb_id(node, OUT_READER_CB_NAME))
        .transpose()?;
    // The first block of each row the reader writes: 1 (the odd ones) or 0 (the even ones).
    let reader_first = |core| u32::from(!c.reader_even.contains(&core));
    let with_reader_first = |mut args: Vec<CoreArgs>| {
        if reader_out.is_some() {
            for a in &mut args {
                a.args.push(Arg::Const(reader_first(a.core)));
            }
        }
        args
    };
    let reader_first_name: &[&str] = if reader_out.is_some() {
        &["reader_first"]
    } else {
        &[]
    };
    let reader_writes = reader_out.map(|cb| block_writes(node, c, (cb, tile), row_tiles / 2));
    let mut buffers = vec![frame.as_str(), c.weights.as_str(), c.bias.as_str()];
    if reader_out.is_some() {
        buffers.push(node.output.as_str());
    }
    // With the bias a row of K (ConvPlan::bias_row), the reader and the compute know it.
    let bias_row = if c.bias_row {
        args(&[("bias_row", 1)])
    } else {
        Vec::new()
    };
    // Row 31 of both slots set to ones once, the same way (a row's 64 bytes stored, doubled to
    // the pitch, then copied to the other slot).
    let ones_row = if c.bias_row {
        vec![
            Call::L1Gather { bytes: 64 },
            Call::L1Copy {
                from: rows,
                cb: rows,
                tiles: 0,
                row_bytes: pitch,
                transfers: fill_copies(pitch) + 1,
            },
        ]
    } else {
        Vec::new()
    };
    let mut reader = Kernel {
        role: Role::Reader,
        template: "conv2d/frame_reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: [shape.clone(), bias_row.clone()].concat(),
        runtime_arg_names: names(
            &[
                &["input_addr", "weight_addr", "bias_addr"][..],
                if reader_out.is_some() {
                    &["output_addr"]
                } else {
                    &[]
                },
                &["row_start", "row_count"],
                reader_first_name,
            ]
            .concat(),
        ),
        runtime_args: with_reader_first(share_args(node, &buffers)),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            // Both slots zeroed once (`zero_fill`: 64 bytes stored, doubled by NoC copies).
            vec![
                Call::CbReserve {
                    cb: rows,
                    pages: 2 * row_tiles,
                },
                Call::L1Gather { bytes: 64 },
                Call::L1Copy {
                    from: rows,
                    cb: rows,
                    tiles: 2 * row_tiles,
                    row_bytes: 64,
                    transfers: fill_copies(2 * row_tiles * 2048),
                },
            ],
            ones_row,
            vec![blocks(
                Trips::Blocks,
                vec![
                    Call::CbReserve {
                        cb: rows,
                        pages: row_tiles,
                    },
                    // The three tap rows of each dy, from the frame or from zero rows 9..11.
                    Call::DramPart {
                        buffer: frame.clone(),
                        write: false,
                        transfers: 3,
                        bytes: 3 * pitch,
                        offset_step: 0,
                        cb: rows,
                    },
                    // The tile-edge values of copies ±1, from copy 0.
                    Call::L1Gather {
                        bytes: 3 * 2 * (row_tiles - 1) * element,
                    },
                    Call::CbPush {
                        cb: rows,
                        pages: row_tiles,
                    },
                ]
                .into_iter()
                .chain(reader_writes)
                .collect(),
            )],
        ]
        .concat(),
    };
    add_conv_weights_fill(&mut reader, node, c)?;
    let batch = largest_divisor_within(row_tiles, cb_plan(node, "cb_im2col")?.pages);
    // The batch's transposes, a DST acquire's worth at a time (the template's transpose_tiles).
    let transpose_tiles = node.precision.dst_tiles();
    let transposes = |tiles: u32| Call::Dst {
        tiles,
        body: vec![Call::Transpose { tiles }, Call::Pack { cb: im2col, tiles }],
    };
    let mut block = vec![Call::CbReserve {
        cb: im2col,
        pages: batch,
    }];
    if batch >= transpose_tiles {
        block.push(Call::Loop {
            trips: Trips::Fixed(batch / transpose_tiles),
            body: vec![transposes(transpose_tiles)],
        });
    }
    if batch % transpose_tiles != 0 {
        block.push(transposes(batch % transpose_tiles));
    }
    block.extend([
        Call::CbPush {
            cb: im2col,
            pages: batch,
        },
        Call::CbWait {
            cb: im2col,
            pages: batch,
        },
        match reader_out {
            Some(reader_out) => Call::Loop {
                trips: Trips::Fixed(batch / 2),
                body: vec![conv_block_groups(c, out), conv_block_groups(c, reader_out)],
            },
            None => Call::Loop {
                trips: Trips::Fixed(batch),
                body: vec![conv_block_groups(c, out)],
            },
        },
        Call::CbPop {
            cb: im2col,
            pages: batch,
        },
    ]);
    // The image rows: each tilized, then transposed and convolved a batch at a time.
    let image_rows = blocks(
        Trips::Blocks,
        vec![
            Call::CbWait {
                cb: rows,
                pages: row_tiles,
            },
            Call::CbReserve {
                cb: taps,
                pages: row_tiles,
            },
            // `tilize_block`: each tile unpacked row-major and packed.
            Call::Loop {
                trips: Trips::Fixed(row_tiles),
                body: vec![Call::Dst {
                    tiles: 1,
                    body: vec![Call::Copy { tiles: 1 }, Call::Pack { cb: taps, tiles: 1 }],
                }],
            },
            Call::CbPush {
                cb: taps,
                pages: row_tiles,
            },
            Call::CbPop {
                cb: rows,
                pages: row_tiles,
            },
            Call::CbWait {
                cb: taps,
                pages: row_tiles,
            },
            Call::Loop {
                trips: Trips::Fixed(row_tiles / batch),
                body: block,
            },
            Call::CbPop {
                cb: taps,
                pages: row_tiles,
            },
        ],
    );
    let compute = Kernel {
        role: Role::Compute,
        template: "conv2d/frame_compute.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: [
            shape.clone(),
            args(&[("batch", batch), ("transpose_tiles", transpose_tiles)]),
            bias_row,
        ]
        .concat(),
        runtime_arg_names: names(&[&["row_count"][..], reader_first_name].concat()),
        runtime_args: with_reader_first(per_core(node, |_, count| vec![Arg::Const(count)])),
        precision: Some(node.precision),
        unpack_to_dest_fp32: exact_fp32_copies(node, &["cb_bias"]),
        body: [
            vec![
                Call::CbWait {
                    cb: weights,
                    pages: resident,
                },
                Call::CbWait {
                    cb: bias,
                    pages: c.out_tiles,
                },
            ],
            vec![image_rows],
            vec![
                Call::CbPop {
                    cb: bias,
                    pages: c.out_tiles,
                },
                Call::CbPop {
                    cb: weights,
                    pages: resident,
                },
            ],
        ]
        .concat(),
    };
    let block_step = if reader_out.is_some() { 2 } else { 1 };
    let writer = conv_writer(node, c, shape, (out, tile), (row_tiles, block_step), None)?;
    Ok(vec![reader, compute, writer])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kir::{walk, OnCore};
    use crate::lower::lower;
    use crate::plan::{plan, OpPlan, PlanParams};
    use superpoint_graph::superpoint;

    /// A core of 4 image rows (no multicast sender).
    fn four_rows() -> OnCore {
        OnCore {
            blocks: 4,
            units: 0,
            counted: 4,
            sender: false,
            other_senders: 1,
            stager: false,
            first_sender: false,
        }
    }

    /// The network up to conv1a at `width`×480, planned by default (12×10), and its node.
    fn conv1a_at(width: usize) -> (crate::plan::Plan, NodePlan) {
        let graph = superpoint(width, 480).pruned(&["conv1a"]);
        let planned = plan(&graph, &PlanParams::default()).expect("plans");
        let node = planned
            .nodes
            .iter()
            .find(|n| n.name == "conv1a")
            .expect("conv1a")
            .clone();
        (planned, node)
    }

    /// The network up to conv1a at 640×480 on 12×10: conv1a is split by image rows (4 a core)
    /// and its reader stores, per image row, the 2·19 tile-edge values of three tap rows
    /// (228 bf16 bytes) besides the one zeroing of its two slots (64 bytes) and the row of ones
    /// (64 bytes, doubled by NoC copies) that multiplies the bias row of the weights.
    #[test]
    fn conv1a_reads_the_frame_by_image_rows() {
        let (planned, node) = conv1a_at(640);
        assert!(matches!(&node.op, OpPlan::Conv2d(c) if c.frame_rows && !c.shifted));
        assert_eq!(node.split.blocks, 480);
        assert!(node.split.work.iter().all(|w| w.count == 4));
        let kir = lower(&planned).expect("lowers");
        let conv = kir.nodes.iter().find(|n| n.node == "conv1a").expect("kir");
        let reader = &conv.kernels[0];
        assert_eq!(reader.template, "conv2d/frame_reader.cpp.tera");
        let mut gathered = 0;
        let on = four_rows();
        walk(&reader.body, on, 1, &mut |call, times| {
            if let Call::L1Gather { bytes } = call {
                gathered += times * u64::from(*bytes);
            }
        });
        assert_eq!(gathered, 64 + 64 + 4 * 228);
    }

    /// The output pages each kernel of conv1a writes on a core of 4 image rows: at 640 wide (20
    /// blocks a row, 2 tiles each) the reader writes half the blocks' 20 tiles a row and the
    /// writer the others' (80 pages each, 160 in all, as one writer did); at 96 wide (3
    /// blocks a row) there is no `cb_out_reader` and the writer writes all 4 · 3 · 2 = 24.
    #[test]
    fn conv1a_splits_its_output_pages_between_both_nocs_when_a_row_has_even_blocks() {
        let written = |width: usize| {
            let (planned, node) = conv1a_at(width);
            let reader_out = node.cbs.iter().any(|b| b.name == OUT_READER_CB_NAME);
            let kir = lower(&planned).expect("lowers");
            let conv = kir.nodes.iter().find(|n| n.node == "conv1a").expect("kir");
            let on = four_rows();
            let pages = |kernel: &Kernel| {
                let mut pages = 0;
                walk(&kernel.body, on, 1, &mut |call, times| {
                    if let Call::DramWrite {
                        buffer, pages: p, ..
                    } = call
                    {
                        assert_eq!(buffer, "conv1a");
                        pages += times * u64::from(*p);
                    }
                });
                pages
            };
            (reader_out, pages(&conv.kernels[0]), pages(&conv.kernels[2]))
        };
        assert_eq!(written(640), (true, 80, 80));
        assert_eq!(written(96), (false, 0, 24));
    }
}
