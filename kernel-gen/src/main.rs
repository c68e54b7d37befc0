//! `cargo run -p kernel-gen` regenerates the checked-in artifacts of what the compiler lowers
//! today: the 12 convolutions and 3 max-pools of the default SuperPoint network (640×480 frame,
//! 12×10 grid), i.e. the network pruned to the two head convolutions. This is *not* the full
//! default program: resize, softmax+fold, NMS, L2 norm, candidates and sampling have no device
//! lowering yet, and the directory name says so.
//!
//! `--check` exits non-zero when a checked-in file is stale, missing or extra; `--report` prints
//! the per-node static figures (cores, CB bytes, tile ops by fidelity, NoC / DRAM bytes).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use kernel_gen::{check, kir, plan, program, report, CompileError, PlanParams};
use superpoint_graph::superpoint;

/// The one artifact set the compiler can produce today.
const ARTIFACT: &str = "superpoint_convs_640x480_12x10";

#[derive(Parser)]
#[command(about = "Regenerate (or check) the compiled kernels and dispatch program")]
struct Cli {
    /// Compare with the checked-in files instead of writing them; fail when any is stale.
    #[arg(long)]
    check: bool,
    /// Print per-node static figures.
    #[arg(long)]
    report: bool,
    /// Artifact root (default: kernel-gen/artifacts).
    #[arg(long)]
    out: Option<PathBuf>,
}

fn files(params: &PlanParams, want_report: bool) -> Result<BTreeMap<String, String>, CompileError> {
    let graph = superpoint(640, 480).pruned(&["convPb", "convDb"]);
    let plan = plan::plan(&graph, params)?;
    let kir = kir::lower(&plan)?;
    check::check(&kir, &plan.limits)?;
    if want_report {
        print!("{}", report::table(&report::report(&kir)));
    }
    Ok(program::assemble(plan.grid, &plan.buffers, &kir)?.files()?)
}

fn existing(dir: &Path, prefix: &str, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = format!("{prefix}{}", entry.file_name().to_string_lossy());
        if entry.path().is_dir() {
            existing(&entry.path(), &format!("{name}/"), out);
        } else {
            out.push(name);
        }
    }
}

fn run(cli: &Cli) -> Result<bool, String> {
    let root = cli
        .out
        .clone()
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("artifacts"));
    let dir = root.join(ARTIFACT);
    let files = files(&PlanParams::default(), cli.report).map_err(|e| e.to_string())?;
    if cli.check {
        let mut stale = Vec::new();
        for (name, text) in &files {
            if std::fs::read_to_string(dir.join(name)).ok().as_deref() != Some(text.as_str()) {
                stale.push(format!("stale or missing: {name}"));
            }
        }
        let mut found = Vec::new();
        existing(&dir, "", &mut found);
        stale.extend(
            found
                .into_iter()
                .filter(|f| !files.contains_key(f))
                .map(|f| format!("extra: {f}")),
        );
        for s in &stale {
            eprintln!("{}: {s}", dir.display());
        }
        if !stale.is_empty() {
            eprintln!("run `cargo run -p kernel-gen` to regenerate");
        }
        return Ok(stale.is_empty());
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    for (name, text) in &files {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("wrote {} files to {}", files.len(), dir.display());
    Ok(true)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("kernel-gen: {e}");
            ExitCode::FAILURE
        }
    }
}
