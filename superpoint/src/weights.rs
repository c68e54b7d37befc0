//! Loading SuperPoint's convolution parameters from a safetensors file, in either naming:
//! Hugging Face (`encoder.conv_blocks.0.conv_a.weight`, …) or the original Magic Leap names
//! (`conv1a.weight`, …). Every tensor is checked for presence, shape and dtype, and errors name
//! the tensor and the file.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};
use superpoint_graph::{ConvLayer, ConvWeights, WeightSet, CONV_LAYERS};

use crate::error::{Error, Result};

/// Which naming a checkpoint uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    HuggingFace,
    Original,
}

impl Naming {
    fn prefix(self, layer: &ConvLayer) -> &'static str {
        match self {
            Naming::HuggingFace => layer.hf_prefix,
            Naming::Original => layer.name,
        }
    }
}

/// Reads and checks a safetensors checkpoint from `path`.
pub fn load_safetensors(path: &Path) -> Result<WeightSet> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    weights_from_bytes(&bytes, path)
}

/// Parses and checks a safetensors checkpoint held in memory (`path` only names it in errors).
pub fn weights_from_bytes(bytes: &[u8], path: &Path) -> Result<WeightSet> {
    let tensors = SafeTensors::deserialize(bytes).map_err(|e| Error::Weights {
        path: path.to_path_buf(),
        why: format!("not a valid safetensors file ({e}); pass the model.safetensors of magic-leap-community/superpoint"),
    })?;
    let names: Vec<String> = tensors.names().into_iter().map(|s| s.to_string()).collect();
    let naming = if names.iter().any(|n| n.starts_with("encoder.")) {
        Naming::HuggingFace
    } else if names.iter().any(|n| n.starts_with("conv1a.")) {
        Naming::Original
    } else {
        return Err(Error::Weights {
            path: path.to_path_buf(),
            why: "no SuperPoint tensors found (expected `encoder.conv_blocks.0.conv_a.weight` or `conv1a.weight`)".to_string(),
        });
    };
    let mut set = WeightSet::new();
    for layer in &CONV_LAYERS {
        let prefix = naming.prefix(layer);
        let weight = read_f32(
            &tensors,
            path,
            &format!("{prefix}.weight"),
            &[
                layer.out_channels,
                layer.in_channels,
                layer.kernel,
                layer.kernel,
            ],
        )?;
        let bias = read_f32(
            &tensors,
            path,
            &format!("{prefix}.bias"),
            &[layer.out_channels],
        )?;
        set.insert(
            layer.name.to_string(),
            ConvWeights {
                out_channels: layer.out_channels,
                in_channels: layer.in_channels,
                kernel: layer.kernel,
                weight,
                bias,
            },
        );
    }
    Ok(set)
}

fn read_f32(tensors: &SafeTensors, path: &Path, name: &str, shape: &[usize]) -> Result<Vec<f32>> {
    let fail = |why: String| Error::WeightTensor {
        path: path.to_path_buf(),
        name: name.to_string(),
        why,
    };
    let view = tensors
        .tensor(name)
        .map_err(|_| fail("missing from the checkpoint".to_string()))?;
    if view.dtype() != Dtype::F32 {
        return Err(fail(format!("dtype is {:?}, expected F32", view.dtype())));
    }
    if view.shape() != shape {
        return Err(fail(format!(
            "shape is {:?}, expected {shape:?}",
            view.shape()
        )));
    }
    let values: Vec<f32> = view
        .data()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    if values.iter().any(|v| !v.is_finite()) {
        return Err(fail("contains NaN or infinite values".to_string()));
    }
    Ok(values)
}
