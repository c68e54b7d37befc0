//! `SelectKeypoints{threshold, border, ..}` on the device → the Candidates layout, and the host's
//! merge of the two candidate buffers (DESIGN §2 step 5).
//!
//! The device part is scalar data-movement work over the map's tile split (`Split`; core `i`
//! owns region `i`): for every pixel inside the border it appends `(raster index, score bits)`
//! when the score is > threshold (strict, compared on the f32 bit patterns the device holds, the
//! RISC-V having no FPU), staging a tile's records in L1 and writing them after the tile (one
//! 8-byte page each, as the layout has it), then its count (`templates/select_keypoints/candidates.cpp.tera`). When the map is the output of an NMS
//! planned in the same program, the selection is fused into the NMS writer, which holds every
//! output value anyway ([`place`]); otherwise (a map left by an earlier program or uploaded) it
//! is a program of its own that reads the map tiles. `max_keypoints` and the order are the
//! host's: [`merge`].

use serde::{Deserialize, Serialize};
use superpoint_graph::reference::select::order_and_cut;
use superpoint_graph::Keypoint;

use crate::device::{Grid, Precision};
use crate::kir::{
    args, cb_id, input, names, Arg, Call, CompileArg, CoreArgs, Kernel, KirError, Role, Trips,
};
use crate::layout::host::decode_candidates;
use crate::layout::tensor::{CANDIDATE_BYTES, COUNT_STRIDE, MAP_PAGE_BYTES};
use crate::layout::{DeviceTensor, Part};
use crate::ops::nms::NmsPass;
use crate::plan::{cb, cb_fp32, CbKind, CbPlan, NodePlan, OpPlan, PlanError, Split};

/// The selection's parameters in the form the kernels take them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectPlan {
    pub height: u32,
    pub width: u32,
    pub tiles_x: u32,
    /// The border, at most half of each side (a wider border selects nothing either way).
    pub border: u32,
    /// f32 bits of the threshold.
    pub threshold_bits: u32,
    pub capacity: u32,
    /// The records buffer (the selection node's output).
    pub records: String,
    /// The counts buffer.
    pub counts: String,
}

/// Records one map tile can give: the staging's size.
const RECORDS_PER_TILE: u32 = 1024;
/// Bytes of a record's staging slot: the NoC's L1 alignment, so each record is written from an
/// aligned address.
const RECORD_SLOT_BYTES: u32 = 16;

/// The staging CB of a tile's records and the CB of the count slot, with ids `first` and
/// `first + 1`.
fn record_cbs(first: u32) -> [CbPlan; 2] {
    [
        CbPlan {
            page_bytes: RECORDS_PER_TILE * RECORD_SLOT_BYTES,
            ..cb_fp32(first, "cb_records", 1, CbKind::Scratch)
        },
        CbPlan {
            page_bytes: COUNT_STRIDE,
            ..cb(first + 1, "cb_count", 1, CbKind::Scratch)
        },
    ]
}

/// The program of selection node `name` on the map `map`, writing `candidates` (the node's
/// Candidates layout, whose buffers the caller adds).
pub fn plan(
    name: &str,
    map: &str,
    candidates: DeviceTensor,
    threshold: f32,
    border: usize,
    precision: Precision,
    grid: Grid,
) -> Result<NodePlan, PlanError> {
    let DeviceTensor::Candidates {
        height,
        width,
        regions,
        capacity,
    } = candidates
    else {
        return Err(PlanError::NoLayout {
            node: name.to_string(),
            reason: format!("a keypoint selection writes candidates, not {candidates:?}"),
        });
    };
    let tiles_x = width / 32;
    let split = Split::new(grid, tiles_x * (height / 32));
    if split.work.len() != regions as usize {
        return Err(PlanError::NoLayout {
            node: name.to_string(),
            reason: format!(
                "the candidates have {regions} regions but the map's tiles split over {} cores",
                split.work.len()
            ),
        });
    }
    let half = height.min(width) / 2;
    let [staging, count] = record_cbs(1);
    Ok(NodePlan {
        name: name.to_string(),
        inputs: vec![map.to_string()],
        output: name.to_string(),
        precision,
        split,
        cbs: vec![cb_fp32(0, "cb_map", 1, CbKind::Scratch), staging, count],
        op: OpPlan::SelectKeypoints(SelectPlan {
            height,
            width,
            tiles_x,
            border: u32::try_from(border).unwrap_or(u32::MAX).min(half),
            threshold_bits: threshold.to_bits(),
            capacity,
            records: name.to_string(),
            counts: Part::Counts.buffer_name(name),
        }),
    })
}

/// Fuses `select` into the row pass of the NMS planned in `nodes` that writes its map, when there
/// is one (same tile split, so region `i` stays core `i`); otherwise returns it as a program of
/// its own.
pub fn place(select: NodePlan, nodes: &mut [NodePlan]) -> Option<NodePlan> {
    let (OpPlan::SelectKeypoints(plan), Some(map)) = (&select.op, select.inputs.first()) else {
        return Some(select);
    };
    let nms = nodes.iter_mut().find(|n| {
        &n.output == map
            && n.split == select.split
            && matches!(&n.op, OpPlan::Nms(p) if p.pass == NmsPass::Horizontal && p.select.is_none())
    });
    let Some(nms) = nms else {
        return Some(select);
    };
    let first = nms.cbs.iter().filter(|c| c.id < 16).map(|c| c.id + 1).max();
    nms.cbs.extend(record_cbs(first.unwrap_or(0)));
    nms.cbs.sort_by_key(|c| c.id);
    if let OpPlan::Nms(p) = &mut nms.op {
        p.select = Some(plan.clone());
    }
    None
}

/// The selection's compile-time args, after the `tiles_x` the kernel already has.
pub fn compile_args(p: &SelectPlan) -> Vec<CompileArg> {
    args(&[
        ("height", p.height),
        ("width", p.width),
        ("border", p.border),
        ("threshold_bits", p.threshold_bits),
        ("capacity", p.capacity),
        ("record_bytes", CANDIDATE_BYTES),
        ("count_slot_bytes", COUNT_STRIDE),
    ])
}

/// The runtime args of region `region`, after the kernel's own.
pub fn runtime_args(p: &SelectPlan, region: u32) -> Vec<Arg> {
    vec![
        Arg::BufferAddress(p.records.clone()),
        Arg::BufferAddress(p.counts.clone()),
        Arg::Const(region),
    ]
}

/// Their names.
pub const RUNTIME_ARG_NAMES: [&str; 3] = ["records_addr", "counts_addr", "region"];

/// The calls a kernel makes for the candidates: `start` before the tiles, `per_tile` (the worst
/// case, every pixel of the tile a candidate) and `end` after them.
pub struct RecordCalls {
    pub start: Call,
    pub per_tile: Call,
    pub end: Vec<Call>,
}

/// The record calls of `p` with the planned CBs of `node`.
pub fn record_calls(node: &NodePlan, p: &SelectPlan) -> Result<RecordCalls, KirError> {
    let records = cb_id(node, "cb_records")?;
    let count = cb_id(node, "cb_count")?;
    Ok(RecordCalls {
        start: Call::CbReserve {
            cb: records,
            pages: 1,
        },
        per_tile: Call::DramPart {
            buffer: p.records.clone(),
            write: true,
            transfers: RECORDS_PER_TILE,
            bytes: CANDIDATE_BYTES,
            offset_step: 0,
            cb: records,
        },
        end: vec![
            Call::CbReserve {
                cb: count,
                pages: 1,
            },
            Call::DramWrite {
                buffer: p.counts.clone(),
                pages: 1,
                page_bytes: COUNT_STRIDE,
                cb: count,
            },
        ],
    })
}

/// The one data-movement kernel of a selection program of its own.
pub fn kernels(node: &NodePlan, p: &SelectPlan) -> Result<Vec<Kernel>, KirError> {
    let map = input(node, 0)?;
    let map_cb = cb_id(node, "cb_map")?;
    let calls = record_calls(node, p)?;
    let mut arg_names = names(&["map_addr", "tile_start", "tile_count"]);
    arg_names.extend(names(&RUNTIME_ARG_NAMES));
    let mut compile = args(&[("tiles_x", p.tiles_x)]);
    compile.extend(compile_args(p));
    let mut body = vec![
        Call::CbReserve {
            cb: map_cb,
            pages: 1,
        },
        calls.start,
        Call::Loop {
            trips: Trips::Blocks,
            body: vec![
                Call::DramRead {
                    buffer: map.clone(),
                    pages: 1,
                    page_bytes: MAP_PAGE_BYTES,
                    cb: map_cb,
                },
                Call::L1Gather {
                    bytes: MAP_PAGE_BYTES,
                },
                calls.per_tile,
            ],
        },
    ];
    body.extend(calls.end);
    let reader = Kernel {
        role: Role::Reader,
        template: "select_keypoints/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: compile,
        runtime_arg_names: arg_names,
        runtime_args: node
            .split
            .work
            .iter()
            .zip(0u32..)
            .map(|(w, region)| {
                let mut args = vec![
                    Arg::BufferAddress(map.clone()),
                    Arg::Const(w.start),
                    Arg::Const(w.count),
                ];
                args.extend(runtime_args(p, region));
                CoreArgs { core: w.core, args }
            })
            .collect(),
        precision: None,
        body,
    };
    Ok(vec![reader])
}

/// DESIGN §2 step 5 on the device's candidates: the records of every region (`records`,
/// `counts`: the two buffers of `candidates`) merged, ordered by descending score with ties by
/// ascending raster index, and cut to `max_keypoints` (−1 keeps all), each with its slot
/// (`region·capacity + record`, the row of its sampled descriptor). `None` when the buffers do
/// not hold a valid Candidates layout (see [`decode_candidates`]).
pub fn merge(
    records: &[u8],
    counts: &[u8],
    candidates: &DeviceTensor,
    max_keypoints: i64,
) -> Option<Vec<(u32, Keypoint)>> {
    let DeviceTensor::Candidates {
        height,
        width,
        regions,
        capacity,
    } = *candidates
    else {
        return None;
    };
    let mut list = decode_candidates(records, counts, regions, capacity, width, height)?;
    order_and_cut(&mut list, |(_, k)| k, max_keypoints);
    Some(list)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::host::encode_candidates;

    #[test]
    fn a_border_wider_than_the_map_is_clamped_to_half_a_side() {
        let (regions, capacity) =
            crate::layout::tensor::candidate_regions(Grid::ETH_DISPATCH, 64, 96);
        let tensor = DeviceTensor::Candidates {
            height: 64,
            width: 96,
            regions,
            capacity,
        };
        let node = plan(
            "k",
            "m",
            tensor,
            0.5,
            1000,
            Precision::PORT,
            Grid::ETH_DISPATCH,
        )
        .expect("plans");
        let OpPlan::SelectKeypoints(p) = node.op else {
            panic!("not a selection");
        };
        assert_eq!((p.border, p.capacity, node.split.work.len()), (32, 1024, 6));
    }

    #[test]
    fn merge_orders_across_regions_and_cuts() {
        let k = |x, y, score| Keypoint { x, y, score };
        // Region 0 found (5,1) then (1,0); region 1 found a tie with (5,1) at a later raster index.
        let lists = vec![vec![k(5, 1, 0.5), k(1, 0, 0.25)], vec![k(2, 3, 0.5)]];
        let (records, counts) = encode_candidates(&lists, 1024, 10).expect("fits");
        let tensor = DeviceTensor::Candidates {
            height: 4,
            width: 10,
            regions: 2,
            capacity: 1024,
        };
        let all = merge(&records, &counts, &tensor, -1).expect("valid");
        assert_eq!(
            all,
            vec![(0, k(5, 1, 0.5)), (1024, k(2, 3, 0.5)), (1, k(1, 0, 0.25))]
        );
        let two = merge(&records, &counts, &tensor, 2).expect("valid");
        assert_eq!(two.len(), 2);
        let map = DeviceTensor::Map {
            height: 4,
            width: 10,
        };
        assert_eq!(merge(&records, &counts, &map, -1), None);
    }
}
