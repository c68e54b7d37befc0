//! Every declaration the stand-in headers offer to kernels matches tt-metal 0.78.0's real headers,
//! and every public stand-in header was parsed (`api_drift.rs` shows the check reports drift).

use std::path::Path;

use conformance::api;
use conformance::paths;

/// The public stand-in headers under `root`, counted here without the checker: every `.h` outside
/// the emulator's own `ttr_emu/`.
fn count_public_headers(root: &Path) -> usize {
    let mut count = 0;
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("a readable stand-in directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                if path != root.join("ttr_emu") {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "h") {
                count += 1;
            }
        }
    }
    count
}

#[test]
fn stand_in_api_matches_the_real_headers() -> Result<(), conformance::Error> {
    let root = paths::real_headers()?;
    let stand_in = paths::stand_in_headers();
    let report = api::check(&root, &stand_in)?;
    eprintln!(
        "API conformance: {} stand-in public headers, {} stand-in symbols, {} verified against tt-metal 0.78.0",
        report.headers, report.symbols, report.verified
    );
    for difference in &report.differences {
        eprintln!("drift: {difference}");
    }
    assert!(
        report.differences.is_empty(),
        "{} difference(s) between the stand-in headers (tt-runtime/include/tt_emu_api) and the real ones, listed above",
        report.differences.len()
    );
    assert_eq!(
        report.headers,
        count_public_headers(&stand_in),
        "the check did not parse every public stand-in header"
    );
    assert_eq!(report.verified, report.symbols);
    assert!(
        report.symbols > 0,
        "no stand-in symbols found: is tt-runtime/include/tt_emu_api empty?"
    );
    Ok(())
}
