//! The emitted-kernel check: every checked-in kernel under `kernel-gen/artifacts` is compiled with
//! `g++ -fsyntax-only` inside the real firmware wrapper of every processor it may run on, with the
//! JIT's defines ([`crate::jit`]) and the compile-time args and NoC a `program.json` gives it.
//! Each distinct kernel file is checked once: the programs name their kernels in the shared
//! `kernels/` folder beside their own folders ([`KERNELS`]), one file per distinct text, and the
//! first kernel (in path and launch order) that names a file gives its args (its text names the
//! same args, so every use builds alike). Reader and writer kernels build for BRISC and NCRISC,
//! compute kernels for the three TRISCs. A kernel file no `program.json` names is an error: its
//! processor is unknown.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde_json::Value;

use crate::jit::{Build, Jit, Processor};
use crate::{paths, Error};

/// One kernel source with what its program says about it.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub source: PathBuf,
    /// `reader`, `writer` or `compute`, as the program names it.
    pub role: String,
    pub compile_args: Vec<u32>,
    pub noc: u32,
}

impl Kernel {
    /// The processors this kernel is built for.
    pub fn processors(&self) -> &'static [Processor] {
        if self.role == "compute" {
            &Processor::COMPUTE
        } else {
            &Processor::DATA_MOVEMENT
        }
    }
}

/// A failed build: the kernel, the processor and the compiler's diagnostics.
#[derive(Debug)]
pub struct Failure {
    pub kernel: PathBuf,
    pub processor: Processor,
    pub diagnostics: String,
}

/// Per role: how many kernels, and how many built for every processor.
#[derive(Debug, Default)]
pub struct Report {
    pub kernels: BTreeMap<String, (usize, usize)>,
    pub builds: usize,
    pub failures: Vec<Failure>,
}

/// The folder, beside the programs' folders, that holds the kernel files they name.
pub const KERNELS: &str = "kernels";

/// Every distinct kernel file under `artifacts`, read from the `program.json` files there; fails
/// on a `.cpp` no program names.
pub fn discover(artifacts: &Path) -> Result<Vec<Kernel>, Error> {
    let mut kernels: Vec<Kernel> = Vec::new();
    for program in paths::files_under(artifacts, "program.json")? {
        let text = std::fs::read_to_string(&program).map_err(|source| Error::Read {
            path: program.clone(),
            source,
        })?;
        let json: Value = serde_json::from_str(&text).map_err(|error| Error::Program {
            path: program.clone(),
            detail: error.to_string(),
        })?;
        let dir = program
            .parent()
            .and_then(Path::parent)
            .unwrap_or(artifacts)
            .join(KERNELS);
        let steps = json["steps"].as_array().ok_or_else(|| Error::Program {
            path: program.clone(),
            detail: "no `steps` array".into(),
        })?;
        for step in steps {
            for kernel in step["kernels"].as_array().into_iter().flatten() {
                let kernel = kernel_of(&program, &dir, kernel)?;
                if !kernels.iter().any(|k| k.source == kernel.source) {
                    kernels.push(kernel);
                }
            }
        }
    }
    let listed: BTreeSet<&Path> = kernels.iter().map(|k| k.source.as_path()).collect();
    for source in paths::files_under(artifacts, ".cpp")? {
        if !listed.contains(source.as_path()) {
            return Err(Error::UnlistedKernel { path: source });
        }
    }
    Ok(kernels)
}

fn kernel_of(program: &Path, dir: &Path, kernel: &Value) -> Result<Kernel, Error> {
    let bad = |detail: String| Error::Program {
        path: program.to_path_buf(),
        detail,
    };
    let name = kernel["name"].as_str().unwrap_or("?");
    let source = kernel["source"]
        .as_str()
        .ok_or_else(|| bad(format!("kernel {name}: no `source`")))?;
    let role = kernel["role"]
        .as_str()
        .ok_or_else(|| bad(format!("kernel {name}: no `role`")))?;
    if !matches!(role, "reader" | "writer" | "compute") {
        return Err(bad(format!(
            "kernel {name}: role `{role}` is none of reader, writer, compute"
        )));
    }
    let mut compile_args = Vec::new();
    for arg in kernel["compile_args"].as_array().into_iter().flatten() {
        let value = arg["value"].as_u64().and_then(|v| u32::try_from(v).ok());
        compile_args.push(
            value.ok_or_else(|| bad(format!("kernel {name}: compile arg {arg} is not a u32")))?,
        );
    }
    let noc = kernel["noc"]
        .as_u64()
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(0);
    Ok(Kernel {
        source: dir.join(source),
        role: role.to_string(),
        compile_args,
        noc,
    })
}

/// Builds every kernel for each of its processors, `jobs` compilers at a time.
pub fn check(jit: &Jit, kernels: &[Kernel], compiler: &str, jobs: usize) -> Result<Report, Error> {
    let builds: Vec<(&Kernel, Processor)> = kernels
        .iter()
        .flat_map(|k| k.processors().iter().map(move |p| (k, *p)))
        .collect();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let spawn_error = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some((kernel, processor)) = builds.get(index) else {
                    break;
                };
                match build(jit, kernel, *processor, compiler) {
                    Ok(None) => {}
                    Ok(Some(failure)) => failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(failure),
                    Err(error) => {
                        *spawn_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                        break;
                    }
                }
            });
        }
    });
    if let Some(error) = spawn_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(error);
    }
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort_by(|a, b| (&a.kernel, a.processor.name()).cmp(&(&b.kernel, b.processor.name())));
    let mut report = Report {
        builds: builds.len(),
        ..Report::default()
    };
    for kernel in kernels {
        let entry = report.kernels.entry(kernel.role.clone()).or_default();
        entry.0 += 1;
        if !failures.iter().any(|f| f.kernel == kernel.source) {
            entry.1 += 1;
        }
    }
    report.failures = failures;
    Ok(report)
}

fn build(
    jit: &Jit,
    kernel: &Kernel,
    processor: Processor,
    compiler: &str,
) -> Result<Option<Failure>, Error> {
    let spec = Build {
        processor,
        kernel: &kernel.source,
        compile_args: &kernel.compile_args,
        noc: kernel.noc,
    };
    let out = Command::new(compiler)
        .arg("-fsyntax-only")
        .args(jit.args(&spec))
        .arg(jit.wrapper(processor))
        .output()
        .map_err(|source| Error::Spawn {
            program: compiler.to_string(),
            source,
        })?;
    if out.status.success() {
        return Ok(None);
    }
    Ok(Some(Failure {
        kernel: kernel.source.clone(),
        processor,
        diagnostics: String::from_utf8_lossy(&out.stderr).into_owned(),
    }))
}
