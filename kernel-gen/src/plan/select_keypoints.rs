//! The plan of `SelectKeypoints` ([`crate::ops::select_keypoints`] has its kernels): a program
//! of its own over the map's tile split, or fused into the writer of the NMS that makes the map
//! ([`place`]), scanning candidate bits where the threshold allows ([`candidate_bits`]).

use serde::{Deserialize, Serialize};

use crate::device::{Grid, Precision};
use crate::layout::tensor::COUNT_STRIDE;
use crate::layout::{DeviceTensor, Part};

use super::{cb, cb_fp32, CbKind, CbPlan, NodePlan, OpPlan, PlanError, Split};

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
pub(crate) const RECORDS_PER_TILE: u32 = 1024;
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

/// Whether a selection fused into an NMS row pass scans the candidate bits the compute kernel
/// makes (`templates/nms/bits_compute.cpp.tera`) instead of every pixel: when the threshold is a
/// positive normal number. Then `max(N, T) == T` on the SFPU is exactly "not N > T" for every NMS
/// value N (never NaN): equal bits or both zero-like only where N <= T, a denormal N flushed or
/// not. A threshold of zero, a denormal or a negative one (where the +0 of suppressed pixels
/// passes) keeps the full scan.
pub fn candidate_bits(p: &SelectPlan) -> bool {
    let threshold = f32::from_bits(p.threshold_bits);
    threshold.is_normal() && threshold > 0.0
}

/// The CBs of the candidate bits, with input ids `first_in`, `first_in + 1` and output ids
/// `first_out`, `first_out + 1`: the threshold tile and the bit weights (filled once by the
/// writer), the compute kernel's own mask tile (`N <= T` as 1.0 / 0.0) and the bit tiles it
/// hands the writer.
fn bit_cbs(first_in: u32, first_out: u32) -> [CbPlan; 4] {
    [
        cb_fp32(first_in, "cb_threshold", 1, CbKind::Resident),
        cb_fp32(first_in + 1, "cb_bit_weights", 1, CbKind::Resident),
        cb_fp32(first_out, "cb_mask", 1, CbKind::Stream),
        cb_fp32(first_out + 1, "cb_bits", 2, CbKind::Stream),
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
            && matches!(&n.op, OpPlan::Nms(p) if p.select.is_none())
    });
    let Some(nms) = nms else {
        return Some(select);
    };
    let first_in = nms
        .cbs
        .iter()
        .filter(|c| c.id < 16)
        .map(|c| c.id + 1)
        .max()
        .unwrap_or(0);
    nms.cbs.extend(record_cbs(first_in));
    if candidate_bits(plan) {
        let first_out = nms.cbs.iter().map(|c| c.id + 1).max().unwrap_or(0).max(16);
        nms.cbs.extend(bit_cbs(first_in + 2, first_out));
    }
    nms.cbs.sort_by_key(|c| c.id);
    if let OpPlan::Nms(p) = &mut nms.op {
        p.select = Some(plan.clone());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn candidate_bits_only_for_a_positive_normal_threshold() {
        let with = |threshold: f32| {
            candidate_bits(&SelectPlan {
                height: 64,
                width: 64,
                tiles_x: 2,
                border: 4,
                threshold_bits: threshold.to_bits(),
                capacity: 1024,
                records: "k".into(),
                counts: "k.counts".into(),
            })
        };
        for t in [0.005, f32::MIN_POSITIVE, 1.0, f32::MAX] {
            assert!(with(t), "{t:e}");
        }
        let denormal = f32::from_bits(1);
        for t in [0.0, -0.0, denormal, -0.25, -f32::MIN_POSITIVE] {
            assert!(!with(t), "{t:e}");
        }
    }
}
