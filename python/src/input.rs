//! A Python object → the library's [`Input`]: a `str` path, `bytes` of an image file, or a numpy
//! array of pixels, (H, W) or (H, W, C) with C in 1..4, uint8 or float in [0, 1]. (The Python
//! package turns every other accepted kind — `os.PathLike`, PIL images, tensors — into one of
//! these first.) Arrays become decoded images whose channel order the options give (RGB, or BGR
//! with `bgr=True`); float pixels are scaled by 255 and rounded, so `u8 / 255` comes back exactly.

use std::borrow::Cow;
use std::path::PathBuf;

use image::{DynamicImage, GrayAlphaImage, GrayImage, RgbImage, RgbaImage};
use numpy::{Element, PyReadonlyArrayDyn, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use superpoint::decode::check_size;
use superpoint::Input;

use crate::errors::to_py;

/// The input `obj` stands for; bytes are borrowed, not copied.
pub fn input_from<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Input<'a>> {
    if obj.is_instance_of::<PyString>() {
        return Ok(Input::Path(Cow::Owned(obj.extract::<PathBuf>()?)));
    }
    if let Ok(bytes) = obj.cast::<PyBytes>() {
        return Ok(Input::Bytes(Cow::Borrowed(bytes.as_bytes())));
    }
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        return image_from_array(array).map(|i| Input::Image(Cow::Owned(i)));
    }
    Err(PyTypeError::new_err(format!(
        "cannot detect keypoints in a {}: pass a path, bytes of an image file, a PIL image, a \
         numpy array or a tensor",
        obj.get_type().name()?
    )))
}

/// The decoded image a pixel array holds.
fn image_from_array(array: &Bound<'_, PyUntypedArray>) -> PyResult<DynamicImage> {
    let py = array.py();
    let (height, width, channels) = match *array.shape() {
        [h, w] => (h, w, 1),
        [h, w, c] if (1..=4).contains(&c) => (h, w, c),
        ref shape => {
            return Err(PyValueError::new_err(format!(
                "a pixel array is (H, W) or (H, W, C) with C = 1 (gray), 2 (gray + alpha), 3 \
                 (RGB) or 4 (RGBA); got shape {shape:?} (a (C, H, W) numpy array needs \
                 .transpose(1, 2, 0))"
            )))
        }
    };
    check_size(width as u64, height as u64).map_err(|e| to_py(py, e))?;
    let pixels = if let Ok(a) = array.extract::<PyReadonlyArrayDyn<'_, u8>>() {
        a.as_array().iter().copied().collect()
    } else if let Ok(a) = array.extract::<PyReadonlyArrayDyn<'_, f32>>() {
        scaled(&a)?
    } else if let Ok(a) = array.extract::<PyReadonlyArrayDyn<'_, f64>>() {
        scaled(&a)?
    } else {
        return Err(PyValueError::new_err(format!(
            "pixel arrays are uint8, or float (float16, float32, float64) in [0, 1]; got dtype {}",
            array.dtype().str()?
        )));
    };
    let (w, h) = (width as u32, height as u32);
    let image = match channels {
        1 => GrayImage::from_raw(w, h, pixels).map(DynamicImage::ImageLuma8),
        2 => GrayAlphaImage::from_raw(w, h, pixels).map(DynamicImage::ImageLumaA8),
        3 => RgbImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgb8),
        _ => RgbaImage::from_raw(w, h, pixels).map(DynamicImage::ImageRgba8),
    };
    image.ok_or_else(|| {
        PyValueError::new_err(format!(
            "{width}x{height}x{channels} pixels do not fill the array"
        ))
    })
}

/// Float pixels in [0, 1] → u8, rounded to nearest; anything else is refused.
fn scaled<T: Element + Copy + Into<f64>>(a: &PyReadonlyArrayDyn<'_, T>) -> PyResult<Vec<u8>> {
    a.as_array()
        .iter()
        .map(|&v| {
            let v: f64 = v.into();
            if (0.0..=1.0).contains(&v) {
                Ok((v * 255.0).round() as u8)
            } else {
                Err(PyValueError::new_err(format!(
                    "float pixels must lie in [0, 1]; found {v} (divide 0..255 data by 255, or \
                     pass uint8)"
                )))
            }
        })
        .collect()
}
