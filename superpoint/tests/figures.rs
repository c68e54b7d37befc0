//! The deterministic figures, pinned: the modeled device time of a 640×480 frame per grid and
//! precision by both cost models (`superpoint bench --backend tensix`: `kernel_gen::model` over
//! the emulator's counters, v2 the timeline and v1 the roofline; a model, never a measurement), the programs the backend compiles (steps, kernels, L1
//! arena and DRAM bytes), and the sizes of the checked-in artifacts and snapshots.
//!
//! These are regression values, not references (correctness is tested against the reference
//! evaluator elsewhere): they make a change that moves a figure visible. Every expected value is
//! in the constants right below. A change meant to move one (a compiler restructuring, a cost
//! model change, a template edit) updates them here, and the README's figures, in the same commit;
//! a change not meant to move one has found a regression. Modeled times are compared at the
//! bench's printed resolution (0.1 µs): they are exact up to its rounding.

use std::path::Path;
use std::process::Command;

use kernel_gen::compile;
use superpoint::backend::tensix::{main_variant, TensixGrid, TensixPrecision};

/// Modeled device time of one 640×480 frame as `superpoint bench --backend tensix` prints it.
struct Modeled {
    grid: &'static str,
    precision: &'static str,
    /// By the timeline model (v2, the estimate), µs.
    timeline_us: f64,
    /// Each step at its slowest stage alone, by v2 (no start-up, no first block), µs.
    stage_bound_us: f64,
    /// By the roofline (v1, the floor), with the scalar RISC-V work (its run-time loops charged
    /// with the frame's counts), µs.
    total_us: f64,
    /// Without the scalar RISC-V work, µs.
    without_scalar_us: f64,
    /// With the run-time loops at their bound (every candidate region full), µs.
    at_bound_us: f64,
    /// Programs launched per frame.
    programs: usize,
}

const MODELED: [Modeled; 4] = [
    Modeled {
        grid: "12x10",
        precision: "port",
        timeline_us: 305.9,
        stage_bound_us: 264.8,
        total_us: 247.2,
        without_scalar_us: 239.9,
        at_bound_us: 367.6,
        programs: 16,
    },
    Modeled {
        grid: "11x10",
        precision: "port",
        timeline_us: 335.0,
        stage_bound_us: 295.4,
        total_us: 272.9,
        without_scalar_us: 264.9,
        at_bound_us: 393.3,
        programs: 17,
    },
    Modeled {
        grid: "12x10",
        precision: "accurate",
        timeline_us: 2109.9,
        stage_bound_us: 2071.0,
        total_us: 2000.6,
        without_scalar_us: 1342.9,
        at_bound_us: 2119.8,
        programs: 20,
    },
    Modeled {
        grid: "11x10",
        precision: "accurate",
        timeline_us: 2197.0,
        stage_bound_us: 2147.3,
        total_us: 2079.2,
        without_scalar_us: 1327.6,
        at_bound_us: 2198.7,
        programs: 20,
    },
];

/// The main 640×480 program the Tensix backend compiles for a grid and precision.
struct ProgramFigures {
    grid: TensixGrid,
    precision: TensixPrecision,
    steps: usize,
    kernels: usize,
    /// Bytes per core of the L1 arena.
    l1_arena: u32,
    /// Bytes of every buffer in DRAM (outside the L1 arena, or staged: a stager copies it into
    /// its arena slot each frame), allocated at their bound (the descriptor rows of full
    /// candidate regions dominate).
    dram: u64,
}

const PROGRAMS: [ProgramFigures; 4] = [
    ProgramFigures {
        grid: TensixGrid::Eth12x10,
        precision: TensixPrecision::Port,
        steps: 16,
        kernels: 47,
        l1_arena: 409_600,
        dram: 380_516_864,
    },
    ProgramFigures {
        grid: TensixGrid::Tensix11x10,
        precision: TensixPrecision::Port,
        steps: 17,
        kernels: 50,
        l1_arena: 448_512,
        dram: 349_059_584,
    },
    ProgramFigures {
        grid: TensixGrid::Eth12x10,
        precision: TensixPrecision::Accurate,
        steps: 20,
        kernels: 59,
        l1_arena: 77_888,
        dram: 628_261_888,
    },
    ProgramFigures {
        grid: TensixGrid::Tensix11x10,
        precision: TensixPrecision::Accurate,
        steps: 20,
        kernels: 59,
        l1_arena: 172_096,
        dram: 579_109_888,
    },
];

/// Files under a checked-in folder: how many, and their bytes.
struct Files {
    folder: &'static str,
    files: usize,
    bytes: u64,
}

/// `kernel-gen/artifacts` (the shipped program and its NMS variants) and `snapshots/` (insta).
const FOLDERS: [Files; 2] = [
    Files {
        folder: "kernel-gen/artifacts",
        files: 50,
        bytes: 1_331_540,
    },
    Files {
        folder: "snapshots",
        files: 48,
        bytes: 640_336,
    },
];

/// What a failure says.
const UPDATE: &str = "if the change is meant to move this figure, update it in \
                      superpoint/tests/figures.rs (and the README's figures) in the same commit; \
                      otherwise it is a regression";

fn workspace() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

/// The number right after `prefix` in `text`.
fn number_after(text: &str, prefix: &str) -> f64 {
    let at = text
        .find(prefix)
        .unwrap_or_else(|| panic!("no `{prefix}` in:\n{text}"));
    let rest = &text[at + prefix.len()..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    rest[..end]
        .parse()
        .unwrap_or_else(|e| panic!("`{prefix}` is not followed by a number ({e}):\n{text}"))
}

/// Runs the bench at `precision` and checks both grids' figures against [`MODELED`], and the
/// per-program JSON (`--write-model`, what `doctor --model` reads) against the printed totals.
fn bench_matches(precision: &str) {
    let weights = workspace().join("tests/fixtures/weights/random-seed1.safetensors");
    let dir = tempfile::tempdir().expect("tempdir");
    let model = dir.path().join("model.json");
    let out = Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .arg("bench")
        .arg("--weights")
        .arg(&weights)
        .args([
            "--backend",
            "tensix",
            "--precision",
            precision,
            "--write-model",
        ])
        .arg(&model)
        .output()
        .expect("runs superpoint bench");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    let runs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&model).expect("model written")).expect("JSON");
    let runs = runs.as_array().expect("a list of runs");
    let mut problems = Vec::new();
    for want in MODELED.iter().filter(|m| m.precision == precision) {
        let header = format!(
            "== 640x480 on the {} grid at the {} precision: MODELED device time",
            want.grid, want.precision
        );
        let block = text
            .split("\n== ")
            .map(|b| b.trim_start_matches("== "))
            .find(|b| format!("== {b}").starts_with(&header))
            .unwrap_or_else(|| panic!("no `{header}` block in:\n{text}"));
        assert!(block.contains("conv1b"), "per-node rows: {block}");
        let programs = number_after(block, "µs without, over ") as usize;
        let got = [
            (
                "v2 total",
                number_after(block, "timeline (v2) total: "),
                want.timeline_us,
            ),
            (
                "v2 stage bound",
                number_after(block, "no start-up, no first block): "),
                want.stage_bound_us,
            ),
            (
                "v1 total",
                number_after(block, "modeled total: "),
                want.total_us,
            ),
            (
                "without the scalar work",
                number_after(block, "with the scalar RISC-V work (a lower bound), "),
                want.without_scalar_us,
            ),
            (
                "with the run-time loops at their bound",
                number_after(block, "the total is "),
                want.at_bound_us,
            ),
        ];
        for (what, got, want_us) in got {
            if (got - want_us).abs() > 0.05 {
                problems.push(format!(
                    "{} {}: modeled {what} {got:.1} µs, pinned {want_us:.1} µs",
                    want.grid, want.precision
                ));
            }
        }
        let run = runs
            .iter()
            .find(|r| r["grid"] == want.grid && r["precision"] == want.precision)
            .unwrap_or_else(|| panic!("no {} {} run in the model JSON", want.grid, precision));
        let listed = run["programs"].as_array().expect("programs");
        let sum: f64 = listed
            .iter()
            .map(|p| p["modeled_us"].as_f64().expect("µs"))
            .sum();
        if (sum - number_after(block, "modeled total: ")).abs() > 0.06 || listed.len() != programs {
            problems.push(format!(
                "{} {}: the model JSON lists {} programs summing to {sum:.2} µs, the bench prints {programs} and its total",
                want.grid,
                want.precision,
                listed.len()
            ));
        }
        let v2: f64 = listed
            .iter()
            .map(|p| p["timeline_us"].as_f64().expect("v2 µs"))
            .sum();
        let v2_total = number_after(block, "timeline (v2) total: ");
        if (v2 - v2_total).abs() > 0.06 {
            problems.push(format!(
                "{} {}: the model JSON's v2 programs sum to {v2:.2} µs, the bench prints {v2_total:.1}",
                want.grid, want.precision
            ));
        }
        if v2_total < number_after(block, "modeled total: ") - programs as f64 {
            problems.push(format!(
                "{} {}: v2 {v2_total:.1} µs is below the roofline floor less 1 µs a program (v2 dispatches in 1 µs, v1 launches in 2)",
                want.grid, want.precision
            ));
        }
        let closing = format!("total {}: v2 ", want.grid);
        let line = text
            .lines()
            .find(|l| l.starts_with(&closing))
            .unwrap_or_else(|| panic!("no `{closing}` line in:\n{text}"));
        let (v2_closing, v1_closing) = (
            number_after(line, &closing),
            number_after(line, " µs, roofline "),
        );
        if v2_closing != v2_total || v1_closing != number_after(block, "modeled total: ") {
            problems.push(format!(
                "{} {}: the closing line says v2 {v2_closing} µs, roofline {v1_closing} µs; the block's totals differ",
                want.grid, want.precision
            ));
        }
        if programs != want.programs {
            problems.push(format!(
                "{} {}: {programs} programs per frame, pinned {}",
                want.grid, want.precision, want.programs
            ));
        }
    }
    // The last two lines: the totals per grid, 11x10 then 12x10.
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    for (line, grid) in last.iter().zip(["12x10", "11x10"]) {
        let prefix = format!("total {grid}: v2 ");
        if !(line.starts_with(&prefix) && line.contains(" µs, roofline ") && line.ends_with(" µs"))
        {
            problems.push(format!("the bench's closing line for {grid} is `{line}`"));
        }
    }
    assert!(problems.is_empty(), "{}; {UPDATE}", problems.join("\n"));
}

#[test]
fn modeled_device_time_at_the_port_precision() {
    bench_matches("port");
}

#[test]
fn modeled_device_time_at_the_accurate_precision() {
    bench_matches("accurate");
}

#[test]
fn compiled_program_figures() {
    let mut problems = Vec::new();
    for want in &PROGRAMS {
        let variant = main_variant((640, 480), None, want.grid.grid(), want.precision);
        let program = compile(&variant.graph, &variant.params)
            .expect("compiles")
            .program;
        let kernels = program.steps.iter().map(|s| s.kernels.len()).sum();
        let dram = program
            .buffers
            .iter()
            .filter(|b| b.l1_offset.is_none() || b.staged_by.is_some())
            .map(|b| u64::from(b.pages) * u64::from(b.page_bytes))
            .sum();
        let got = (program.steps.len(), kernels, program.l1_arena, dram);
        let pinned = (want.steps, want.kernels, want.l1_arena, want.dram);
        if got != pinned {
            problems.push(format!(
                "{} {}: (steps, kernels, L1 arena bytes, DRAM bytes) {got:?}, pinned {pinned:?}",
                want.grid.name(),
                want.precision.name()
            ));
        }
    }
    assert!(problems.is_empty(), "{}; {UPDATE}", problems.join("\n"));
}

/// (files, bytes) under `dir`, recursively.
fn count_files(dir: &Path) -> (usize, u64) {
    let mut total = (0, 0);
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            let (files, bytes) = count_files(&path);
            total = (total.0 + files, total.1 + bytes);
        } else {
            let bytes = std::fs::metadata(&path).expect("metadata").len();
            total = (total.0 + 1, total.1 + bytes);
        }
    }
    total
}

#[test]
fn checked_in_artifact_and_snapshot_sizes() {
    let mut problems = Vec::new();
    for want in &FOLDERS {
        let got = count_files(&workspace().join(want.folder));
        if got != (want.files, want.bytes) {
            problems.push(format!(
                "{}: {} files of {} bytes, pinned {} files of {} bytes",
                want.folder, got.0, got.1, want.files, want.bytes
            ));
        }
    }
    assert!(problems.is_empty(), "{}; {UPDATE}", problems.join("\n"));
}
