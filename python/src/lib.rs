//! `superpoint._superpoint`, the compiled module of the `superpoint` Python package: the
//! `superpoint` library behind a thin PyO3 layer. The Python package (`python/superpoint/`) turns
//! the objects users pass (paths, PIL images, tensors, batches) into paths, bytes and numpy arrays
//! and wraps the results; everything else — decoding, the network, post-processing, decode-ahead
//! workers, the Tensix backend — is the Rust library's, run with the GIL released.

mod errors;
mod input;
mod model;
mod options;
mod output;
mod stream;

use pyo3::prelude::*;

#[pymodule]
fn _superpoint(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    m.add_class::<options::DetectOptions>()?;
    m.add_class::<stream::Detections>()?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
