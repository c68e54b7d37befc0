//! Every checked-in kernel compiles (`g++ -fsyntax-only`) against tt-metal 0.78.0's real headers
//! inside the firmware wrapper of each processor it may run on.

use conformance::jit::Jit;
use conformance::{kernels, paths};

#[test]
fn emitted_kernels_compile_against_the_real_headers() -> Result<(), conformance::Error> {
    let root = paths::real_headers()?;
    let jit = Jit::new(root, paths::harness());
    let found = kernels::discover(&paths::artifacts())?;
    assert!(!found.is_empty(), "no kernels under kernel-gen/artifacts");
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
            "real-header syntax check: {passed} of {total} {role} kernels pass ({} builds in all)",
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
