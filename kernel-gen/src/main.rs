//! `cargo run -p kernel-gen` regenerates the checked-in artifacts ([`kernel_gen::variants`]):
//! the whole SuperPoint network for a 640×480 frame on the 12×10 grid
//! (`superpoint_640x480_12x10`, from the u8 plane through resize, the 12 convolutions, softmax +
//! fold, NMS r = 4, candidates, L2 norm and sampling) and the NMS variants r = 1..=8
//! (`superpoint_640x480_12x10_nms<r>`), each a folder with its `program.json` and `program.rs`,
//! and the kernels they name, once per distinct text, in the shared `kernels/` folder.
//!
//! `--check` exits non-zero when a checked-in file is stale, missing or extra; `--report` prints
//! the per-node static figures (cores, CB bytes, kernel-config bytes, tile ops by fidelity, NoC /
//! DRAM bytes, the dispatch command of the semaphore and CB configuration).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use kernel_gen::program::{DeviceProgram, KERNELS};
use kernel_gen::variants::{checked_in, Variant};
use kernel_gen::{check, lower, program, report, staging, CompileError, Compiled};

#[derive(Parser)]
#[command(about = "Regenerate (or check) the compiled kernels and dispatch programs")]
struct Cli {
    /// Compare with the checked-in files instead of writing them; fail when any is stale.
    #[arg(long)]
    check: bool,
    /// Print per-node static figures of every program.
    #[arg(long)]
    report: bool,
    /// Artifact root (default: kernel-gen/artifacts).
    #[arg(long)]
    out: Option<PathBuf>,
}

/// The program of `variant`, compiled.
fn build(variant: &Variant, want_report: bool) -> Result<Compiled, CompileError> {
    let plan = staging::plan(&variant.graph, &variant.params)?;
    let kir = lower::lower(&plan)?;
    check::check(&kir, &plan.limits, plan.grid)?;
    if want_report {
        println!(
            "{} ({}x{}; the dispatch command must fit one {}-byte prefetch entry):",
            variant.name,
            plan.grid.x,
            plan.grid.y,
            plan.grid.max_prefetch_command_bytes()
        );
        print!("{}", report::table(&report::report(&kir)));
    }
    Ok(program::assemble(plan.grid, &plan.buffers, &kir)?)
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
    let mut all: BTreeMap<String, String> = BTreeMap::new();
    let mut add = |variant: &Variant| -> Result<DeviceProgram, String> {
        let at = |e: &dyn std::fmt::Display| format!("{}: {e}", variant.name);
        let compiled = build(variant, cli.report).map_err(|e| at(&e))?;
        for (name, text) in compiled.program_files().map_err(|e| at(&e))? {
            all.insert(format!("{}/{name}", variant.name), text);
        }
        for (name, text) in compiled.sources {
            let path = format!("{KERNELS}/{name}");
            if all.get(&path).is_some_and(|t| *t != text) {
                return Err(at(&format!(
                    "kernel file {path} differs from another program's"
                )));
            }
            all.insert(path, text);
        }
        Ok(compiled.program)
    };
    let (main, variants) = checked_in();
    let main = add(&main)?;
    for variant in variants(&main) {
        add(&variant)?;
    }
    if cli.check {
        let mut stale = Vec::new();
        for (name, text) in &all {
            if std::fs::read_to_string(root.join(name)).ok().as_deref() != Some(text.as_str()) {
                stale.push(format!("stale or missing: {name}"));
            }
        }
        let mut found = Vec::new();
        existing(&root, "", &mut found);
        stale.extend(
            found
                .into_iter()
                .filter(|f| !all.contains_key(f))
                .map(|f| format!("extra: {f}")),
        );
        for s in &stale {
            eprintln!("{}: {s}", root.display());
        }
        if !stale.is_empty() {
            eprintln!("run `cargo run -p kernel-gen` to regenerate");
        }
        return Ok(stale.is_empty());
    }
    if root.exists() {
        std::fs::remove_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    }
    for (name, text) in &all {
        let path = root.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    println!("wrote {} files to {}", all.len(), root.display());
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
