//! The dispatch program: buffers, then one step per node in launch order, each with its kernels
//! (source file, core ranges, compile-time args, compute config with the per-CB unpack-to-dest
//! mode), CBs, semaphores and per-core
//! runtime args; plus the kernel sources. Serialised as pretty JSON with fields in declaration
//! order and only ordered collections, so the bytes depend on nothing but the input.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::device::{CoreRange, Fidelity, Grid};
use crate::kir::{CompileArg, CoreArgs, Kir, Role};
use crate::plan::{BufferPlan, CbPlan};
use crate::render::{RenderError, Renderer};

/// What went wrong assembling or serialising a program.
#[derive(Debug, Error)]
pub enum ProgramError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("the dispatch program did not serialise: {0}")]
    Json(String),
    #[error("the emitted Rust module does not parse: {0}")]
    Rust(String),
}

/// One kernel of a step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDesc {
    pub name: String,
    pub role: Role,
    /// Key of its text in [`Compiled::sources`].
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
    pub runtime_arg_names: Vec<String>,
    pub runtime_args: Vec<CoreArgs>,
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
    /// Kernel source text by file name (`<node>/<role>.cpp`).
    pub sources: BTreeMap<String, String>,
}

impl Compiled {
    /// Every artifact file: `program.json`, `program.rs` ([`crate::emit`]) and the kernels, by
    /// relative path.
    pub fn files(&self) -> Result<BTreeMap<String, String>, ProgramError> {
        let mut files = self.sources.clone();
        files.insert("program.json".to_string(), self.program.to_json()?);
        files.insert("program.rs".to_string(), crate::emit::rust_module(self)?);
        Ok(files)
    }
}

/// Renders every kernel and assembles the dispatch program.
pub fn assemble(grid: Grid, buffers: &[BufferPlan], kir: &Kir) -> Result<Compiled, ProgramError> {
    let renderer = Renderer::new()?;
    let mut sources = BTreeMap::new();
    let mut steps = Vec::with_capacity(kir.nodes.len());
    for node in &kir.nodes {
        let mut kernels = Vec::with_capacity(node.kernels.len());
        for kernel in &node.kernels {
            let source = format!("{}/{}.cpp", node.node, kernel.role.name());
            sources.insert(source.clone(), renderer.render(node, kernel)?);
            let compute = kernel.role == Role::Compute;
            kernels.push(KernelDesc {
                name: format!("{}_{}", node.node, kernel.role.name()),
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
                runtime_arg_names: kernel.runtime_arg_names.clone(),
                runtime_args: kernel.runtime_args.clone(),
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
