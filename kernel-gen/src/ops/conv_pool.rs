//! A convolution and the 2×2 max-pool that is its only consumer, lowered as one step when every
//! core of the conv's split computes whole pairs of image rows (SuperPoint's conv1b and conv2b on
//! 12×10): the pool's own program would pay a launch, read the conv's output back and write its
//! own; fused, the conv's output never leaves the core and the writer writes a quarter of the
//! bytes.
//!
//! The compute kernel (`conv2d/pool_compute.cpp.tera`) keeps the upper row of each pair in
//! `cb_row`; each lower-row block's DST gets the upper tile beside it and the SFPU maximum of the
//! two is packed to `cb_vmax` (the vertical maximum); every two such blocks (the 64 input columns
//! of one output block) are pooled by the row-selection matmuls of the standalone pool
//! (`max_pool2/select_tile.cpp.tera`) into `cb_out`, whose tiles the writer
//! (`max_pool2/conv_writer.cpp.tera`) stores as the pool's output; the conv's reader writes the
//! selection tiles and an identity tile while the weights travel
//! ([`super::conv2d::add_conv_weights_fill`]) and pushes the weights in rounds, for which the
//! compute's first block waits as its K steps need them (a [`Trips::FirstUnit`] loop over the
//! core's first pair of image rows). The outputs are the bits of the two programs: the packer's
//! rounding and ReLU are monotone and the upper tile is already packed, so packing the maximum of
//! the upper tile and the lower DST equals the maximum of the two packed outputs, and the
//! horizontal pass is the standalone pool's own code on the same tiles.
//!
//! Every FPU operation of the compute is a matmul of one row of `group` tiles: the bias and the
//! upper tiles enter DST as the identity tile times them (exact for finite values at HiFi2 and
//! above, as the selection matmuls are), so it initializes the matmul and the SFPU maximum once
//! per kernel instead of a copy and a matmul init per group and a matmul and SFPU init per pooled
//! tile.
//!
//! Elsewhere (a split whose runs start or end mid-pair, as on 11×10; output channels in slices;
//! Float32 activations; LoFi, which would round the selection matmuls' activations) the two
//! programs stay apart ([`crate::plan::conv_pool`] decides).

use crate::device::Format;
use crate::kir::{
    args, blocks, cb_id, format_args, Call, CompileArg, Kernel, KirError, Role, SfpuOp, Trips,
    ALL_FACES,
};
use crate::plan::{ConvPlan, NodePlan};

use super::conv2d::{conv_compute, conv_streamed_block, group_matmul, weight_waits, WeightsSend};
use super::max_pool2::{pooled_writes, select_tiles};

/// The fused step's kernels: the conv's `reader` as it is, the fused compute (with the conv
/// compute's compile args `compile_args`) and the pool writer.
pub(crate) fn kernels(
    node: &NodePlan,
    c: &ConvPlan,
    reader: Kernel,
    compile_args: Vec<CompileArg>,
) -> Result<Vec<Kernel>, KirError> {
    let [im2col, row, select, identity, vmax, out, weights] = [
        "cb_im2col",
        "cb_row",
        "cb_select",
        "cb_identity",
        "cb_vmax",
        "cb_out",
        "cb_weights",
    ]
    .map(|name| cb_id(node, name));
    let (im2col, row, select, identity, vmax, out, weights) =
        (im2col?, row?, select?, identity?, vmax?, out?, weights?);
    let row_blocks = c.width / 32;
    let slice_tiles = c.slice_tiles();
    let row_tiles = row_blocks * slice_tiles;
    // The upper row's tiles beside the group's in DST (the identity tile times them), and their
    // maximum.
    let vertical_max = vec![
        group_matmul(c),
        Call::Sfpu {
            op: SfpuOp::Max,
            tiles: c.group,
            faces: ALL_FACES,
        },
    ];
    let lower_pair = [
        vec![Call::Loop {
            trips: Trips::Fixed(2),
            body: conv_streamed_block(c, im2col, vmax, c.group, vertical_max, &[]),
        }],
        vec![Call::CbWait {
            cb: vmax,
            pages: 2 * slice_tiles,
        }],
        vec![Call::Loop {
            trips: Trips::Fixed(slice_tiles / c.group),
            body: select_tiles(out, c.group),
        }],
        vec![Call::CbPop {
            cb: vmax,
            pages: 2 * slice_tiles,
        }],
    ]
    .concat();
    // A pair of image rows; in the core's first (`first`) the first block waits for the
    // weights' rounds as its K steps need them.
    let upper_row = |first: bool| {
        let block =
            |weights: &[(u32, Call)]| conv_streamed_block(c, im2col, row, 0, Vec::new(), weights);
        if first {
            let mut upper = block(&weight_waits(c, weights));
            upper.push(Call::Loop {
                trips: Trips::Fixed(row_blocks - 1),
                body: block(&[]),
            });
            upper
        } else {
            vec![Call::Loop {
                trips: Trips::Fixed(row_blocks),
                body: block(&[]),
            }]
        }
    };
    let row_pair = |first: bool| {
        [
            upper_row(first),
            vec![
                Call::CbWait {
                    cb: row,
                    pages: row_tiles,
                },
                Call::Loop {
                    trips: Trips::Fixed(row_blocks / 2),
                    body: lower_pair.clone(),
                },
                Call::CbPop {
                    cb: row,
                    pages: row_tiles,
                },
            ],
        ]
        .concat()
    };
    let compute = conv_compute(
        node,
        c,
        "conv2d/pool_compute.cpp.tera",
        compile_args,
        vec![
            Call::CbWait {
                cb: select,
                pages: 4,
            },
            Call::CbWait {
                cb: identity,
                pages: 1,
            },
            blocks(Trips::FirstUnit(2 * row_blocks), row_pair(true)),
            blocks(Trips::LaterUnits(2 * row_blocks), row_pair(false)),
            Call::CbPop {
                cb: identity,
                pages: 1,
            },
            Call::CbPop {
                cb: select,
                pages: 4,
            },
        ],
        true,
    )?;
    // Output block o of the pool is pixels 32 o.. of the half-size image: a core's pairs of
    // image rows starting at block `start` are its output blocks from start / 4.
    let [tile_bytes, fp32] = format_args(Format::Bf16);
    let mut send = WeightsSend::of(node, c)?;
    let writer = Kernel {
        role: Role::Writer,
        template: "max_pool2/conv_writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: [
            args(&[
                ("in_tiles", slice_tiles),
                tile_bytes,
                fp32,
                ("weight_parts", c.weight_parts),
                ("k_tiles", c.k_tiles),
                ("out_tiles", c.out_tiles),
                ("slice_tiles", slice_tiles),
                ("weight_page_tiles", c.weight_page_tiles),
            ]),
            send.compile_args.clone(),
        ]
        .concat(),
        runtime_arg_names: send.writer_arg_names(),
        runtime_args: send.writer_args(node, c, |w| [w.start / 4, w.count / 4]),
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body: [
            std::mem::take(&mut send.body),
            vec![pooled_writes(
                node,
                out,
                Format::Bf16.tile_bytes(),
                slice_tiles,
                Trips::Units(4),
            )],
        ]
        .concat(),
    };
    Ok(vec![reader, compute, writer])
}
