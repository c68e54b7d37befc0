//! The dispatch program: buffers, then one step per node in launch order, each with its kernels
//! (source file, core ranges, compile-time args, compute config with the per-CB unpack-to-dest
//! mode, per-core runtime args by rule: [`rules`]), CBs and semaphores; plus the kernel sources,
//! one per distinct text, which every step and program using that text names
//! ([`crate::render::Interface::file`]). Serialised as pretty JSON with fields in declaration
//! order and only ordered collections, so the bytes depend on nothing but the input.

pub mod rules;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{CoreRange, Fidelity, Grid};
use crate::kir::{CompileArg, CoreArgs, Kir, Role};
use crate::plan::{BufferPlan, CbPlan};
use crate::render::{Interface, RenderError, Renderer};

pub use rules::{CoreOrder, RuleError, Run, RunValue, RuntimeArg};

/// The folder, beside the programs' folders, that holds the kernel files they name.
pub const KERNELS: &str = "kernels";

/// What went wrong assembling, serialising or expanding a program.
#[derive(Debug, Error)]
pub enum ProgramError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("the dispatch program did not serialise: {0}")]
    Json(String),
    #[error("the emitted Rust module does not parse: {0}")]
    Rust(String),
    #[error("kernel `{kernel}`: {source}")]
    Rules {
        kernel: String,
        #[source]
        source: RuleError,
    },
    #[error("the kernels of file `{file}` name their args differently, which its name (a CRC-32 of them) rules out; regenerate")]
    ArgNames { file: String },
    #[error("kernel file `{file}` would hold two different texts (a CRC-32 collision of two kernel interfaces); rename a compile-time or runtime arg of one of them")]
    FileCollision { file: String },
}

/// One kernel of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDesc {
    pub name: String,
    pub role: Role,
    /// Its file in the [`KERNELS`] folder, the key of its text in [`Compiled::sources`]; every
    /// kernel with the same text names the same file.
    pub source: String,
    pub ranges: Vec<CoreRange>,
    pub compile_args: Vec<CompileArg>,
    /// Compute kernels: matmul fidelity and fp32 DST accumulation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<Fidelity>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fp32_dest_acc: Option<bool>,
    /// Compute kernels: the CB ids tt-metal unpacks straight into the fp32 DST
    /// (`ComputeConfig::unpack_to_dest_mode` `UnpackToDestFp32`; [`crate::kir::Kernel::unpack_to_dest_fp32`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpack_to_dest_fp32: Vec<u32>,
    /// Data-movement kernels: NoC 0 (reader) or 1 (writer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noc: Option<u32>,
    /// The order the runs of `runtime_args` count the kernel's cores in.
    #[serde(default)]
    pub core_order: CoreOrder,
    /// The runtime args in the kernel's order, each on every core by rule.
    pub runtime_args: Vec<RuntimeArg>,
}

impl KernelDesc {
    /// Every core of the kernel with its runtime args, expanded from their rules, in the
    /// kernel's core order.
    pub fn core_args(&self) -> Result<Vec<CoreArgs>, ProgramError> {
        rules::expand(&self.ranges, self.core_order, &self.runtime_args).map_err(|source| {
            ProgramError::Rules {
                kernel: self.name.clone(),
                source,
            }
        })
    }

    /// The position of runtime arg `name`.
    pub fn arg_index(&self, name: &str) -> Option<usize> {
        self.runtime_args.iter().position(|a| a.name == name)
    }
}

/// One node's program, launched after the previous step finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub node: String,
    pub op: String,
    /// The cores of every kernel and CB of the step.
    pub ranges: Vec<CoreRange>,
    pub cbs: Vec<CbPlan>,
    pub semaphores: u32,
    pub kernels: Vec<KernelDesc>,
}

/// The dispatch program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceProgram {
    pub grid: Grid,
    /// Bytes per core of the L1 arena the buffers with an `l1_offset` live in ([`crate::arena`]).
    pub l1_arena: u32,
    pub buffers: Vec<BufferPlan>,
    pub steps: Vec<Step>,
}

impl DeviceProgram {
    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> Result<String, ProgramError> {
        serde_json::to_string_pretty(self)
            .map(|s| s + "\n")
            .map_err(|e| ProgramError::Json(e.to_string()))
    }

    /// The step of node `name`.
    pub fn step(&self, name: &str) -> Option<&Step> {
        self.steps.iter().find(|s| s.node == name)
    }
}

/// A compiled graph: the dispatch program and the kernel sources it names.
#[derive(Debug, Clone, PartialEq)]
pub struct Compiled {
    pub program: DeviceProgram,
    /// Kernel source text by file name under [`KERNELS`] (`<template>.<crc>.cpp`), once per
    /// distinct text.
    pub sources: BTreeMap<String, String>,
}

/// Renders every kernel (each distinct text once) and assembles the dispatch program, its
/// per-core runtime args described by rule.
pub fn assemble(grid: Grid, buffers: &[BufferPlan], kir: &Kir) -> Result<Compiled, ProgramError> {
    let renderer = Renderer::new()?;
    let mut sources = BTreeMap::new();
    let mut steps = Vec::with_capacity(kir.nodes.len());
    for node in &kir.nodes {
        let mut kernels = Vec::with_capacity(node.kernels.len());
        for kernel in &node.kernels {
            let interface = Interface::of(node, kernel);
            let source = interface.file()?;
            let text = renderer.render(&node.node, &interface)?;
            if sources.get(&source).is_some_and(|t| *t != text) {
                return Err(ProgramError::FileCollision { file: source });
            }
            sources.insert(source.clone(), text);
            let name = format!("{}_{}", node.node, kernel.role.name());
            let (core_order, runtime_args) = rules::describe(
                &kernel.ranges,
                &kernel.runtime_arg_names,
                &kernel.runtime_args,
            )
            .map_err(|source| ProgramError::Rules {
                kernel: name.clone(),
                source,
            })?;
            let compute = kernel.role == Role::Compute;
            kernels.push(KernelDesc {
                name,
                role: kernel.role,
                source,
                ranges: kernel.ranges.clone(),
                compile_args: kernel.compile_args.clone(),
                fidelity: kernel.precision.filter(|_| compute).map(|p| p.fidelity),
                fp32_dest_acc: kernel.precision.filter(|_| compute).map(|p| p.fp32_dest),
                unpack_to_dest_fp32: kernel.unpack_to_dest_fp32.clone(),
                noc: match kernel.role {
                    Role::Reader => Some(0),
                    Role::Writer => Some(1),
                    Role::Compute => None,
                },
                core_order,
                runtime_args,
            });
        }
        steps.push(Step {
            node: node.node.clone(),
            op: node.op.clone(),
            ranges: node.ranges.clone(),
            cbs: node.cbs.clone(),
            semaphores: node.semaphores,
            kernels,
        });
    }
    Ok(Compiled {
        program: DeviceProgram {
            grid,
            l1_arena: kir.arena.bytes,
            buffers: buffers
                .iter()
                .map(|b| BufferPlan {
                    l1_offset: kir.arena.offsets.get(&b.name).copied(),
                    ..b.clone()
                })
                .collect(),
            steps,
        },
        sources,
    })
}
