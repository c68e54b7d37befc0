//! `Detections`: detections of the images a Python iterable yields (e.g. video frames from a
//! generator), in order, with the library's decode-ahead stream doing the work. A thread owns
//! the stream (it borrows the model, so it cannot live in a Python object) and hands each
//! detection over when Python asks for it; its feeder takes the next images from the Python
//! iterable under the GIL. When the iterable raises, or yields something that is not an image,
//! the detections of the images before it come out first, then that exception.

use std::sync::{Arc, Mutex};
use std::thread;

use crossbeam_channel::{bounded, Receiver};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator};
use superpoint::{Detection, Input, SuperPoint};

use crate::errors::to_py;
use crate::input::input_from;
use crate::options::DetectOptions;
use crate::output::fields;

/// The exception that ended the Python iterable early, if any.
type Failure = Arc<Mutex<Option<PyErr>>>;

/// An iterator of output fields, one per image of the iterable.
#[pyclass(frozen, module = "superpoint._superpoint")]
pub struct Detections {
    results: Receiver<superpoint::Result<Detection>>,
    failure: Failure,
}

impl Detections {
    /// Starts the stream of `model` over `images`.
    pub fn start(
        model: Arc<SuperPoint>,
        images: Py<PyIterator>,
        options: DetectOptions,
    ) -> PyResult<Self> {
        let failure = Failure::default();
        let frames = Frames {
            images,
            failure: Arc::clone(&failure),
        };
        let (sender, results) = bounded(0);
        thread::Builder::new()
            .name("superpoint-stream".into())
            .spawn(move || {
                for detection in model.stream_with(frames, options.options, options.workers) {
                    if sender.send(detection).is_err() {
                        break;
                    }
                }
            })
            .map_err(|e| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "cannot start the stream's thread: {e}"
                ))
            })?;
        Ok(Self { results, failure })
    }
}

#[pymethods]
impl Detections {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        match py.detach(|| self.results.recv()) {
            Ok(detection) => fields(py, detection.map_err(|e| to_py(py, e))?).map(Some),
            Err(_) => {
                let failure = self
                    .failure
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take();
                match failure {
                    Some(e) => Err(e),
                    None => Ok(None),
                }
            }
        }
    }
}

/// The images of a Python iterator as the library's inputs; it ends at the iterator's end or at
/// its first exception (kept in `failure`).
struct Frames {
    images: Py<PyIterator>,
    failure: Failure,
}

impl Iterator for Frames {
    type Item = Input<'static>;

    fn next(&mut self) -> Option<Input<'static>> {
        Python::attach(|py| {
            let next = self.images.bind(py).clone().next()?;
            match next.and_then(|image| input_from(&image).map(Input::into_owned)) {
                Ok(input) => Some(input),
                Err(e) => {
                    *self.failure.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    None
                }
            }
        })
    }
}
