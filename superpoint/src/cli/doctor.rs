//! `superpoint doctor`: one command that tells a card owner whether their p150a (or, on the
//! default build, the emulator) runs SuperPoint correctly. It opens the device with the dispatch
//! detection (`tt_runtime::install`) and prints what it found, then runs each check and prints
//! `PASS` or `FAIL` with its figures:
//!
//! * DRAM and per-core L1 round trips (`tt_runtime::selftest`);
//! * a known-answer program compared byte for byte with the emulator's output for the same
//!   seeded inputs (the golden checked in with `tt-runtime`), and its trace replay;
//! * the full 640×480 frame on the Tensix backend against the CPU backend with DESIGN §5's gates
//!   ([`superpoint::metrics`]; the keypoint-F1 gate applies to the accurate precision, which
//!   meets it; the port's bf16 storage bounds its F1 below the gate on random weights, so it is
//!   printed there), and a second frame, replayed from the trace the first captured, equal to it
//!   bit for bit;
//! * with tt-metal's device profiler on, each program's measured device time (the emulator has
//!   no profiler and says so).
//!
//! It exits non-zero when any check fails.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use clap::Args;
use superpoint::backend::tensix::{TensixBackend, TensixPrecision};
use superpoint::backend::DenseMaps;
use superpoint::error::message_chain;
use superpoint::metrics::{keypoint_f1, pcc, DESCRIPTOR_PCC_GATE, F1_GATE, SCORE_PCC_GATE};
use superpoint::{Backend, Detection, Input, Options, SuperPoint};
use tt_runtime::install::Source;
use tt_runtime::selftest::{self, Comparison, KNOWN_ANSWER};
use tt_runtime::{Device, Error as RuntimeError, Installation};

use super::model_table::{self, ModeledRun};
use super::ModelArgs;

#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The image of the full-frame check; default: a generated 640x480 frame.
    #[arg(long, value_name = "PATH")]
    image: Option<PathBuf>,
    /// The known-answer golden to compare with, instead of the one built in (the emulator's
    /// output, `tt-runtime/selftest/known_answer.bin`).
    #[arg(long, value_name = "PATH")]
    golden: Option<PathBuf>,
    /// The modeled time per program (`superpoint bench --backend tensix --write-model PATH` on an
    /// emulator build of the same tree), printed beside the profiler's measurements on a card.
    #[arg(long = "model", value_name = "PATH")]
    modeled: Option<PathBuf>,
    /// Only the device checks: skip the full frame and its replay (tens of seconds on the
    /// emulator, where the first frame of a grid also compiles its kernels).
    #[arg(long)]
    quick: bool,
}

/// Bytes of the DRAM round trip: 16 MiB over every bank.
const DRAM_BYTES: u64 = 16 << 20;
/// DRAM page size of the round trip.
const DRAM_PAGE: u32 = 2048;
/// Bytes per core of the L1 round trip.
const L1_BYTES: u32 = 256 << 10;
/// Seed of the round-trip patterns.
const PATTERN_SEED: u64 = 0xd0c7_0001;

/// The outcome of one check: whether it passed and the figures that say so.
struct Outcome {
    passed: bool,
    figures: String,
}

impl Outcome {
    fn new(passed: bool, figures: String) -> Self {
        Self { passed, figures }
    }
}

/// Counts and prints the checks.
#[derive(Default)]
struct Report {
    passed: usize,
    failed: usize,
}

impl Report {
    /// Prints a check's line; an error is a failure with its message.
    fn check(&mut self, name: &str, outcome: anyhow::Result<Outcome>) -> bool {
        let (passed, figures) = match outcome {
            Ok(o) => (o.passed, o.figures),
            Err(e) => (false, format!("error: {e:#}")),
        };
        if passed {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        println!("{} {name}: {figures}", if passed { "PASS" } else { "FAIL" });
        passed
    }

    fn note(kind: &str, name: &str, text: &str) {
        println!("{kind} {name}: {text}");
    }
}

/// `N of M bytes differ` (with the first offset when any do).
fn differing(c: &Comparison) -> String {
    match c.first {
        None => format!("0 of {} bytes differ", c.bytes),
        Some(at) => format!(
            "{} of {} bytes differ, the first at byte {at}",
            c.differing, c.bytes
        ),
    }
}

pub fn run(args: &DoctorArgs) -> anyhow::Result<()> {
    if args.model.backend == Backend::Cpu {
        bail!("doctor checks a Tensix device; run it with --backend tensix (the emulator without a card)");
    }
    let golden = match &args.golden {
        Some(path) => std::fs::read(path)
            .with_context(|| format!("cannot read the golden {}", path.display()))?,
        None => selftest::GOLDEN.to_vec(),
    };
    let modeled = args.modeled.as_deref().map(model_table::read).transpose()?;
    let installation = Installation::of_this_build()?;
    println!("superpoint doctor {}", env!("CARGO_PKG_VERSION"));
    match (&installation.source, installation.version()) {
        (Source::Emulator, _) => println!("tt-metal: {}", installation.describe_source()),
        (_, Ok(version)) => println!("tt-metal: {version}, {}", installation.describe_source()),
        (_, Err(why)) => println!(
            "tt-metal: version unknown ({why}), {}",
            installation.describe_source()
        ),
    }
    println!(
        "ETH-dispatch patch: {}; {}",
        match installation.eth_dispatch.name() {
            "patched" => "detected",
            "stock" => "not detected",
            other => other,
        },
        installation.eth_dispatch
    );
    let mut report = Report::default();
    let model = match args.model.load() {
        Ok(model) => model,
        Err(e) => {
            report.check("open", Err(e));
            return finish(&report);
        }
    };
    let Some(tensix) = model.tensix() else {
        report.check(
            "open",
            Err(anyhow::anyhow!(
                "no Tenstorrent card: this build drives the emulator; run doctor with --backend tensix to check it"
            )),
        );
        return finish(&report);
    };
    if !report_open(&mut report, tensix) {
        return finish(&report);
    }
    tensix.with_device(|dev| device_checks(&mut report, dev, &golden));
    if args.quick {
        Report::note(
            "SKIP",
            "frame",
            "--quick: the full frame, its replay and the profiler were not run",
        );
    } else {
        frame_checks(&mut report, &model, tensix, args, modeled.as_deref());
    }
    finish(&report)
}

/// The open check: the dispatch asked for and obtained, the grid, and the fallback warning.
fn report_open(report: &mut Report, tensix: &TensixBackend) -> bool {
    let s = tensix.dispatch();
    if let Some(w) = &s.warning {
        Report::note("WARN", "dispatch", w);
    }
    let outcome = tensix.with_device(Device::info).map(|info| {
        Outcome::new(
            true,
            format!(
                "{} dispatch asked, {} obtained; {}x{} compute grid ({} cores), {} KiB L1 per core, {} DRAM banks, {} runtime",
                s.requested,
                s.dispatch,
                info.grid_x,
                info.grid_y,
                info.grid_x * info.grid_y,
                info.l1_size / 1024,
                info.dram_banks,
                Device::backend_name()
            ),
        )
    });
    report.check("open", outcome.map_err(Into::into))
}

fn finish(report: &Report) -> anyhow::Result<()> {
    println!(
        "doctor: {} checks, {} passed, {} failed",
        report.passed + report.failed,
        report.passed,
        report.failed
    );
    if report.failed > 0 {
        bail!("{} of the doctor's checks failed", report.failed);
    }
    Ok(())
}

/// DRAM and L1 round trips, the known-answer program and its trace replay.
fn device_checks(report: &mut Report, dev: &Device, golden: &[u8]) {
    report.check(
        "dram round trip",
        selftest::dram_round_trip(dev, DRAM_BYTES, DRAM_PAGE, PATTERN_SEED)
            .map(|c| {
                Outcome::new(
                    c.equal(),
                    format!(
                        "{} MiB in {} B pages over the banks, a pattern and its complement: {}",
                        DRAM_BYTES >> 20,
                        DRAM_PAGE,
                        differing(&c)
                    ),
                )
            })
            .map_err(Into::into),
    );
    report.check(
        "l1 round trip",
        selftest::l1_round_trip(dev, L1_BYTES, PATTERN_SEED)
            .map(|r| {
                let bad = r
                    .first_bad_core
                    .map(|c| format!(", the first bad core ({}, {})", c.x, c.y))
                    .unwrap_or_default();
                Outcome::new(
                    r.comparison.equal(),
                    format!(
                        "{} cores x {} KiB, a pattern of each core's own and its complement: {}{bad}",
                        r.cores,
                        L1_BYTES >> 10,
                        differing(&r.comparison)
                    ),
                )
            })
            .map_err(Into::into),
    );
    let run = selftest::run_known_answer(dev);
    let shape = format!(
        "grid matmul on {}x{} cores, K = {}, seeded integer operands",
        KNOWN_ANSWER.cols,
        KNOWN_ANSWER.rows,
        KNOWN_ANSWER.kt * 32
    );
    report.check(
        "known-answer program",
        run.as_ref()
            .map(|r| {
                let c = Comparison::of(&r.direct, golden);
                Outcome::new(
                    c.equal(),
                    format!("{shape} against the emulator's golden: {}", differing(&c)),
                )
            })
            .map_err(|e| anyhow::anyhow!(message_chain(e))),
    );
    report.check(
        "trace replay (known answer)",
        run.as_ref()
            .map(|r| {
                let c = Comparison::of(&r.replay, &r.direct);
                Outcome::new(
                    c.equal(),
                    format!(
                        "replayed trace against the direct launch: {}",
                        differing(&c)
                    ),
                )
            })
            .map_err(|e| anyhow::anyhow!(message_chain(e))),
    );
}

/// A deterministic 640×480 test frame: smooth shading, a grid of bright blocks (corners to
/// detect) and a diagonal stripe.
fn test_frame() -> (Vec<u8>, usize, usize) {
    let (w, h) = (640usize, 480usize);
    let data = (0..w * h)
        .map(|i| {
            let (x, y) = ((i % w) as f64, (i / w) as f64);
            let shade = 90.0 + 50.0 * (x / 53.0).sin() * (y / 41.0).cos();
            let block = if (x as usize / 40 + y as usize / 40).is_multiple_of(3)
                && (x as usize % 40) < 28
            {
                80.0
            } else {
                0.0
            };
            let stripe = if ((x - y).abs() as usize) < 12 {
                60.0
            } else {
                0.0
            };
            (shade + block + stripe).clamp(0.0, 255.0) as u8
        })
        .collect();
    (data, w, h)
}

/// Bits of f32 values, to compare bit for bit.
fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// The full frame against the CPU backend, its trace replay, and the profiler.
fn frame_checks(
    report: &mut Report,
    model: &SuperPoint,
    tensix: &TensixBackend,
    args: &DoctorArgs,
    modeled: Option<&[ModeledRun]>,
) {
    let options = Options::default();
    let frame = test_frame();
    let input = || -> Input<'_> {
        match &args.image {
            Some(path) => Input::from(path),
            None => Input::plane(frame.0.as_slice(), frame.1, frame.2),
        }
    };
    let reference = || -> anyhow::Result<(Detection, DenseMaps)> {
        let mut cpu = SuperPoint::builder().backend(Backend::Cpu);
        if let Some(path) = &args.model.weights {
            cpu = cpu.weights(path);
        }
        Ok(cpu.build()?.detect_with_maps(input(), &options)?)
    };
    let reference = reference();
    // Drops what the profiler holds of the device checks' programs, so that the next read
    // holds only the frame's; without a profiler there is nothing to drop.
    tensix.with_device(Device::profiler_times).ok();
    let start = Instant::now();
    let first = model.detect_with_maps(input(), &options);
    let seconds = start.elapsed().as_secs_f64();
    let precision = tensix.config().precision;
    report.check(
        "frame vs cpu",
        match (&first, &reference) {
            (Ok((detection, device)), Ok((cpu_detection, cpu))) => gates(
                device,
                cpu,
                [detection.len(), cpu_detection.len()],
                precision,
                seconds,
            ),
            (Err(e), _) => Err(anyhow::anyhow!(
                "the Tensix backend failed: {}",
                message_chain(e)
            )),
            (_, Err(e)) => Err(anyhow::anyhow!("the CPU backend failed: {e:#}")),
        },
    );
    profiler(report, tensix, modeled);
    let second = model.detect_with_maps(input(), &options);
    report.check(
        "trace replay (frame)",
        match (&first, &second) {
            (Ok(direct), Ok(replay)) => Ok(replay_equal(direct, replay)),
            (Err(e), _) | (_, Err(e)) => Err(anyhow::anyhow!(message_chain(e))),
        },
    );
}

/// DESIGN §5's gates on the device's maps against the CPU backend's, with each side's keypoint
/// count.
fn gates(
    device: &DenseMaps,
    cpu: &DenseMaps,
    keypoints: [usize; 2],
    precision: TensixPrecision,
    seconds: f64,
) -> anyhow::Result<Outcome> {
    let score = pcc(&device.scores.data, &cpu.scores.data)?;
    let descriptor = pcc(&device.descriptors.data, &cpu.descriptors.data)?;
    let f1 = keypoint_f1(&device.nms, &cpu.nms)?;
    let f1_gated = precision == TensixPrecision::Accurate;
    let passed = score >= SCORE_PCC_GATE
        && descriptor >= DESCRIPTOR_PCC_GATE
        && (!f1_gated || f1 >= F1_GATE);
    let f1_note = if f1_gated {
        format!("(gate >= {F1_GATE})")
    } else {
        format!("(gate >= {F1_GATE} at --precision accurate; the port's bf16 storage bounds it below on random weights, see README)")
    };
    Ok(Outcome::new(
        passed,
        format!(
            "{} precision, {}x{}: score PCC {score:.6} (gate >= {SCORE_PCC_GATE}), descriptor PCC {descriptor:.6} (gate >= {DESCRIPTOR_PCC_GATE}), keypoint F1 {f1:.4} {f1_note}; {} keypoints on the device, {} on the CPU; {seconds:.1} s",
            precision.name(),
            device.scores.width,
            device.scores.height,
            keypoints[0],
            keypoints[1]
        ),
    ))
}

/// The dense maps that differ between two runs, bit for bit.
fn differing_maps(a: &DenseMaps, b: &DenseMaps) -> Vec<&'static str> {
    [
        ("score map", &a.scores, &b.scores),
        ("NMS map", &a.nms, &b.nms),
        ("descriptor map", &a.descriptors, &b.descriptors),
    ]
    .into_iter()
    .filter(|(_, x, y)| bits(&x.data) != bits(&y.data))
    .map(|(name, _, _)| name)
    .collect()
}

/// The replayed frame against the first (direct) one, bit for bit.
fn replay_equal(
    (direct, direct_maps): &(Detection, DenseMaps),
    (replay, replay_maps): &(Detection, DenseMaps),
) -> Outcome {
    let mut differ = differing_maps(direct_maps, replay_maps);
    if direct.keypoints != replay.keypoints || bits(&direct.scores) != bits(&replay.scores) {
        differ.push("keypoints");
    }
    let descriptors = |d: &Detection| d.descriptors.as_deref().map(bits);
    if descriptors(direct) != descriptors(replay) {
        differ.push("descriptors");
    }
    let values = direct_maps.scores.data.len()
        + direct_maps.nms.data.len()
        + direct_maps.descriptors.data.len();
    if differ.is_empty() {
        Outcome::new(
            true,
            format!(
                "the second frame (replayed from the captured trace) equals the first (direct launches) bit for bit: {values} map values, {} keypoints and their descriptors",
                direct.len()
            ),
        )
    } else {
        Outcome::new(
            false,
            format!(
                "the replayed frame differs from the direct one in: {}",
                differ.join(", ")
            ),
        )
    }
}

/// The device profiler's time for each program of the first frame, when there is a profiler,
/// beside the model's estimate (v2, the timeline) and floor (v1, the roofline) when `--model`
/// gave one for this grid and precision.
fn profiler(report: &mut Report, tensix: &TensixBackend, modeled: Option<&[ModeledRun]>) {
    let times = match tensix.with_device(Device::profiler_times) {
        Ok(times) => times,
        Err(RuntimeError::Unsupported(why)) => {
            Report::note(
                "INFO",
                "profiler",
                &format!("no device profiler: {why}; `superpoint bench --backend tensix` prints the modeled device time per program"),
            );
            return;
        }
        Err(e) => {
            report.check("profiler", Err(e.into()));
            return;
        }
    };
    let info = tensix.info();
    let nodes = info
        .programs
        .first()
        .map(|p| p.nodes.clone())
        .unwrap_or_default();
    let run = modeled.and_then(|runs| {
        runs.iter().find(|r| {
            r.grid == info.grid.name()
                && r.precision == info.precision.name()
                && r.frame == [640, 480]
        })
    });
    let model_note = match (modeled, run) {
        (None, _) => "no --model given: `superpoint bench --backend tensix --write-model PATH` on an emulator build of this tree writes the model's estimate per program".to_string(),
        (Some(_), None) => format!("the --model file has no 640x480 run on {} at the {} precision", info.grid.name(), info.precision.name()),
        (Some(_), Some(r)) => format!(
            "modeled {:.1} µs in total by the timeline model (v2, the estimate), {:.1} µs by the roofline (v1, the floor); models, from the emulator's counters",
            r.programs.iter().map(|p| p.timeline_us).sum::<f64>(),
            r.programs.iter().map(|p| p.modeled_us).sum::<f64>()
        ),
    };
    for (i, t) in times.iter().enumerate() {
        let node = nodes.get(i).map_or("?", String::as_str);
        let model = run
            .and_then(|r| r.programs.get(i))
            .filter(|p| p.node == node)
            .map(|p| {
                format!(
                    "modeled v2 {:>8.1} µs (v1 floor {:>7.1} µs)",
                    p.timeline_us, p.modeled_us
                )
            })
            .unwrap_or_default();
        println!(
            "     program {i:>2} {node:<18} measured {:>9.1} µs  {model}",
            t.device_ns as f64 / 1e3
        );
    }
    let total: u64 = times.iter().map(|t| t.device_ns).sum();
    report.check(
        "profiler",
        Ok(Outcome::new(
            times.len() == nodes.len(),
            format!(
                "{} programs measured for the {} of the main program, {:.1} µs in total; {model_note}",
                times.len(),
                nodes.len(),
                total as f64 / 1e3
            ),
        )),
    );
}

#[cfg(test)]
mod tests {
    use superpoint_graph::Tensor;

    use super::*;

    /// Maps of a 256x256 frame (sparse enough that 500 points rarely fall within 2 px of each
    /// other by chance) and 4x4 cells whose values follow `f(i)`.
    fn maps(f: impl Fn(usize) -> f32) -> DenseMaps {
        let map =
            |c, h, w| Tensor::from_vec(c, h, w, (0..c * h * w).map(&f).collect()).expect("shape");
        DenseMaps {
            scores: map(1, 256, 256),
            nms: map(1, 256, 256),
            descriptors: map(8, 4, 4),
        }
    }

    fn wave(i: usize) -> f32 {
        ((i * 7919) % 65537) as f32 / 65537.0
    }

    #[test]
    fn the_gates_pass_equal_maps_and_fail_far_ones() {
        let cpu = maps(wave);
        for precision in [TensixPrecision::Port, TensixPrecision::Accurate] {
            let same = gates(&cpu, &cpu, [5, 5], precision, 1.0).expect("defined");
            assert!(same.passed, "{}", same.figures);
            assert!(
                same.figures.contains("score PCC 1.000000"),
                "{}",
                same.figures
            );
        }
        // Reversed scores: PCC far below the gate at either precision.
        let reversed = maps(|i| 1.0 - wave(i));
        let far = gates(&reversed, &cpu, [5, 5], TensixPrecision::Port, 1.0).expect("defined");
        assert!(!far.passed, "{}", far.figures);
    }

    #[test]
    fn the_f1_gate_applies_at_the_accurate_precision_only() {
        let cpu = maps(wave);
        // Scores and descriptors equal (PCC gates met); the NMS map moved 10 px to the right, so
        // its top 500 pixels are mostly more than 2 px from the reference's.
        let mut device = maps(wave);
        device.nms = Tensor::from_vec(
            1,
            256,
            256,
            (0..65536)
                .map(|i| wave(i / 256 * 256 + (i % 256 + 246) % 256))
                .collect(),
        )
        .expect("shape");
        let port = gates(&device, &cpu, [5, 5], TensixPrecision::Port, 1.0).expect("defined");
        let accurate =
            gates(&device, &cpu, [5, 5], TensixPrecision::Accurate, 1.0).expect("defined");
        assert!(port.passed, "{}", port.figures);
        assert!(!accurate.passed, "{}", accurate.figures);
    }

    #[test]
    fn a_single_flipped_bit_makes_maps_differ() {
        let a = maps(wave);
        let mut b = maps(wave);
        assert!(differing_maps(&a, &b).is_empty());
        b.descriptors.data[3] = f32::from_bits(b.descriptors.data[3].to_bits() ^ 1);
        assert_eq!(differing_maps(&a, &b), vec!["descriptor map"]);
    }
}
