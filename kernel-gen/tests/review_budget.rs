//! The checked-in output stays reviewable: all of `kernel-gen/artifacts` within 3 MB, all of the
//! top-level `snapshots/` within 2 MB and no snapshot over 200 KB (each `program.rs` within 2,000
//! lines is `embedded.rs`'s). `superpoint/tests/figures.rs` pins the exact sizes.

use std::path::{Path, PathBuf};

/// Every file under `dir` with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("reads the folder").flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let bytes = entry.metadata().expect("metadata").len();
            out.push((path, bytes));
        }
    }
    out
}

fn folder(relative: &str) -> Vec<(PathBuf, u64)> {
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join(relative))
}

#[test]
fn artifacts_and_snapshots_stay_within_the_review_budget() {
    let artifacts: u64 = folder("artifacts").iter().map(|f| f.1).sum();
    assert!(
        artifacts <= 3_000_000,
        "kernel-gen/artifacts: {artifacts} bytes"
    );
    let snapshots = folder("../snapshots");
    let total: u64 = snapshots.iter().map(|f| f.1).sum();
    assert!(total <= 2_000_000, "snapshots/: {total} bytes");
    for (path, bytes) in &snapshots {
        assert!(*bytes <= 200_000, "{}: {bytes} bytes", path.display());
    }
}
