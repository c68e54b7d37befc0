//! Per-call options of `detect` (DESIGN §2, §8) and their validation.

use serde::{Deserialize, Serialize};
use superpoint_graph::{Channel, SuperPointParams, MAX_NMS_RADIUS};

use crate::decode::PlaneSpec;
use crate::error::{Error, Result};

/// The largest network frame side accepted.
pub const MAX_FRAME_SIDE: usize = 4096;

/// Options of one detection. `Options::default()` gives the reference port's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Options {
    /// Keep at most this many keypoints (best first); −1 keeps all above the threshold.
    pub max_keypoints: i64,
    /// Keep pixels whose score is strictly above this.
    pub keypoint_threshold: f32,
    /// Non-maximum suppression radius in pixels; 0 disables it.
    pub nms_radius: usize,
    /// Compute and return descriptors.
    pub return_descriptors: bool,
    /// Colour pixels are in BGR order (R is channel 2).
    pub bgr: bool,
    /// Which plane of a colour image is the network input.
    pub channel: Channel,
    /// The network frame, width × height (multiples of 8).
    pub frame: (usize, usize),
}

impl Default for Options {
    fn default() -> Self {
        let p = SuperPointParams::default();
        Self {
            max_keypoints: p.max_keypoints,
            keypoint_threshold: p.keypoint_threshold,
            nms_radius: p.nms_radius,
            return_descriptors: true,
            bgr: false,
            channel: Channel::Red,
            frame: (p.frame_width, p.frame_height),
        }
    }
}

impl Options {
    /// Checks every option, naming the first that is out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |name, value: String, why| Err(Error::InvalidOption { name, value, why });
        if self.max_keypoints < -1 {
            return bad(
                "max_keypoints",
                self.max_keypoints.to_string(),
                "use -1 to keep all keypoints, or a count >= 0",
            );
        }
        if !self.keypoint_threshold.is_finite() {
            return bad(
                "keypoint_threshold",
                self.keypoint_threshold.to_string(),
                "must be a finite number (scores are in [0, 1])",
            );
        }
        if self.nms_radius > MAX_NMS_RADIUS {
            return bad(
                "nms_radius",
                self.nms_radius.to_string(),
                "must be between 0 (no NMS) and 64",
            );
        }
        let (w, h) = self.frame;
        if w == 0 || h == 0 || w % 8 != 0 || h % 8 != 0 || w > MAX_FRAME_SIDE || h > MAX_FRAME_SIDE
        {
            return bad(
                "frame",
                format!("{w}x{h}"),
                "width and height must be positive multiples of 8, at most 4096",
            );
        }
        Ok(())
    }

    /// Sets the NMS radius from a signed value, as it arrives from a command line or a request.
    pub fn with_nms_radius(mut self, radius: i64) -> Result<Self> {
        self.nms_radius = usize::try_from(radius).map_err(|_| Error::InvalidOption {
            name: "nms_radius",
            value: radius.to_string(),
            why: "must be between 0 (no NMS) and 64",
        })?;
        Ok(self)
    }

    /// The graph parameters these options select.
    pub fn graph_params(&self) -> SuperPointParams {
        SuperPointParams {
            frame_width: self.frame.0,
            frame_height: self.frame.1,
            nms_radius: self.nms_radius,
            keypoint_threshold: self.keypoint_threshold,
            max_keypoints: self.max_keypoints,
            ..SuperPointParams::default()
        }
    }

    /// Which plane to take from colour images.
    pub fn plane_spec(&self) -> PlaneSpec {
        PlaneSpec {
            channel: self.channel,
            bgr: self.bgr,
        }
    }
}

/// Parses a frame size written `WxH` (e.g. `640x480`).
pub fn parse_frame(text: &str) -> Result<(usize, usize)> {
    let fail = || Error::InvalidOption {
        name: "frame",
        value: text.to_string(),
        why: "write it as WIDTHxHEIGHT, e.g. 640x480",
    };
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(fail)?;
    Ok((
        w.trim().parse().map_err(|_| fail())?,
        h.trim().parse().map_err(|_| fail())?,
    ))
}
