//! `Options`: the per-call options of a detection, validated by the library when they are made,
//! so a bad one raises `ValueError` before any work. Unset ones take the library's defaults.

use pyo3::prelude::*;
use superpoint::{Channel, Options};

use crate::errors::{invalid_option, to_py};

/// The options of one call, and how many threads decode ahead for lists and streams.
#[pyclass(frozen, name = "Options", module = "superpoint._superpoint")]
#[derive(Debug, Clone, Copy)]
pub struct DetectOptions {
    pub options: Options,
    pub workers: usize,
}

/// Decoding threads when the caller does not say (the port's `num_workers` default).
const DEFAULT_WORKERS: usize = 4;

#[pymethods]
impl DetectOptions {
    #[new]
    #[pyo3(signature = (*, max_keypoints=None, keypoint_threshold=None, nms_radius=None,
        return_descriptors=None, bgr=None, channel=None, frame=None, num_workers=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        max_keypoints: Option<i64>,
        keypoint_threshold: Option<f32>,
        nms_radius: Option<i64>,
        return_descriptors: Option<bool>,
        bgr: Option<bool>,
        channel: Option<String>,
        frame: Option<(usize, usize)>,
        num_workers: Option<i64>,
    ) -> PyResult<Self> {
        let defaults = Options::default();
        let mut options = Options {
            max_keypoints: max_keypoints.unwrap_or(defaults.max_keypoints),
            keypoint_threshold: keypoint_threshold.unwrap_or(defaults.keypoint_threshold),
            return_descriptors: return_descriptors.unwrap_or(defaults.return_descriptors),
            bgr: bgr.unwrap_or(defaults.bgr),
            channel: match channel.as_deref() {
                None => defaults.channel,
                Some("red") => Channel::Red,
                Some("luma") => Channel::Luma,
                Some(other) => return Err(invalid_option(
                    "channel",
                    other,
                    "use \"red\" (the R plane, as the port) or \"luma\" (Pillow's convert(\"L\"))",
                )),
            },
            frame: frame.unwrap_or(defaults.frame),
            ..defaults
        };
        if let Some(radius) = nms_radius {
            options = options.with_nms_radius(radius).map_err(|e| to_py(py, e))?;
        }
        options.validate().map_err(|e| to_py(py, e))?;
        let workers = match num_workers {
            None => DEFAULT_WORKERS,
            Some(n) if n >= 1 => n as usize,
            Some(n) => {
                return Err(invalid_option(
                    "num_workers",
                    n,
                    "must be at least 1 (threads that decode ahead)",
                ))
            }
        };
        Ok(Self { options, workers })
    }

    #[getter]
    fn max_keypoints(&self) -> i64 {
        self.options.max_keypoints
    }

    #[getter]
    fn keypoint_threshold(&self) -> f32 {
        self.options.keypoint_threshold
    }

    #[getter]
    fn nms_radius(&self) -> usize {
        self.options.nms_radius
    }

    #[getter]
    fn return_descriptors(&self) -> bool {
        self.options.return_descriptors
    }

    #[getter]
    fn bgr(&self) -> bool {
        self.options.bgr
    }

    #[getter]
    fn channel(&self) -> &'static str {
        match self.options.channel {
            Channel::Red => "red",
            Channel::Luma => "luma",
        }
    }

    #[getter]
    fn frame(&self) -> (usize, usize) {
        self.options.frame
    }

    #[getter]
    fn num_workers(&self) -> usize {
        self.workers
    }

    fn __repr__(&self) -> String {
        format!(
            "Options(max_keypoints={}, keypoint_threshold={}, nms_radius={}, \
             return_descriptors={}, bgr={}, channel='{}', frame={:?}, num_workers={})",
            self.max_keypoints(),
            self.keypoint_threshold(),
            self.nms_radius(),
            if self.return_descriptors() {
                "True"
            } else {
                "False"
            },
            if self.bgr() { "True" } else { "False" },
            self.channel(),
            self.frame(),
            self.workers
        )
    }
}
