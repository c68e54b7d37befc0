//! The host's share of a device frame (DESIGN §2 steps 3–5, 7 where the device does not do them):
//! ordering and cutting the device's keypoint candidates, and the whole post-processing (NMS,
//! selection, sampling) on the device's score map and dense descriptors when the requested NMS
//! radius or threshold is not one the device programs were compiled for. The maps are the
//! device's; the ops are the CPU backend's (bit-identical to the reference for NMS and selection).

use kernel_gen::layout::host::decode_candidates;
use kernel_gen::DeviceTensor;
use superpoint_graph::reference::select::order_and_cut;
use superpoint_graph::{Kernels, Keypoint, Tensor};

use super::error::TensixError;
use crate::backend::cpu::{CpuKernels, Hwc};

/// Descriptor cell size of the network.
pub const CELL: usize = 8;
/// The border every program selects with (DESIGN §2 step 4).
pub const BORDER: usize = 4;

/// The device's candidates (`records`, `counts` in the `candidates` layout) above `threshold`
/// (at least the compiled one), ordered and cut to `max_keypoints`, with their descriptor slots.
pub fn ordered_candidates(
    records: &[u8],
    counts: &[u8],
    candidates: &DeviceTensor,
    threshold: f32,
    max_keypoints: i64,
) -> Result<Vec<(u32, Keypoint)>, TensixError> {
    let bad = |why: String| TensixError::Readback {
        buffer: "keypoints".to_string(),
        why,
    };
    let DeviceTensor::Candidates {
        height,
        width,
        regions,
        capacity,
    } = *candidates
    else {
        return Err(bad(format!(
            "the program lays it out as {candidates:?}, not as candidates"
        )));
    };
    let mut list = decode_candidates(records, counts, regions, capacity, width, height)
        .ok_or_else(|| {
            bad(format!(
                "a count exceeds the capacity {capacity} or a record lies outside the {width}x{height} map"
            ))
        })?;
    list.retain(|(_, k)| k.score > threshold);
    order_and_cut(&mut list, |(_, k)| k, max_keypoints);
    Ok(list)
}

/// NMS with `radius` (any, 0 = none) of a 1×H×W score map on the host.
pub fn nms(kernels: &CpuKernels, scores: &Tensor<f32>, radius: usize) -> Tensor<f32> {
    kernels.to_planar(&kernels.nms(&Hwc::from_planar(scores), radius))
}

/// Keypoints of a post-NMS map: above `threshold`, inside the border, ordered and cut.
pub fn select(
    kernels: &CpuKernels,
    nms_map: &Tensor<f32>,
    threshold: f32,
    max_keypoints: i64,
) -> Vec<Keypoint> {
    kernels.select_keypoints(&Hwc::from_planar(nms_map), threshold, BORDER, max_keypoints)
}

/// Descriptors of `keypoints` sampled from the dense normalised map (planar C×Hc×Wc).
pub fn sample(kernels: &CpuKernels, dense: &Tensor<f32>, keypoints: &[Keypoint]) -> Vec<f32> {
    kernels.sample_descriptors(&Hwc::from_planar(dense), keypoints, CELL)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernel_gen::layout::host::encode_candidates;

    #[test]
    fn candidates_are_filtered_ordered_and_cut_across_regions() {
        let k = |x, y, score| Keypoint { x, y, score };
        let lists = vec![
            vec![k(5, 1, 0.5), k(6, 1, 0.004)],
            vec![k(1, 2, 0.5), k(0, 2, 0.9)],
        ];
        let (records, counts) = encode_candidates(&lists, 4, 10).expect("fits");
        let tensor = DeviceTensor::Candidates {
            height: 3,
            width: 10,
            regions: 2,
            capacity: 4,
        };
        let got = ordered_candidates(&records, &counts, &tensor, 0.005, 2).expect("decodes");
        // 0.9 first; the two 0.5 ties by raster index: (5, 1) = 15 before (1, 2) = 21; cut at 2.
        assert_eq!(got, vec![(5, k(0, 2, 0.9)), (0, k(5, 1, 0.5))]);
        let all = ordered_candidates(&records, &counts, &tensor, 0.001, -1).expect("decodes");
        assert_eq!(all.len(), 4);
        let map = DeviceTensor::Map {
            height: 3,
            width: 10,
        };
        assert!(ordered_candidates(&records, &counts, &map, 0.005, 2).is_err());
    }
}
