//! Kernel IR → C++ sources through the Tera templates of the top-level `templates/` folder
//! (compiled into the crate, so rendering needs no files at run time). Each kernel's template
//! gets its op and role, its named compile-time args (bound to `constexpr` names in argument
//! order), its CB names and ids and its runtime-arg names ([`Interface`]); the values stay args
//! and the node is not named, so every node whose kernel has the same interface shares one text.
//! A kernel's file is named by its template and a CRC-32 of that interface ([`Interface::file`]):
//! one name is one text, and a template edit changes the text, not the name.

use serde::Serialize;
use tera::{Context, Tera};
use thiserror::Error;

use crate::kir::{Kernel, NodeKir};

/// A template that failed to load or render.
#[derive(Debug, Error)]
pub enum RenderError {
    #[error("template `{template}` did not parse: {message}")]
    Load { template: String, message: String },
    #[error("node `{node}`: template `{template}` did not render: {message}")]
    Render {
        node: String,
        template: String,
        message: String,
    },
    #[error("the interface of a kernel of template `{template}` did not serialise: {message}")]
    Interface { template: String, message: String },
}

macro_rules! templates {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_str!(concat!("../../templates/", $path)))),*]
    };
}

/// Every template, by its path under `templates/`.
pub const TEMPLATES: &[(&str, &str)] = templates![
    "common/header.cpp.tera",
    "common/args.cpp.tera",
    "common/runtime_args.cpp.tera",
    "common/zero_fill.cpp.tera",
    "common/face_offset.cpp.tera",
    "common/identity.cpp.tera",
    "conv2d/weights.cpp.tera",
    "conv2d/constants_on_reader.cpp.tera",
    "conv2d/weights_read.cpp.tera",
    "conv2d/weights_share.cpp.tera",
    "conv2d/weights_send.cpp.tera",
    "conv2d/stage.cpp.tera",
    "conv2d/write_block.cpp.tera",
    "conv2d/ring_views.cpp.tera",
    "conv2d/views_above.cpp.tera",
    "conv2d/reader.cpp.tera",
    "conv2d/frame_reader.cpp.tera",
    "conv2d/frame_compute.cpp.tera",
    "conv2d/act_tile.cpp.tera",
    "conv2d/block.cpp.tera",
    "conv2d/compute.cpp.tera",
    "conv2d/pool_compute.cpp.tera",
    "conv2d/writer.cpp.tera",
    "max_pool2/reader.cpp.tera",
    "max_pool2/compute.cpp.tera",
    "max_pool2/writer.cpp.tera",
    "max_pool2/select_reader.cpp.tera",
    "max_pool2/select_compute.cpp.tera",
    "max_pool2/selection.cpp.tera",
    "max_pool2/select_tile.cpp.tera",
    "max_pool2/write_tiles.cpp.tera",
    "max_pool2/conv_writer.cpp.tera",
    "common/reduce_scaler.cpp.tera",
    "softmax_fold/reader.cpp.tera",
    "softmax_fold/compute.cpp.tera",
    "softmax_fold/writer.cpp.tera",
    "l2_normalize/reader.cpp.tera",
    "l2_normalize/compute.cpp.tera",
    "l2_normalize/writer.cpp.tera",
    "resize/reader.cpp.tera",
    "resize/compute.cpp.tera",
    "resize/writer.cpp.tera",
    "resize/copy.cpp.tera",
    "nms/strips.cpp.tera",
    "nms/reader.cpp.tera",
    "nms/window_max.cpp.tera",
    "nms/nms_tile.cpp.tera",
    "nms/column_maxima.cpp.tera",
    "nms/mask_compute.cpp.tera",
    "nms/bits_compute.cpp.tera",
    "nms/store_column_maxima.cpp.tera",
    "nms/writer.cpp.tera",
    "select_keypoints/candidates.cpp.tera",
    "select_keypoints/candidate_bits.cpp.tera",
    "select_keypoints/reader.cpp.tera",
    "nms/select_writer.cpp.tera",
    "nms/bits_writer.cpp.tera",
    "sample_descriptors/reader.cpp.tera",
    "sample_descriptors/compute.cpp.tera",
    "sample_descriptors/writer.cpp.tera",
];

/// Error text with its causes, which Tera keeps in the source chain.
fn message(e: &tera::Error) -> String {
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    text
}

/// The loaded templates.
pub struct Renderer {
    tera: Tera,
}

#[derive(Serialize)]
struct Indexed<'a> {
    name: &'a str,
    index: usize,
}

#[derive(Serialize)]
struct NamedCb<'a> {
    name: &'a str,
    id: u32,
}

/// Everything a kernel's text is rendered from: its template and what the template names.
#[derive(Serialize)]
pub struct Interface<'a> {
    op: &'a str,
    role: &'a str,
    template: &'a str,
    compile_args: Vec<Indexed<'a>>,
    runtime_args: Vec<Indexed<'a>>,
    cbs: Vec<NamedCb<'a>>,
}

impl<'a> Interface<'a> {
    /// The interface of `kernel`, a kernel of `node`.
    pub fn of(node: &'a NodeKir, kernel: &'a Kernel) -> Interface<'a> {
        let indexed = |names: Vec<&'a str>| -> Vec<Indexed<'a>> {
            names
                .into_iter()
                .enumerate()
                .map(|(index, name)| Indexed { name, index })
                .collect()
        };
        Interface {
            op: &node.op,
            role: kernel.role.name(),
            template: &kernel.template,
            compile_args: indexed(
                kernel
                    .compile_args
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect(),
            ),
            runtime_args: indexed(
                kernel
                    .runtime_arg_names
                    .iter()
                    .map(String::as_str)
                    .collect(),
            ),
            cbs: node
                .cbs
                .iter()
                .map(|c| NamedCb {
                    name: &c.name,
                    id: c.id,
                })
                .collect(),
        }
    }

    /// The kernel's file name: its template's path without `.cpp.tera`, a CRC-32 of the
    /// interface (8 hex digits) and `.cpp`, e.g. `conv2d/reader.1c2d3e4f.cpp`.
    pub fn file(&self) -> Result<String, RenderError> {
        let text = serde_json::to_string(self).map_err(|e| RenderError::Interface {
            template: self.template.to_string(),
            message: e.to_string(),
        })?;
        let stem = self
            .template
            .trim_end_matches(".tera")
            .trim_end_matches(".cpp");
        Ok(format!(
            "{stem}.{:08x}.cpp",
            crc32fast::hash(text.as_bytes())
        ))
    }
}

impl Renderer {
    /// Parses every template.
    pub fn new() -> Result<Renderer, RenderError> {
        let mut tera = Tera::default();
        for (name, text) in TEMPLATES {
            tera.add_raw_template(name, text)
                .map_err(|e| RenderError::Load {
                    template: name.to_string(),
                    message: message(&e),
                })?;
        }
        Ok(Renderer { tera })
    }

    /// The C++ source of a kernel of `node` whose interface is `interface`.
    pub fn render(&self, node: &str, interface: &Interface) -> Result<String, RenderError> {
        let ctx = Context::from_serialize(interface).map_err(|e| RenderError::Interface {
            template: interface.template.to_string(),
            message: message(&e),
        })?;
        self.tera
            .render(interface.template, &ctx)
            .map_err(|e| RenderError::Render {
                node: node.to_string(),
                template: interface.template.to_string(),
                message: message(&e),
            })
    }
}
