//! The identity resize on the device: a u8 plane as large as the frame, which Pillow's resize
//! returns unchanged, written in the frame's [`FrameRows`](crate::DeviceTensor::FrameRows)
//! layout by the two data-movement cores of each core, with no compute kernel
//! ([`crate::plan::resize_copy`] has the plan).
//!
//! Both run one template (`resize/copy.cpp.tera`, compile arg `side`: 0 on the reader, 1 on the
//! writer). A core's share of `n` pairs of column tiles is a run of `2n` tiles in raster order;
//! the reader takes its first `n`, the writer its last `n`, a row segment at a time: reads the
//! segment's bytes of the plane row (64-byte aligned, one NoC read), converts each level
//! through the level table (256 values of the frame's format the host computes as the filtered
//! path does, [`crate::plan::resize_copy::level_bytes`], read once) into the segment's three
//! copies (dx = −1, 0, +1, each shifted copy zero where its neighbour lies in another 32-pixel
//! column tile, as the layout says), and writes each copy to its place in the frame page (three
//! NoC writes). The RISC-V does what the compute kernel's shift matmuls and transposes did; the
//! filter passes, which the identity's weights (1 and 0) reduce to the levels themselves, are
//! gone. A segment's writes leave while the next segment is read; the conversion waits for
//! them.
//!
//! Per tile: 3·32 table look-ups and stores; per row segment: one NoC read of at most a plane
//! row, three NoC writes.

use crate::kir::{
    args, cb_id, format_args, input, names, share_args, Call, Kernel, KirError, Lowering, Role,
    Trips,
};
use crate::plan::resize_copy::{most_segments, ResizeCopyPlan};
use crate::plan::NodePlan;

impl Lowering for ResizeCopyPlan {
    fn op(&self) -> &'static str {
        "resize"
    }

    fn kernels(&self, node: &NodePlan) -> Result<Vec<Kernel>, KirError> {
        kernels(node, self)
    }
}

/// The reader and writer kernels of an identity resize node.
fn kernels(node: &NodePlan, r: &ResizeCopyPlan) -> Result<Vec<Kernel>, KirError> {
    let plane = input(node, 0)?;
    let format = node.precision.format;
    let element = format.tile_bytes() / 1024;
    let tile_values = 32 * element;
    let run = node.split.work.iter().map(|w| w.count).max().unwrap_or(0);
    let segments = most_segments(run, r.width_tiles);
    let side = |role: Role, side: u32| -> Result<Kernel, KirError> {
        let (levels, stage) = if side == 0 {
            (cb_id(node, "cb_levels_0")?, cb_id(node, "cb_stage_0")?)
        } else {
            (cb_id(node, "cb_levels_1")?, cb_id(node, "cb_stage_1")?)
        };
        let [tile_bytes, fp32] = format_args(format);
        Ok(Kernel {
            role,
            template: "resize/copy.cpp.tera".into(),
            ranges: node.split.ranges.clone(),
            compile_args: args(&[
                ("side", side),
                ("width", r.width),
                ("width_tiles", r.width_tiles),
                ("row_bytes", r.row_bytes),
                tile_bytes,
                fp32,
            ]),
            runtime_arg_names: names(&[
                "plane_addr",
                "levels_addr",
                "output_addr",
                "unit_start",
                "unit_count",
            ]),
            runtime_args: share_args(node, &[&plane, &r.levels, &node.output]),
            precision: None,
            unpack_to_dest_fp32: Vec::new(),
            body: vec![
                Call::CbReserve {
                    cb: levels,
                    pages: 1,
                },
                Call::DramRead {
                    buffer: r.levels.clone(),
                    pages: 1,
                    page_bytes: 256 * element,
                    cb: levels,
                },
                Call::CbReserve {
                    cb: stage,
                    pages: 1,
                },
                Call::Loop {
                    trips: Trips::Fixed(segments),
                    body: vec![
                        Call::DramPart {
                            buffer: plane.clone(),
                            write: false,
                            transfers: 1,
                            bytes: r.row_bytes,
                            offset_step: 64,
                            cb: stage,
                        },
                        Call::DramPart {
                            buffer: node.output.clone(),
                            write: true,
                            transfers: 3,
                            bytes: r.width * element,
                            offset_step: tile_values,
                            cb: stage,
                        },
                    ],
                },
                Call::Loop {
                    trips: Trips::Blocks,
                    body: vec![Call::L1Gather {
                        bytes: 3 * tile_values,
                    }],
                },
            ],
        })
    };
    Ok(vec![side(Role::Reader, 0)?, side(Role::Writer, 1)?])
}
