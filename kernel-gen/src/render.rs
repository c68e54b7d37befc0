//! Kernel IR → C++ sources through the Tera templates of the top-level `templates/` folder
//! (compiled into the crate, so rendering needs no files at run time). Each kernel's template
//! gets its node, its named compile-time args (bound to `constexpr` names in argument order),
//! its CB ids and its runtime-arg names; the values themselves stay args, so every node of a
//! family shares one kernel body.

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
    "conv2d/weights.cpp.tera",
    "conv2d/weights_read.cpp.tera",
    "conv2d/weights_send.cpp.tera",
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

    /// The C++ source of one kernel of `node`.
    pub fn render(&self, node: &NodeKir, kernel: &Kernel) -> Result<String, RenderError> {
        let mut ctx = Context::new();
        ctx.insert("node", &node.node);
        ctx.insert("op", &node.op);
        ctx.insert("role", kernel.role.name());
        ctx.insert("template", &kernel.template);
        let compile: Vec<Indexed> = kernel
            .compile_args
            .iter()
            .enumerate()
            .map(|(index, a)| Indexed {
                name: &a.name,
                index,
            })
            .collect();
        ctx.insert("compile_args", &compile);
        let runtime: Vec<Indexed> = kernel
            .runtime_arg_names
            .iter()
            .enumerate()
            .map(|(index, name)| Indexed { name, index })
            .collect();
        ctx.insert("runtime_args", &runtime);
        let cbs: Vec<NamedCb> = node
            .cbs
            .iter()
            .map(|c| NamedCb {
                name: &c.name,
                id: c.id,
            })
            .collect();
        ctx.insert("cbs", &cbs);
        self.tera
            .render(&kernel.template, &ctx)
            .map_err(|e| RenderError::Render {
                node: node.node.clone(),
                template: kernel.template.clone(),
                message: message(&e),
            })
    }
}
