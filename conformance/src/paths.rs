//! Where things are: the workspace, the stand-in headers, the artifacts, the harness and the real
//! tt-metal headers (fetched and cached by `scripts/conformance-headers.sh`, run from here so a
//! plain `cargo test -p conformance` works on a fresh checkout).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Error;

/// The workspace root (the parent of this crate).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The emulator's stand-in kernel API headers.
pub fn stand_in_headers() -> PathBuf {
    workspace().join("tt-runtime/include/tt_emu_api")
}

/// The checked-in kernel-gen artifacts.
pub fn artifacts() -> PathBuf {
    workspace().join("kernel-gen/artifacts")
}

/// The harness headers that stand in for the JIT's generated files and the SFPI toolchain headers.
pub fn harness() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("harness")
}

/// The root of the unpacked tt-metal tree (it holds `tt_metal/`), fetching it on first use.
pub fn real_headers() -> Result<PathBuf, Error> {
    let script = workspace().join("scripts/conformance-headers.sh");
    let out = Command::new("bash")
        .arg(&script)
        .output()
        .map_err(|source| Error::Spawn {
            program: script.display().to_string(),
            source,
        })?;
    if !out.status.success() {
        return Err(Error::FetchHeaders {
            script,
            status: out.status.to_string(),
        });
    }
    let printed = String::from_utf8_lossy(&out.stdout);
    let tt_metal = PathBuf::from(printed.trim());
    match tt_metal.parent() {
        Some(root) if tt_metal.join("hw/inc/api").is_dir() => Ok(root.to_path_buf()),
        _ => Err(Error::FetchHeaders {
            script,
            status: format!("printed {printed:?}, not a tt_metal tree"),
        }),
    }
}

/// Every file under `dir` whose name ends with `suffix`, sorted, found recursively.
pub fn files_under(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>, Error> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let entries = std::fs::read_dir(&next).map_err(|source| Error::Read {
            path: next.clone(),
            source,
        })?;
        for entry in entries {
            let path = entry
                .map_err(|source| Error::Read {
                    path: next.clone(),
                    source,
                })?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else if path.to_string_lossy().ends_with(suffix) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}
