//! Every checked-in kernel, and every kernel of the accurate-precision programs the Tensix backend
//! compiles at first use, compiles (`g++ -fsyntax-only`) against tt-metal 0.78.0's real headers
//! inside the firmware wrapper of each processor it may run on.

use std::path::Path;

use conformance::jit::Jit;
use conformance::{kernels, paths};
use kernel_gen::{compile, variants, Grid, Precision};

/// Checks every kernel `program.json` files under `dir` list, printing each drift and the counts.
fn check_kernels_under(dir: &Path, what: &str) -> Result<(), conformance::Error> {
    let root = paths::real_headers()?;
    let jit = Jit::new(root, paths::harness());
    let found = kernels::discover(dir)?;
    assert!(!found.is_empty(), "no kernels under {}", dir.display());
    let jobs = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1);
    let report = kernels::check(&jit, &found, "g++", jobs)?;
    for failure in &report.failures {
        let errors: Vec<&str> = failure
            .diagnostics
            .lines()
            .filter(|line| line.contains("error"))
            .take(8)
            .collect();
        eprintln!(
            "drift: {} does not compile for {} against the real headers:\n  {}",
            failure
                .kernel
                .strip_prefix(paths::workspace())
                .unwrap_or(&failure.kernel)
                .display(),
            failure.processor.name(),
            errors.join("\n  ")
        );
    }
    for (role, (total, passed)) in &report.kernels {
        eprintln!(
            "real-header syntax check ({what}): {passed} of {total} {role} kernels pass ({} builds in all)",
            report.builds
        );
    }
    assert!(
        report.failures.is_empty(),
        "{} kernel build(s) failed against the real headers, listed above",
        report.failures.len()
    );
    Ok(())
}

#[test]
fn emitted_kernels_compile_against_the_real_headers() -> Result<(), conformance::Error> {
    check_kernels_under(&paths::artifacts(), "checked-in artifacts")
}

/// The accurate precision's main program and one NMS variant (Float32 activations, bf16 hi+lo
/// weights: other template branches than the checked-in port programs), written to a temporary
/// directory as `cargo run -p kernel-gen` writes artifacts.
#[test]
fn accurate_program_kernels_compile_against_the_real_headers() -> Result<(), conformance::Error> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut main = variants::main_program(640, 480, None, Grid::ETH_DISPATCH);
    main.params.precision = Precision::ACCURATE;
    let main_compiled = compile(&main.graph, &main.params).expect("compiles at accurate");
    let mut nms = variants::nms_program(
        640,
        480,
        2,
        Grid::ETH_DISPATCH,
        variants::shared_l1(&main_compiled.program),
    );
    nms.params.precision = Precision::ACCURATE;
    let nms_compiled = compile(&nms.graph, &nms.params).expect("compiles at accurate");
    for (variant, compiled) in [(main, main_compiled), (nms, nms_compiled)] {
        for (file, text) in compiled.files().expect("renders") {
            let path = dir.path().join(&variant.name).join(file);
            let parent = path.parent().expect("a file under the variant's directory");
            std::fs::create_dir_all(parent).expect("creates the variant's directories");
            std::fs::write(&path, text).expect("writes the artifact");
        }
    }
    check_kernels_under(dir.path(), "accurate programs")
}
