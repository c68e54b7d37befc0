//! The Tensix backend on the tt-runtime emulator, through the public API, against the f32
//! reference evaluator of `superpoint-graph` with DESIGN §5's metrics and gates
//! ([`superpoint::metrics`]): score PCC ≥ 0.9986 on the pre-NMS H×W score map, descriptor PCC ≥
//! 0.9993 on the dense L2-normalised map, keypoint F1 ≥ 0.989 (top-500 pixels of each post-NMS
//! map, matched within 2 px Chebyshev). Every fixture case whose frame the device takes
//! (multiples of 32: the 640×480 ones) runs from its reference input plane (`input_plane.npy`, the
//! network frame, so the device resize is the identity) at both precisions; the accurate one
//! meets every gate, the port's the PCC gates. One case also runs from its image file (the device
//! resizes 512×512 → 640×480). Also: the device's candidates, ordered and cut on the host, are
//! exactly the host selection on the device's own NMS map, and its descriptors are the host
//! sampling of its own dense map; the device NMS map equals the host NMS of the device score map
//! bit for bit (r = 4 and the variants r = 2, 8); a replayed trace gives the same output bit for
//! bit as direct launches; r = 0 and a threshold below the compiled one are the reference ops on
//! the device maps; frames that are not multiples of 32 are a typed error.
//!
//! One model per precision is shared by the tests (a 640×480 frame takes seconds on the
//! emulator, and the accurate program's kernels compile at its first frame), and each case runs
//! once per precision.

mod common;

use std::sync::OnceLock;
use std::time::Instant;

use common::{cases, cosine, max_abs_diff, Case};
use superpoint::backend::tensix::{TensixConfig, TensixError, TensixPrecision};
use superpoint::backend::DenseMaps;
use superpoint::metrics::{keypoint_f1, pcc, DESCRIPTOR_PCC_GATE, F1_GATE, SCORE_PCC_GATE};
use superpoint::{Backend, Detection, Error, Input, Options, SuperPoint, Warmup};
use superpoint_graph::reference::sample::sample_descriptors;
use superpoint_graph::reference::{evaluate, nms::nms, select::select_keypoints};
use superpoint_graph::{names, superpoint_with, Keypoint, Tensor};

/// Device descriptor rows against the host sampling of the device's own dense map: the bounds
/// kernel-gen's sampling test asserts (tf32 source registers in the device sum).
const ROW_COSINE_MIN: f64 = 0.99999;
const ROW_ABS_MAX: f32 = 2e-3;

const PRECISIONS: [TensixPrecision; 2] = [TensixPrecision::Port, TensixPrecision::Accurate];

/// The shared Tensix model at `precision` (12×10 grid, traces on) with the fixtures' weights.
fn model(precision: TensixPrecision) -> &'static SuperPoint {
    static MODELS: [OnceLock<SuperPoint>; 2] = [OnceLock::new(), OnceLock::new()];
    MODELS[precision as usize].get_or_init(|| {
        let case = &cases()[0];
        SuperPoint::builder()
            .weights(case.weights_path())
            .backend(Backend::Tensix)
            .warmup(Warmup::None)
            .tensix(TensixConfig {
                precision,
                ..TensixConfig::default()
            })
            .build()
            .expect("the Tensix backend opens on the emulator")
    })
}

/// The reference evaluator's dense maps of `plane` with the case's options.
fn reference_maps(case: &Case, plane: &Tensor<u8>) -> DenseMaps {
    let graph = superpoint_with(&case.options().graph_params());
    let keep = [names::SCORES, names::NMS, names::DESCRIPTORS_DENSE];
    let values = evaluate(&graph, &case.weights(), plane, &keep).expect("reference runs");
    let dense = |n: &str| values.dense(n).expect("kept").clone();
    DenseMaps {
        scores: dense(names::SCORES),
        nms: dense(names::NMS),
        descriptors: dense(names::DESCRIPTORS_DENSE),
    }
}

/// A fitting case with its reference input plane and the reference's maps of it.
struct Reference {
    case: Case,
    plane: Tensor<u8>,
    maps: DenseMaps,
}

/// Every fitting case with its reference maps, computed once for both precisions.
fn references() -> &'static [Reference] {
    static REFERENCES: OnceLock<Vec<Reference>> = OnceLock::new();
    REFERENCES.get_or_init(|| {
        cases()
            .into_iter()
            .filter(Case::fits_tensix)
            .map(|case| {
                let plane = case.input_plane();
                let maps = reference_maps(&case, &plane);
                Reference { case, plane, maps }
            })
            .collect()
    })
}

/// One case on the device, with its reference.
struct Run {
    reference: &'static Reference,
    detection: Detection,
    device: DenseMaps,
    seconds: f64,
}

impl Run {
    fn case(&self) -> &Case {
        &self.reference.case
    }
}

/// Every fitting case, run once at `precision` from its reference input plane.
fn runs(precision: TensixPrecision) -> &'static [Run] {
    static RUNS: [OnceLock<Vec<Run>>; 2] = [OnceLock::new(), OnceLock::new()];
    RUNS[precision as usize].get_or_init(|| {
        references()
            .iter()
            .map(|reference| {
                let (case, plane) = (&reference.case, &reference.plane);
                let start = Instant::now();
                let (detection, device) = model(precision)
                    .detect_with_maps(
                        Input::plane(plane.data.clone(), plane.width, plane.height),
                        &case.options(),
                    )
                    .expect("the device runs the case");
                let seconds = start.elapsed().as_secs_f64();
                Run {
                    reference,
                    detection,
                    device,
                    seconds,
                }
            })
            .collect()
    })
}

/// Every run of both precisions.
fn every_run() -> impl Iterator<Item = (TensixPrecision, &'static Run)> {
    PRECISIONS
        .into_iter()
        .flat_map(|precision| runs(precision).iter().map(move |run| (precision, run)))
}

/// §5 figures of one run.
struct Figures {
    case: String,
    score: f64,
    descriptor: f64,
    f1: f64,
}

/// The §5 figures of every fitting case at `precision`, printed with the frame times (the
/// first frame of a program includes compiling it unless checked in, loading it and capturing
/// its trace).
fn figures(precision: TensixPrecision) -> Vec<Figures> {
    let runs = runs(precision);
    assert!(runs.len() >= 4, "the four 640×480 cases run");
    runs.iter()
        .map(|run| {
            let (device, reference) = (&run.device, &run.reference.maps);
            let score = pcc(&device.scores.data, &reference.scores.data).expect("score PCC");
            let descriptor = pcc(&device.descriptors.data, &reference.descriptors.data)
                .expect("descriptor PCC");
            let f1 = keypoint_f1(&device.nms, &reference.nms).expect("keypoint F1");
            println!(
                "{} precision, {}: score PCC {score:.6}, descriptor PCC {descriptor:.6}, keypoint F1 {f1:.4}, {} keypoints, frame {:.1} s",
                precision.name(),
                run.case().name,
                run.detection.len(),
                run.seconds
            );
            Figures {
                case: run.case().name.clone(),
                score,
                descriptor,
                f1,
            }
        })
        .collect()
}

/// The port's precision meets the PCC gates. Its keypoint F1 is printed, not asserted: with the
/// fixtures' random weights the scores around rank 500 of the post-NMS maps are ~1e-4 apart, the
/// size of bf16 storage's error, so a few percent of the top-500 cross the cut; measured
/// 0.956–0.980. `cargo run --release -p superpoint --example precision_bound` shows that no
/// fidelity can fix this: exact products of bf16-stored activations and weights stay below the
/// gate on these fixtures. The accurate precision meets it (the next test).
#[test]
fn score_and_descriptor_pcc_meet_the_gates_on_every_fitting_case() {
    for f in figures(TensixPrecision::Port) {
        assert!(
            f.score >= SCORE_PCC_GATE,
            "{}: score PCC {}",
            f.case,
            f.score
        );
        assert!(
            f.descriptor >= DESCRIPTOR_PCC_GATE,
            "{}: descriptor PCC {}",
            f.case,
            f.descriptor
        );
    }
}

#[test]
fn the_accurate_precision_meets_every_gate_on_every_fitting_case() {
    let failing: Vec<String> = figures(TensixPrecision::Accurate)
        .iter()
        .filter(|f| {
            f.score < SCORE_PCC_GATE || f.descriptor < DESCRIPTOR_PCC_GATE || f.f1 < F1_GATE
        })
        .map(|f| {
            format!(
                "{}: score PCC {:.6}, descriptor PCC {:.6}, F1 {:.4}",
                f.case, f.score, f.descriptor, f.f1
            )
        })
        .collect();
    assert!(
        failing.is_empty(),
        "below a §5 gate (score PCC {SCORE_PCC_GATE}, descriptor PCC {DESCRIPTOR_PCC_GATE}, F1 {F1_GATE}): {failing:?}"
    );
}

#[test]
fn device_nms_equals_host_nms_of_the_device_scores_bit_for_bit() {
    let mut radii = Vec::new();
    for (precision, run) in every_run() {
        let r = run.case().nms_radius;
        let host = nms(&run.device.scores, r);
        let differing = host
            .data
            .iter()
            .zip(&run.device.nms.data)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        assert_eq!(
            differing,
            0,
            "{} precision, {}: r = {r}",
            precision.name(),
            run.case().name
        );
        radii.push((precision, r));
    }
    for precision in PRECISIONS {
        for r in [2, 4, 8] {
            assert!(
                radii.contains(&(precision, r)),
                "{} precision: r = {r} was checked",
                precision.name()
            );
        }
    }
}

#[test]
fn detections_are_the_host_selection_and_sampling_of_the_device_maps() {
    for (precision, run) in every_run() {
        let label = format!("{} precision, {}", precision.name(), run.case().name);
        let o = run.case().options();
        let want: Vec<Keypoint> =
            select_keypoints(&run.device.nms, o.keypoint_threshold, 4, o.max_keypoints);
        assert!(
            run.detection.device_nms,
            "{label}: radius 1..8 runs on the device"
        );
        assert_eq!(run.detection.len(), want.len(), "{label}");
        // The plane is the frame, so frame pixels are returned unscaled.
        for (i, (got, k)) in run.detection.keypoints.iter().zip(&want).enumerate() {
            assert_eq!(*got, [k.x as f32, k.y as f32], "{label} keypoint {i}");
            assert_eq!(run.detection.scores[i].to_bits(), k.score.to_bits());
        }
        let rows = run.detection.descriptors.as_deref().expect("descriptors");
        let host = sample_descriptors(&run.device.descriptors, &want, 8);
        let dim = run.detection.descriptor_dim;
        assert_eq!(dim, 256);
        let (mut min_cos, mut max_abs) = (1.0f64, 0.0f32);
        for (g, h) in rows.chunks_exact(dim).zip(host.chunks_exact(dim)) {
            min_cos = min_cos.min(cosine(g, h));
            max_abs = max_abs.max(max_abs_diff(g, h));
        }
        println!(
            "{label}: descriptor rows vs host sampling of the device map: min cosine {min_cos:.8}, max abs {max_abs:.2e}"
        );
        assert!(min_cos >= ROW_COSINE_MIN, "{label}: {min_cos}");
        assert!(max_abs <= ROW_ABS_MAX, "{label}: {max_abs}");
    }
}

#[test]
fn a_replayed_trace_equals_direct_launches_bit_for_bit() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_default")
        .expect("case");
    let plane = case.input_plane();
    let input = || Input::plane(plane.data.clone(), plane.width, plane.height);
    let traced = model(TensixPrecision::Port);
    // The first frame of a program launches its steps (the warm-up) and captures the trace.
    traced.detect(input(), &case.options()).expect("warm-up");
    let info = traced.tensix().expect("tensix").info();
    assert!(
        info.programs
            .iter()
            .any(|p| p.kind == "main" && p.trace_captured),
        "the main program's trace is captured: {info:?}"
    );
    let replayed = traced.detect(input(), &case.options()).expect("replay");
    let untraced = SuperPoint::builder()
        .weights(case.weights_path())
        .backend(Backend::Tensix)
        .warmup(Warmup::None)
        .tensix(TensixConfig {
            trace: false,
            ..TensixConfig::default()
        })
        .build()
        .expect("opens");
    let start = Instant::now();
    let direct = untraced.detect(input(), &case.options()).expect("direct");
    println!(
        "640x480 frame, direct launches: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    assert!(untraced
        .tensix()
        .expect("tensix")
        .info()
        .programs
        .iter()
        .all(|p| !p.trace_captured));
    assert_eq!(replayed.keypoints, direct.keypoints);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&replayed.scores), bits(&direct.scores));
    assert_eq!(
        bits(replayed.descriptors.as_deref().expect("d")),
        bits(direct.descriptors.as_deref().expect("d"))
    );
}

#[test]
fn the_device_resizes_an_image_file_like_the_reference() {
    // astronaut.png (512×512) to 640×480 on the device, against the reference evaluator on the
    // same decoded plane (its resize is Pillow's, rounded to u8; the device's is not rounded).
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_default")
        .expect("case");
    let o = case.options();
    let (detection, device) = model(TensixPrecision::Port)
        .detect_with_maps(case.image_path(), &o)
        .expect("the device runs the image");
    assert_eq!(detection.image_size, [512, 512]);
    let spec = superpoint::decode::PlaneSpec {
        channel: o.channel,
        bgr: false,
    };
    let plane =
        superpoint::decode::decode_plane(&Input::from(case.image_path()), spec).expect("decode");
    let reference = reference_maps(&case, &plane);
    let score = pcc(&device.scores.data, &reference.scores.data).expect("score PCC");
    let descriptor =
        pcc(&device.descriptors.data, &reference.descriptors.data).expect("descriptor PCC");
    let f1 = keypoint_f1(&device.nms, &reference.nms).expect("keypoint F1");

    // The F1 is printed, not gated: the two inputs differ by Pillow's u8 rounding of the resize
    // (up to 1/255 per pixel), which moves the order of near-equal scores at the top-500 cut.
    println!("astronaut.png resized on the device: score PCC {score:.6}, descriptor PCC {descriptor:.6}, F1 {f1:.4}");
    assert!(score >= SCORE_PCC_GATE, "{score}");
    assert!(descriptor >= DESCRIPTOR_PCC_GATE, "{descriptor}");
    assert_eq!(detection.frame_size, [640, 480]);
}

#[test]
fn frames_that_are_not_multiples_of_32_are_a_typed_error() {
    let case = cases()
        .into_iter()
        .find(|c| !c.fits_tensix())
        .expect("a 320×240 case");
    let plane = case.input_plane();
    let err = model(TensixPrecision::Port)
        .detect(
            Input::plane(plane.data.clone(), plane.width, plane.height),
            &case.options(),
        )
        .expect_err("240 is not a multiple of 32");
    assert!(
        matches!(
            err,
            Error::Tensix(TensixError::FrameSize {
                width: 320,
                height: 240
            })
        ),
        "{err}"
    );
}

#[test]
fn host_post_processing_of_the_device_maps_for_radius_0_and_a_low_threshold() {
    // r = 0 has no device program: the host runs NMS, selection and sampling on the device's
    // score map and dense descriptors. A threshold below the compiled 0.005 makes the host select
    // from the device's NMS map. Either way the result is the reference ops on the device maps.
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_default")
        .expect("case");
    let plane = case.input_plane();
    for (radius, threshold) in [(0, 0.005), (4, 0.002)] {
        let o = Options {
            nms_radius: radius,
            keypoint_threshold: threshold,
            max_keypoints: -1,
            ..case.options()
        };
        let (detection, device) = model(TensixPrecision::Port)
            .detect_with_maps(
                Input::plane(plane.data.clone(), plane.width, plane.height),
                &o,
            )
            .expect("runs");
        assert_eq!(detection.device_nms, radius != 0, "r = {radius}");
        let host_nms = nms(&device.scores, radius);
        assert!(
            host_nms
                .data
                .iter()
                .zip(&device.nms.data)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "r = {radius}"
        );
        let want = select_keypoints(&host_nms, threshold, 4, -1);
        assert!(want.len() > 1024, "r = {radius}: {} keypoints", want.len());
        let got: Vec<[f32; 2]> = want.iter().map(|k| [k.x as f32, k.y as f32]).collect();
        assert_eq!(
            detection.keypoints, got,
            "r = {radius}, threshold {threshold}"
        );
        let rows = detection.descriptors.as_deref().expect("descriptors");
        let host = sample_descriptors(&device.descriptors, &want, 8);
        assert_eq!(rows.len(), host.len());
        let worst = max_abs_diff(rows, &host);
        println!(
            "r = {radius}, threshold {threshold}: {} keypoints, descriptor max abs {worst:.2e}",
            want.len()
        );
        assert!(worst <= ROW_ABS_MAX, "r = {radius}: {worst}");
    }
}
