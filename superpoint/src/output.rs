//! The result of one detection (DESIGN §2, §8).

use serde::Serialize;

/// Wall-clock time of the stages of one detection, in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Timing {
    /// Decode and resize to the network frame.
    pub preprocess: f64,
    /// The network and the dense post-processing (softmax, fold, NMS, normalisation).
    pub forward: f64,
    /// Keypoint selection, descriptor sampling and rescaling.
    pub postprocess: f64,
    /// Waiting for a device of the Tensix pool (busy with other frames or a warm-up).
    pub queue: f64,
    /// Compiling and loading device programs this frame needed and no warm-up had prepared
    /// (0 once its variant is warm).
    pub compile: f64,
    /// All of the above.
    pub total: f64,
}

/// Keypoints, scores and descriptors of one image.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    /// [x, y] in original image pixels, best first.
    pub keypoints: Vec<[f32; 2]>,
    /// Scores, descending.
    pub scores: Vec<f32>,
    /// N × `descriptor_dim` L2-normalised rows in keypoint order, when requested.
    pub descriptors: Option<Vec<f32>>,
    pub descriptor_dim: usize,
    /// Original image size [width, height].
    pub image_size: [usize; 2],
    /// Network frame size [width, height].
    pub frame_size: [usize; 2],
    /// Original pixels per frame pixel, [x, y].
    pub scale: [f32; 2],
    /// Which backend computed it (`cpu`, `tensix`).
    pub backend: &'static str,
    /// Non-maximum suppression ran on the device (the Tensix backend, radius 1..8); false when
    /// the host ran it (the CPU backend, or radius 0 or > 8).
    pub device_nms: bool,
    /// The id of the Tensix device that ran it (`None` on the CPU).
    pub device: Option<u32>,
    pub timing: Timing,
}

impl Detection {
    /// The number of keypoints.
    pub fn len(&self) -> usize {
        self.keypoints.len()
    }

    /// True when no keypoint was found.
    pub fn is_empty(&self) -> bool {
        self.keypoints.is_empty()
    }

    /// Descriptor row `i`.
    pub fn descriptor(&self, i: usize) -> Option<&[f32]> {
        let d = self.descriptors.as_ref()?;
        d.get(i * self.descriptor_dim..(i + 1) * self.descriptor_dim)
    }
}
