//! The API check reports drift: a stand-in tree written here with a changed parameter type, a
//! function tt-metal 0.78.0 lacks, a changed template default and a header it lacks gets each
//! difference named with its file, and exactly the symbols and headers it declares counted.
//! (A file of its own: libclang allows one `Clang` per process at a time.)

use std::path::{Path, PathBuf};

use conformance::api::{self, Difference, KernelKind};
use conformance::paths;

/// A stand-in file of the drift tree: (path under the stand-in root, text).
const DRIFT_TREE: &[(&str, &str)] = &[
    (
        "api/dataflow/dataflow_api.h",
        r#"#pragma once
#include <cstdint>

enum ProgrammableCoreType {
    TENSIX = 0,
    ACTIVE_ETH = 1,
    IDLE_ETH = 2,
    DRAM = 3,
    COUNT = 4,
};

inline void cb_reserve_back(int32_t operand, int32_t num_pages) {}
// Drift: the real num_pages is an int32_t.
inline void cb_push_back(const int32_t operand, const uint32_t num_pages) {}
// Drift: tt-metal 0.78.0 has no such function.
inline void noc_async_teleport(uint64_t src_noc_addr, uint32_t dst_local_l1_addr) {}
// Drift: the real default is ProgrammableCoreType::TENSIX.
template <ProgrammableCoreType type = ProgrammableCoreType::IDLE_ETH>
inline uint32_t get_semaphore(uint32_t semaphore_id) { return semaphore_id; }
"#,
    ),
    // Drift: tt-metal 0.78.0 has no such header (its one declaration is right).
    (
        "api/dataflow/cb_wait.h",
        r#"#pragma once
#include <cstdint>
inline void cb_wait_front(int32_t operand, int32_t num_pages) {}
"#,
    ),
    (
        "api/compute/reg_api.h",
        r#"#pragma once
namespace ckernel {
inline void tile_regs_acquire() {}
}
"#,
    ),
    // The emulator's own plumbing: not a public header, never counted or compared.
    (
        "ttr_emu/plumbing.h",
        "#pragma once\nvoid emulator_only_helper(int);\n",
    ),
];

/// What the drift tree declares, counted by hand: the enum and its 5 values, 4 functions in
/// `dataflow_api.h`, 1 in `cb_wait.h`, 1 in `reg_api.h`.
const DRIFT_SYMBOLS: usize = 1 + 5 + 4 + 1 + 1;
/// The public headers of the drift tree (all but `ttr_emu/`).
const DRIFT_HEADERS: usize = 3;

fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().expect("a file in a folder")).expect("mkdir");
        std::fs::write(&path, text).expect("writes the stand-in header");
    }
}

/// The one difference about `name`, checked to carry the name and the stand-in file it is in.
fn difference<'a>(all: &'a [Difference], name: &str, file: &Path) -> &'a Difference {
    let found: Vec<&Difference> = all.iter().filter(|d| d.name == name).collect();
    assert_eq!(found.len(), 1, "one difference about `{name}`: {all:#?}");
    let d = found[0];
    assert_eq!(PathBuf::from(&d.file), file, "{d}");
    let text = d.to_string();
    assert!(
        text.contains(&format!("`{name}`")) && text.contains(&d.file),
        "the message names `{name}` and its file: {text}"
    );
    d
}

#[test]
fn drift_is_reported_with_the_name_and_the_file() -> Result<(), conformance::Error> {
    let root = paths::real_headers()?;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let stand_in = dir.path().join("tt_emu_api");
    write_tree(&stand_in, DRIFT_TREE);
    let report = api::check(&root, &stand_in)?;
    for difference in &report.differences {
        eprintln!("drift (expected): {difference}");
    }
    assert_eq!(report.headers, DRIFT_HEADERS);
    assert_eq!(report.symbols, DRIFT_SYMBOLS);
    assert_eq!(
        report.verified,
        DRIFT_SYMBOLS - 3,
        "all but the three drifted functions"
    );
    assert_eq!(report.differences.len(), 4, "{:#?}", report.differences);

    let dataflow = stand_in.join("api/dataflow/dataflow_api.h");
    let d = difference(&report.differences, "cb_push_back", &dataflow);
    assert_eq!(
        (d.kind, d.line, d.kernel_kind),
        ("function", 14, KernelKind::DataMovement)
    );
    assert!(
        d.detail.contains("stand-in `(int, unsigned int) -> void`")
            && d.detail.contains("real: function `(int, int) -> void`"),
        "{d}"
    );

    let d = difference(&report.differences, "noc_async_teleport", &dataflow);
    assert_eq!((d.kind, d.line), ("function", 16));
    assert!(d.detail.contains("not declared by the real headers"), "{d}");

    let d = difference(&report.differences, "get_semaphore", &dataflow);
    assert_eq!((d.kind, d.line), ("function", 19));
    assert!(
        d.detail
            .contains("template <ProgrammableCoreType = ProgrammableCoreType::IDLE_ETH>")
            && d.detail
                .contains("template <ProgrammableCoreType = ProgrammableCoreType::TENSIX>"),
        "{d}"
    );

    let header = stand_in.join("api/dataflow/cb_wait.h");
    let d = difference(&report.differences, "api/dataflow/cb_wait.h", &header);
    assert_eq!(d.kind, "header");
    assert!(
        d.detail
            .contains("tt-metal 0.78.0 has no tt_metal/hw/inc/api/dataflow/cb_wait.h"),
        "{d}"
    );
    Ok(())
}
