//! The errors of the conformance checks: each names the file or command that failed and what to do.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{script} failed ({status}); it fetches the ttnn 0.78.0 wheel from PyPI with pip: check network access to PyPI and pip, then run it by hand to see its output")]
    FetchHeaders { script: PathBuf, status: String },
    #[error("could not run {program}: {source}")]
    Spawn {
        program: String,
        #[source]
        source: std::io::Error,
    },
    #[error("could not read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a kernel-gen program: {detail}")]
    Program { path: PathBuf, detail: String },
    #[error("{path}: this kernel is not named by any program.json under kernel-gen/artifacts, so its processor and compile-time args are unknown; regenerate the artifacts (cargo run -p kernel-gen) or remove it")]
    UnlistedKernel { path: PathBuf },
    #[error("libclang: {0}; install libclang-dev (scripts/setup.sh)")]
    Libclang(String),
    #[error("libclang could not parse {path}: {detail}")]
    Parse { path: PathBuf, detail: String },
}
