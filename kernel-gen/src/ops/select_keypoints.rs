//! `SelectKeypoints{threshold, border, ..}` on the device → the Candidates layout, and the host's
//! merge of the two candidate buffers (DESIGN §2 step 5).
//!
//! The device part is scalar data-movement work: one kernel per core of the map's tile split
//! (`Split`; core `i` owns region `i`) reads each of its map tiles into L1 and appends
//! `(raster index, score bits)` for every score > threshold (strict, compared on the f32 bit
//! patterns the device holds, the RISC-V having no FPU) inside the border, staging records in L1
//! and writing whole 1024-record pages; then it writes its count. A separate program rather than
//! a fusion into the NMS writer keeps both readable; it costs one more read of the map (4 KiB a
//! tile). `max_keypoints` and the order are the host's: [`merge`].

use serde::{Deserialize, Serialize};
use superpoint_graph::reference::select::order_and_cut;
use superpoint_graph::Keypoint;

use crate::device::{Grid, Precision};
use crate::kir::{args, cb_id, input, names, Arg, Call, CoreArgs, Kernel, KirError, Role, Trips};
use crate::layout::host::decode_candidates;
use crate::layout::tensor::{CANDIDATES_PER_PAGE, CANDIDATE_BYTES, COUNT_STRIDE, MAP_PAGE_BYTES};
use crate::layout::{DeviceTensor, Part};
use crate::plan::{cb, cb_fp32, CbKind, CbPlan, NodePlan, OpPlan, PlanError, Split};

/// The selection's parameters in the form the kernel takes them.
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
    /// The counts buffer.
    pub counts: String,
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
    let staging = CbPlan {
        page_bytes: CANDIDATES_PER_PAGE * CANDIDATE_BYTES,
        ..cb_fp32(1, "cb_records", 2, CbKind::Scratch)
    };
    let count = CbPlan {
        page_bytes: COUNT_STRIDE,
        ..cb(2, "cb_count", 1, CbKind::Scratch)
    };
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
            counts: Part::Counts.buffer_name(name),
        }),
    })
}

/// The one data-movement kernel of the selection.
pub fn kernels(node: &NodePlan, p: &SelectPlan) -> Result<Vec<Kernel>, KirError> {
    let map = input(node, 0)?;
    let map_cb = cb_id(node, "cb_map")?;
    let records = cb_id(node, "cb_records")?;
    let count = cb_id(node, "cb_count")?;
    let reader = Kernel {
        role: Role::Reader,
        template: "select_keypoints/reader.cpp.tera".into(),
        ranges: node.split.ranges.clone(),
        compile_args: args(&[
            ("height", p.height),
            ("width", p.width),
            ("tiles_x", p.tiles_x),
            ("border", p.border),
            ("threshold_bits", p.threshold_bits),
            ("capacity", p.capacity),
            ("page_records", CANDIDATES_PER_PAGE),
            ("count_slot_bytes", COUNT_STRIDE),
        ]),
        runtime_arg_names: names(&[
            "map_addr",
            "records_addr",
            "counts_addr",
            "tile_start",
            "tile_count",
            "region",
        ]),
        runtime_args: node
            .split
            .work
            .iter()
            .zip(0u32..)
            .map(|(w, region)| CoreArgs {
                core: w.core,
                args: vec![
                    Arg::BufferAddress(map.clone()),
                    Arg::BufferAddress(node.output.clone()),
                    Arg::BufferAddress(p.counts.clone()),
                    Arg::Const(w.start),
                    Arg::Const(w.count),
                    Arg::Const(region),
                ],
            })
            .collect(),
        precision: None,
        body: vec![
            Call::CbReserve {
                cb: map_cb,
                pages: 1,
            },
            Call::CbReserve {
                cb: records,
                pages: 2,
            },
            Call::Loop {
                trips: Trips::Blocks,
                body: vec![
                    Call::DramRead {
                        buffer: map,
                        pages: 1,
                        page_bytes: MAP_PAGE_BYTES,
                        cb: map_cb,
                    },
                    Call::L1Gather {
                        bytes: MAP_PAGE_BYTES,
                    },
                    // At most one full page of records per tile (the worst case: every pixel).
                    Call::DramWrite {
                        buffer: node.output.clone(),
                        pages: 1,
                        page_bytes: CANDIDATES_PER_PAGE * CANDIDATE_BYTES,
                        cb: records,
                    },
                ],
            },
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
