//! `Model`: one loaded [`SuperPoint`], shared by Python threads. Every call releases the GIL while
//! the library works (loading, decoding, the network), so threads run in parallel where the
//! backend allows (the Tensix backend serialises device work itself). `close()` drops the
//! model's handle: calls after it raise, calls in flight finish, and the device is released
//! when the last of them ends.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use clap::ValueEnum;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use superpoint::backend::tensix::{TensixConfig, TensixGrid, TensixPrecision};
use superpoint::{Backend, DeviceSet, Input, SuperPoint};

use crate::errors::{invalid_option, loading_to_py, raise, to_py};
use crate::input::input_from;
use crate::options::DetectOptions;
use crate::output::fields;
use crate::stream::Detections;

/// A loaded model.
#[pyclass(frozen, module = "superpoint._superpoint")]
pub struct Model {
    model: RwLock<Option<Arc<SuperPoint>>>,
    backend: &'static str,
}

/// `value` as one of `T`'s names (the CLI's), or the `ValueError` of option `name`.
fn choice<T: ValueEnum>(name: &'static str, value: &str, why: &'static str) -> PyResult<T> {
    T::from_str(value, false).map_err(|_| invalid_option(name, value, why))
}

impl Model {
    /// The model, unless closed.
    fn get(&self, py: Python<'_>) -> PyResult<Arc<SuperPoint>> {
        let guard = self.model.read().unwrap_or_else(|p| p.into_inner());
        guard.clone().ok_or_else(|| {
            raise(
                py,
                "SuperPointError",
                "the model is closed; load a new one with SuperPoint.from_pretrained()".into(),
            )
        })
    }
}

#[pymethods]
impl Model {
    /// Loads the weights (a safetensors file, or the pinned pretrained checkpoint from the HF
    /// cache when `weights` is None) and opens the backend: on the Tensix backend, device
    /// `device_id`, or every device (a pool) when it is None.
    #[new]
    #[pyo3(signature = (weights=None, backend="auto".to_string(), device_id=0, grid=None,
        precision="port".to_string()))]
    fn new(
        py: Python<'_>,
        weights: Option<PathBuf>,
        backend: String,
        device_id: Option<i64>,
        grid: Option<String>,
        precision: String,
    ) -> PyResult<Self> {
        let backend: Backend = choice("backend", &backend, "use \"auto\", \"cpu\" or \"tensix\"")?;
        let devices = match device_id {
            None => DeviceSet::All,
            Some(id) => DeviceSet::Ids(vec![u32::try_from(id).map_err(|_| {
                invalid_option(
                    "device_id",
                    id,
                    "use a device index (0 for the first), or None for every device",
                )
            })?]),
        };
        let mut tensix = TensixConfig {
            precision: choice::<TensixPrecision>(
                "precision",
                &precision,
                "use \"port\" or \"accurate\"",
            )?,
            ..TensixConfig::default()
        };
        if let Some(grid) = grid {
            tensix.grid = Some(choice::<TensixGrid>(
                "grid",
                &grid,
                "use \"12x10\" or \"11x10\", or None to follow the dispatch obtained",
            )?);
        }
        let mut builder = SuperPoint::builder()
            .backend(backend)
            .tensix(tensix)
            .devices(devices);
        if let Some(path) = weights {
            builder = builder.weights(path);
        }
        let model = py
            .detach(|| builder.build())
            .map_err(|e| loading_to_py(py, e))?;
        Ok(Self {
            backend: model.backend().name(),
            model: RwLock::new(Some(Arc::new(model))),
        })
    }

    /// The backend that runs the network: "cpu" or "tensix".
    #[getter]
    fn backend(&self) -> &'static str {
        self.backend
    }

    /// The weights file the model loaded.
    #[getter]
    fn weights(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.get(py)?.weights_source().path().display().to_string())
    }

    /// The output fields of one image.
    fn detect<'py>(
        &self,
        py: Python<'py>,
        image: &Bound<'py, PyAny>,
        options: &DetectOptions,
    ) -> PyResult<Bound<'py, PyDict>> {
        let model = self.get(py)?;
        let input = input_from(image)?;
        let options = options.options;
        let detection = py
            .detach(|| model.detect(input, &options))
            .map_err(|e| to_py(py, e))?;
        fields(py, detection)
    }

    /// The output fields of each image, in order; the next images decode on worker threads
    /// while the network runs. The first failure raises.
    fn detect_all<'py>(
        &self,
        py: Python<'py>,
        images: Vec<Bound<'py, PyAny>>,
        options: &DetectOptions,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let model = self.get(py)?;
        let inputs = images
            .iter()
            .map(|i| input_from(i).map(Input::into_owned))
            .collect::<PyResult<Vec<_>>>()?;
        let (options, workers) = (options.options, options.workers);
        let detections: Vec<_> =
            py.detach(|| model.stream_with(inputs, options, workers).collect());
        detections
            .into_iter()
            .map(|d| fields(py, d.map_err(|e| to_py(py, e))?))
            .collect()
    }

    /// The detections of the images an iterable yields, as an iterator (see `Detections`).
    fn stream(
        &self,
        py: Python<'_>,
        images: &Bound<'_, PyAny>,
        options: &DetectOptions,
    ) -> PyResult<Detections> {
        let model = self.get(py)?;
        Detections::start(model, images.try_iter()?.unbind(), *options)
    }

    /// Prepares a `size` = (width, height) image with `options` (see `SuperPoint::warmup`).
    fn warmup(
        &self,
        py: Python<'_>,
        size: (usize, usize),
        options: &DetectOptions,
    ) -> PyResult<()> {
        let model = self.get(py)?;
        let options = options.options;
        py.detach(|| model.warmup(size, &options))
            .map_err(|e| to_py(py, e))
    }

    /// Releases the model; later calls raise `SuperPointError`.
    fn close(&self) {
        let mut guard = self.model.write().unwrap_or_else(|p| p.into_inner());
        *guard = None;
    }

    /// True once `close()` ran.
    #[getter]
    fn closed(&self) -> bool {
        self.model
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }
}
