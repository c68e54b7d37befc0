//! The plan of the device resize ([`crate::ops::resize`] has its kernels and the method):
//! the filter data the host computes per input size ([`super::resize_filter`]), its buffers, the
//! unit of work and the CBs.

use serde::{Deserialize, Serialize};
use superpoint_graph::reference::resize::vertical_first;

use crate::device::{Format, Grid, Precision};
use crate::layout::DeviceTensor;

use super::resize_filter::{axis_filter, pack_bands, AxisFilter, PARTS};
use super::{
    output_buffers, BufferPlan, CbKind, CbPlan, Content, NodePlan, OpPlan, PlanError, Split,
};

/// The largest input plane side the device resize takes (one 4 KiB DRAM page per row).
pub const MAX_PLANE_SIDE: u32 = 4096;

/// The largest [`AxisFilter::rest_sum`] the rounding stays exact for: then every partial sum of
/// B is a multiple of 2⁻²² below 255·sum·2⁻²² < 4, exact in fp32 ([`crate::ops::resize`]).
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

/// The host bytes of a resize filter buffer (weights, band table, or the identity resize's level
/// table); `None` for other contents.
pub fn filter_bytes(content: &Content) -> Option<Vec<u8>> {
    match content {
        Content::FrameLevels { format } => Some(super::resize_copy::level_bytes(*format)),
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
        buffer: None,
    }
}

/// The output rows of a unit of work for `blocks` blocks on `cores` cores: half a block when
/// that gives no core more units than whole blocks would (then the slowest core converts and
/// writes half the rows for the same compute), else a whole block. Each unit costs the compute
/// kernel a whole block whatever its rows, so halves that add units to the slowest core cost
/// more than they save: 300 blocks on 120 cores are 3 blocks' compute on the slowest core as
/// blocks, 5 as halves (by the v2 model the compute binds the resize: 24.0 µs as halves, 18.7 µs
/// as blocks); 50 blocks on 120 cores are one unit a core either way.
pub fn unit_rows(blocks: u32, cores: u32) -> u32 {
    let cores = cores.max(1);
    if (2 * blocks).div_ceil(cores) <= blocks.div_ceil(cores) {
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
        resident: false,
        staged_by: None,
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
        resident: false,
        staged_by: None,
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
        resident: false,
        staged_by: None,
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
            stream(9, "cb_tmp", 2, format.tile_bytes(), format, CbKind::Stream),
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

#[cfg(test)]
mod tests {
    use super::*;

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

    // Halves only where they add no unit to the slowest core: 300 blocks on 120 cores are 3
    // blocks or 5 halves, on 110 cores 3 or 6; 60 blocks on 120 cores one unit a core either way,
    // 61 blocks one or two; 5 blocks on 10 cores one.
    #[test]
    fn units_are_half_blocks_only_where_they_add_no_unit() {
        assert_eq!(unit_rows(300, 120), 32);
        assert_eq!(unit_rows(300, 110), 32);
        assert_eq!(unit_rows(60, 120), 16);
        assert_eq!(unit_rows(61, 120), 32);
        assert_eq!(unit_rows(5, 10), 16);
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
