//! A [`Detection`] → the fields of a Python `SuperPointOutput`: numpy arrays that take over the
//! library's buffers (no copy), and the sizes, scale, timing and backend. `image_size` is the
//! network frame and `original_size` the image's, as in the HTTP API.

use numpy::ndarray::Array2;
use numpy::IntoPyArray;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use superpoint::Detection;

/// The output fields of `d`, by name.
pub fn fields(py: Python<'_>, d: Detection) -> PyResult<Bound<'_, PyDict>> {
    let n = d.len();
    let shape_error = |e: numpy::ndarray::ShapeError| {
        PyRuntimeError::new_err(format!("the detection's arrays disagree on its size: {e}"))
    };
    let out = PyDict::new(py);
    let keypoints = Array2::from_shape_vec((n, 2), d.keypoints.into_flattened())
        .map_err(shape_error)?
        .into_pyarray(py);
    out.set_item("keypoints", keypoints)?;
    out.set_item("scores", d.scores.into_pyarray(py))?;
    let descriptors = match d.descriptors {
        Some(rows) => Some(
            Array2::from_shape_vec((n, d.descriptor_dim), rows)
                .map_err(shape_error)?
                .into_pyarray(py),
        ),
        None => None,
    };
    out.set_item("descriptors", descriptors)?;
    out.set_item("image_size", (d.frame_size[0], d.frame_size[1]))?;
    out.set_item("original_size", (d.image_size[0], d.image_size[1]))?;
    out.set_item("scale", (d.scale[0], d.scale[1]))?;
    out.set_item("device_nms", d.device_nms)?;
    out.set_item("backend", d.backend)?;
    out.set_item("device", d.device)?;
    let timing = PyDict::new(py);
    timing.set_item("preprocess", d.timing.preprocess)?;
    timing.set_item("device_forward", d.timing.forward)?;
    timing.set_item("postprocess", d.timing.postprocess)?;
    timing.set_item("queue", d.timing.queue)?;
    timing.set_item("compile", d.timing.compile)?;
    timing.set_item("total", d.timing.total)?;
    out.set_item("timing_ms", timing)?;
    Ok(out)
}
