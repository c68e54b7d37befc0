//! Every checked-in kernel file, and every kernel file of the accurate-precision programs the
//! Tensix backend compiles at first use, compiles (`g++ -fsyntax-only`) against tt-metal 0.78.0's
//! real headers inside the firmware wrapper of each processor it may run on; the files checked
//! are exactly the distinct kernel texts kernel-gen emits (counted from its programs, not from the
//! checker's discovery). And a kernel calling a function 0.78.0 does not declare is reported with
//! its file and the name.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use conformance::jit::{Jit, Processor};
use conformance::kernels::{self, Report};
use conformance::{paths, Error};
use kernel_gen::program::KERNELS;
use kernel_gen::{compile, variants, Compiled, Grid, Precision};

/// Distinct kernel files per role of the programs kernel-gen emitted, as (count, count): every
/// one must pass.
fn emitted_kernels<'a>(
    programs: impl IntoIterator<Item = &'a Compiled>,
) -> BTreeMap<String, (usize, usize)> {
    let mut files = BTreeSet::new();
    let mut roles = BTreeMap::new();
    for compiled in programs {
        for kernel in compiled.program.steps.iter().flat_map(|s| &s.kernels) {
            if files.insert(kernel.source.clone()) {
                let entry: &mut (usize, usize) =
                    roles.entry(kernel.role.name().to_string()).or_default();
                entry.0 += 1;
                entry.1 += 1;
            }
        }
    }
    roles
}

/// Builds per kernel role: data-movement kernels for BRISC and NCRISC, compute for three TRISCs.
fn builds_of(roles: &BTreeMap<String, (usize, usize)>) -> usize {
    roles
        .iter()
        .map(|(role, (count, _))| {
            let processors = if role == "compute" {
                Processor::COMPUTE.len()
            } else {
                Processor::DATA_MOVEMENT.len()
            };
            count * processors
        })
        .sum()
}

/// Checks every kernel `program.json` files under `dir` list, printing each drift and the counts.
fn check_kernels_under(dir: &Path, what: &str) -> Result<Report, Error> {
    let root = paths::real_headers()?;
    let jit = Jit::new(root, paths::harness());
    let found = kernels::discover(dir)?;
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
    Ok(report)
}

/// `report` passed every build of exactly the kernels `emitted` counts.
fn assert_all_pass(report: &Report, emitted: &BTreeMap<String, (usize, usize)>) {
    assert!(
        report.failures.is_empty(),
        "{} kernel build(s) failed against the real headers, listed above",
        report.failures.len()
    );
    assert_eq!(
        &report.kernels, emitted,
        "the check did not build exactly the kernels kernel-gen emits"
    );
    assert_eq!(report.builds, builds_of(emitted));
}

/// Writes a compiled program's files under `dir/name` and its kernels under `dir/kernels`, as
/// `cargo run -p kernel-gen` writes artifacts.
fn write_program(dir: &Path, name: &str, compiled: &Compiled) {
    let program = compiled.program_files().expect("renders");
    let files = program
        .iter()
        .map(|(file, text)| (dir.join(name).join(file), text))
        .chain(
            compiled
                .sources
                .iter()
                .map(|(file, text)| (dir.join(KERNELS).join(file), text)),
        );
    for (path, text) in files {
        let parent = path.parent().expect("a file under the program's directory");
        std::fs::create_dir_all(parent).expect("creates the program's directories");
        std::fs::write(&path, text).expect("writes the artifact");
    }
}

#[test]
fn emitted_kernels_compile_against_the_real_headers() -> Result<(), Error> {
    // What the checked-in artifacts are: kernel-gen's programs (`-- --check` keeps them equal).
    let (main, nms_variants) = variants::checked_in();
    let main = compile(&main.graph, &main.params).expect("the main program compiles");
    let mut programs = vec![main];
    for variant in nms_variants(&programs[0].program) {
        programs.push(compile(&variant.graph, &variant.params).expect("an NMS variant compiles"));
    }
    let emitted = emitted_kernels(&programs);
    let sources: BTreeSet<&String> = programs.iter().flat_map(|c| c.sources.keys()).collect();
    assert_eq!(
        paths::files_under(&paths::artifacts(), ".cpp")?.len(),
        sources.len(),
        "kernel-gen/artifacts holds one .cpp per distinct emitted kernel"
    );
    let report = check_kernels_under(&paths::artifacts(), "checked-in artifacts")?;
    assert_all_pass(&report, &emitted);
    Ok(())
}

/// The accurate precision's main program and one NMS variant (Float32 activations, bf16 hi+lo
/// weights: other template branches than the checked-in port programs), written to a temporary
/// directory as `cargo run -p kernel-gen` writes artifacts.
#[test]
fn accurate_program_kernels_compile_against_the_real_headers() -> Result<(), Error> {
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
    write_program(dir.path(), &main.name, &main_compiled);
    write_program(dir.path(), &nms.name, &nms_compiled);
    let report = check_kernels_under(dir.path(), "accurate programs")?;
    assert_all_pass(&report, &emitted_kernels([&main_compiled, &nms_compiled]));
    Ok(())
}

/// The main program with weights staged in the arena (`PlanParams::stage_weights`, off in the
/// checked-in programs) on both grids: its stagers' writers (`conv2d/stage.cpp.tera` in the
/// conv writer and the pool-fused one) compile against the real headers too.
#[test]
fn staged_program_kernels_compile_against_the_real_headers() -> Result<(), Error> {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut compiled = Vec::new();
    for grid in [Grid::ETH_DISPATCH, Grid::TENSIX_DISPATCH] {
        let mut main = variants::main_program(640, 480, None, grid);
        main.params.stage_weights = true;
        let program = compile(&main.graph, &main.params).expect("compiles with staging");
        assert!(
            program
                .sources
                .values()
                .any(|s| s.contains("cb_stage_weights")),
            "{}: a kernel stages",
            main.name
        );
        write_program(dir.path(), &main.name, &program);
        compiled.push(program);
    }
    let report = check_kernels_under(dir.path(), "staged programs")?;
    assert_all_pass(&report, &emitted_kernels(&compiled));
    Ok(())
}

/// A reader that compiles and a writer that calls `get_named_compile_time_arg_val`, which
/// tt-metal 0.78.0 does not declare: only the writer fails, on both of its processors, with the
/// name in the diagnostics.
#[test]
fn a_kernel_using_an_api_absent_at_0_78_is_reported() -> Result<(), Error> {
    const READER: &str = r#"#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr uint32_t cb = get_compile_time_arg_val(0);
    cb_reserve_back(cb, 1);
    cb_push_back(cb, 1);
}
"#;
    const WRITER: &str = r#"#include "api/dataflow/dataflow_api.h"
void kernel_main() {
    constexpr uint32_t cb = get_named_compile_time_arg_val("cb");
    cb_wait_front(cb, 1);
    cb_pop_front(cb, 1);
}
"#;
    const PROGRAM: &str = r#"{"steps": [{"kernels": [
  {"name": "ok_reader", "role": "reader", "source": "step/reader.cpp", "noc": 0,
   "compile_args": [{"name": "cb", "value": 0}]},
  {"name": "new_api_writer", "role": "writer", "source": "step/writer.cpp", "noc": 1,
   "compile_args": []}
]}]}"#;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = dir.path().join("program");
    let kernels = dir.path().join(KERNELS);
    std::fs::create_dir_all(&program).expect("mkdir");
    std::fs::create_dir_all(kernels.join("step")).expect("mkdir");
    std::fs::write(program.join("program.json"), PROGRAM).expect("writes program.json");
    std::fs::write(kernels.join("step/reader.cpp"), READER).expect("writes the reader");
    let writer = kernels.join("step/writer.cpp");
    std::fs::write(&writer, WRITER).expect("writes the writer");

    let report = check_kernels_under(dir.path(), "a kernel using an API absent at 0.78")?;
    let roles = |reader: (usize, usize), writer: (usize, usize)| {
        BTreeMap::from([
            ("reader".to_string(), reader),
            ("writer".to_string(), writer),
        ])
    };
    assert_eq!(report.kernels, roles((1, 1), (1, 0)));
    assert_eq!(report.builds, 4);
    assert_eq!(report.failures.len(), 2, "the writer on BRISC and NCRISC");
    for failure in &report.failures {
        assert_eq!(failure.kernel, writer);
        let error = failure
            .diagnostics
            .lines()
            .find(|line| line.contains("error"))
            .unwrap_or_default();
        assert!(
            error.contains("get_named_compile_time_arg_val")
                && error.contains("was not declared in this scope"),
            "{}",
            failure.diagnostics
        );
        assert!(
            failure.diagnostics.contains(&writer.display().to_string()),
            "the diagnostics name the kernel's file: {}",
            failure.diagnostics
        );
    }
    Ok(())
}

/// A kernel file no `program.json` lists has no processor or compile-time args to build with.
#[test]
fn an_unlisted_kernel_is_an_error() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let program = dir.path().join("program");
    std::fs::create_dir_all(&program).expect("mkdir");
    std::fs::write(program.join("program.json"), r#"{"steps": []}"#).expect("writes");
    let stray = program.join("stray.cpp");
    std::fs::write(&stray, "void kernel_main() {}\n").expect("writes");
    match kernels::discover(dir.path()) {
        Err(Error::UnlistedKernel { path }) => assert_eq!(path, stray),
        other => panic!("expected UnlistedKernel, got {other:?}"),
    }
}
