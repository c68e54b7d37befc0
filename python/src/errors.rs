//! The library's errors as Python exceptions, with the library's messages: invalid options are
//! `ValueError`, a frame that cannot be allocated `MemoryError`; the rest are the classes of `superpoint.errors` (a `SuperPointError` hierarchy
//! defined in Python, so that `ReadError` can also be an `OSError`).

use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use superpoint::error::message_chain;
use superpoint::Error;

/// The exception for `e`.
pub fn to_py(py: Python<'_>, e: Error) -> PyErr {
    let class = match &e {
        Error::InvalidOption { .. } => return PyValueError::new_err(message_chain(&e)),
        Error::OutOfMemory { .. } => return PyMemoryError::new_err(message_chain(&e)),
        Error::Io { .. } | Error::NotAFile { .. } | Error::FileTooLarge { .. } => "ReadError",
        Error::EmptyImage
        | Error::UnsupportedFormat(_)
        | Error::Decode(_)
        | Error::ImageSize { .. }
        | Error::PlaneLength { .. } => "DecodeError",
        Error::Weights { .. } | Error::WeightTensor { .. } | Error::WeightsUnavailable(_) => {
            "WeightsError"
        }
        Error::BackendUnavailable { .. } | Error::Tensix(_) | Error::Graph(_) | Error::Eval(_) => {
            "DeviceError"
        }
    };
    raise(py, class, message_chain(&e))
}

/// The exception for `e` met while loading a model: there, a file that cannot be read is the
/// weights file.
pub fn loading_to_py(py: Python<'_>, e: Error) -> PyErr {
    match e {
        Error::Io { .. } => raise(py, "WeightsError", message_chain(&e)),
        other => to_py(py, other),
    }
}

/// An instance of `superpoint.errors.<class>` with `message`, as a `PyErr`.
pub fn raise(py: Python<'_>, class: &str, message: String) -> PyErr {
    let made = py
        .import("superpoint.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message,)));
    match made {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

/// A `ValueError` naming an invalid option, worded like the library's.
pub fn invalid_option(name: &'static str, value: impl ToString, why: &'static str) -> PyErr {
    PyValueError::new_err(
        Error::InvalidOption {
            name,
            value: value.to_string(),
            why,
        }
        .to_string(),
    )
}
