//! A convolution and the 2×2 max-pool that is its only consumer, lowered as one step (SuperPoint's
//! conv1b and conv2b): the pool's own program would pay a launch, read the conv's output back and
//! write its own; fused, the conv's output never leaves the core and the writer writes a quarter
//! of the bytes.
//!
//! The step is split by the pool's output blocks ([`crate::plan::conv_pool`]): a core computes a
//! run of them, row by row. The compute kernel (`conv2d/pool_compute.cpp.tera`) keeps the upper
//! image row's blocks of a pooled row's units in `cb_row`; each lower-row block's DST gets the
//! upper tile beside it and the SFPU maximum of the two is packed to `cb_vmax` (the vertical
//! maximum); a unit's such blocks (two: the 64 input columns of one output block) are pooled by
//! the row-selection matmuls of the standalone pool (`max_pool2/select_tile.cpp.tera`) into
//! `cb_out`, whose tiles the writer (`max_pool2/conv_writer.cpp.tera`) stores as the pool's
//! output. The conv's reader, unchanged, walks the span of blocks from the run's first upper left
//! block to its last lower right one ([`crate::plan::conv_pool::span`]); where the run starts or
//! ends mid-row, the span holds blocks of other cores' units, whose hand-offs the compute takes
//! and drops. The reader writes the selection tiles and an identity tile while the weights travel
//! ([`super::conv2d::add_conv_weights_fill`]) and pushes the weights in rounds, for which the
//! compute's first block waits as its K steps need them (a [`Trips::FirstUnit`] loop). The
//! outputs are the bits of the two programs: the packer's rounding and ReLU are monotone and the
//! upper tile is already packed, so packing the maximum of the upper tile and the lower DST
//! equals the maximum of the two packed outputs, and the horizontal pass is the standalone
//! pool's own code on the same tiles.
//!
//! Every FPU operation of the compute is a matmul of one row of `group` tiles: the bias and the
//! upper tiles enter DST as the identity tile times them (exact for finite values at HiFi2 and
//! above, as the selection matmuls are), so it initializes the matmul and the SFPU maximum once
//! per kernel instead of a copy and a matmul init per group and a matmul and SFPU init per pooled
//! tile.
//!
//! Where W is not a multiple of 64 (conv3b, W 160) a unit is half a pooled block: one conv block
//! of each image row, pooled by the selection of one half into rows 0..15 of the compute's
//! tiles, which the writer writes as the half tile of the output block they fall in. In output
//! channel slices each slice's group of cores computes every unit of its tiles. Elsewhere
//! (Float32 activations; LoFi, which would round the selection matmuls' activations; W not a
//! multiple of 32) the two programs stay apart ([`crate::plan::conv_pool`] decides).

use crate::device::Format;
use crate::kir::{
    args, blocks, cb_id, format_args, names, Call, CompileArg, Kernel, KirError, Role, SfpuOp,
    Trips, ALL_FACES,
};
use crate::plan::conv_pool::unit_blocks;
use crate::plan::{ConvPlan, NodePlan};

use super::conv2d::{conv_compute, conv_streamed_block, group_matmul, weight_waits, WeightsSend};
use super::max_pool2::{pooled_writes, select_tiles};
use super::views_above::ViewsAbove;

/// The fused step's kernels: the conv's `reader` as it is, the fused compute (with the conv
/// compute's compile args `compile_args`) and the pool writer.
pub(crate) fn kernels(
    node: &NodePlan,
    c: &ConvPlan,
    reader: Kernel,
    compile_args: Vec<CompileArg>,
    views: Option<&ViewsAbove>,
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
    let slice_tiles = c.slice_tiles();
    let block =
        |weights: &[(u32, Call)]| conv_streamed_block(c, im2col, row, 0, Vec::new(), weights);
    // A lower-row block: the upper row's tiles of its pixels beside the group's in DST (the
    // identity tile times them) and their maximum; the kept block popped after it.
    let vertical_max = vec![
        group_matmul(c),
        Call::Sfpu {
            op: SfpuOp::Max,
            tiles: c.group,
            faces: ALL_FACES,
        },
    ];
    let lower = [
        vec![Call::CbWait {
            cb: row,
            pages: slice_tiles,
        }],
        conv_streamed_block(c, im2col, vmax, c.group, vertical_max, &[]),
        vec![Call::CbPop {
            cb: row,
            pages: slice_tiles,
        }],
    ]
    .concat();
    // A unit (the kernel computes a run's units by rows: the upper blocks of a row's units, the
    // blocks between, the lower blocks; its work is the same): its `wide` upper blocks, in the
    // core's first unit the first waiting for the weights' rounds as its K steps need them, its
    // lower ones, the pooled tiles.
    let wide = unit_blocks(c);
    let unit = |first: bool| {
        let upper = if first {
            [
                block(&weight_waits(c, weights)),
                vec![Call::Loop {
                    trips: Trips::Fixed(wide - 1),
                    body: block(&[]),
                }],
            ]
            .concat()
        } else {
            vec![Call::Loop {
                trips: Trips::Fixed(wide),
                body: block(&[]),
            }]
        };
        [
            upper,
            vec![
                Call::Loop {
                    trips: Trips::Fixed(wide),
                    body: lower.clone(),
                },
                Call::CbWait {
                    cb: vmax,
                    pages: wide * slice_tiles,
                },
                Call::Loop {
                    trips: Trips::Fixed(slice_tiles / c.group),
                    body: select_tiles(out, c.group, wide),
                },
                Call::CbPop {
                    cb: vmax,
                    pages: wide * slice_tiles,
                },
            ],
        ]
        .concat()
    };
    // The span's blocks of other cores' units: their hand-offs taken and dropped.
    let skipped = vec![
        Call::CbWait {
            cb: im2col,
            pages: c.im2col_pages(),
        },
        Call::CbPop {
            cb: im2col,
            pages: c.im2col_pages(),
        },
    ];
    let mut compute = conv_compute(
        node,
        c,
        "conv2d/pool_compute.cpp.tera",
        [compile_args, args(&[("unit_blocks", wide)])].concat(),
        vec![
            Call::CbWait {
                cb: select,
                pages: 4,
            },
            Call::CbWait {
                cb: identity,
                pages: 1,
            },
            blocks(Trips::FirstUnit(2 * wide), unit(true)),
            blocks(Trips::Skipped(2 * wide), skipped),
            blocks(Trips::LaterUnits(2 * wide), unit(false)),
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
    compute.runtime_arg_names = names(&["unit_start", "unit_count"]);
    // A core's units: a pooled output block, or half of one (its first half tile written).
    let [tile_bytes, fp32] = format_args(Format::Bf16);
    let mut send = WeightsSend::of(node, c)?;
    let mut compile_args = [
        args(&[
            ("width", c.width),
            ("unit_blocks", wide),
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
    .concat();
    let mut runtime_arg_names = send.writer_arg_names();
    let mut runtime_args = send.writer_args(node, c, |w| [w.start, w.count]);
    let mut body = std::mem::take(&mut send.body);
    // With the views above, every stage before the first pooled tile (stage 0, then stage i + 1
    // in the reader's block i: the compute pools nothing before its first unit's lower row),
    // and a stager's staging after them.
    if let Some(views) = views {
        views.add_args(
            node,
            &mut compile_args,
            &mut runtime_arg_names,
            &mut runtime_args,
        );
        body.extend(views.prologue(1));
        body.extend(views.staged_loops(1, &[]));
        body.extend(views.missing_stages(1));
        body.push(views.epilogue());
    }
    body.append(&mut send.staging);
    body.push(pooled_writes(
        node,
        out,
        Format::Bf16.tile_bytes() / 2 * wide,
        slice_tiles,
        Trips::Units(2 * wide),
    ));
    let writer = Kernel {
        role: Role::Writer,
        template: "max_pool2/conv_writer.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args,
        runtime_arg_names,
        runtime_args,
        precision: None,
        unpack_to_dest_fp32: Vec::new(),
        body,
    };
    Ok(vec![reader, compute, writer])
}
