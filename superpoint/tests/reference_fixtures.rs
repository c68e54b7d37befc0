//! The reference evaluator against every fixture case computed by the Hugging Face
//! implementation (DESIGN §2, §5), and the Pillow-exact resize against the fixtures' input
//! planes.

mod common;

use std::time::Instant;

use common::{cases, cosine, max_abs_diff, Case};
use superpoint_graph::reference::{evaluate, resize::pillow_bilinear};
use superpoint_graph::{names, superpoint_with, SuperPointParams, Tensor};

/// Tolerance on dense maps and descriptors (DESIGN §5).
const DENSE_TOL: f32 = 1e-4;
/// Tolerance on keypoint scores.
const SCORE_TOL: f32 = 1e-5;
/// Smallest cosine between a sampled descriptor and the fixture's.
const MIN_COSINE: f64 = 0.99999;

fn params(case: &Case) -> SuperPointParams {
    SuperPointParams {
        frame_width: case.frame_size[0],
        frame_height: case.frame_size[1],
        nms_radius: case.nms_radius,
        keypoint_threshold: case.keypoint_threshold,
        border: case.border,
        max_keypoints: case.max_keypoints,
    }
}

/// Runs one case through the reference evaluator; returns the problems found.
fn check_case(case: &Case) -> Vec<String> {
    let start = Instant::now();
    let graph = superpoint_with(&params(case));
    let values = evaluate(
        &graph,
        &case.weights(),
        &case.input_plane(),
        &[names::SCORES, names::NMS, names::DESCRIPTORS_DENSE],
    )
    .unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let mut problems = Vec::new();
    let mut fail = |msg: String| problems.push(format!("{}: {msg}", case.name));

    for array in [names::SCORES, names::NMS, names::DESCRIPTORS_DENSE] {
        let file = match array {
            names::SCORES => "scores_dense",
            names::NMS => "nms_map",
            _ => "descriptors_dense",
        };
        if !case.has(file) {
            continue;
        }
        let want = case.dense(file);
        let got = values.dense(array).expect("kept dense value");
        let shape = |t: &Tensor<f32>| (t.channels, t.height, t.width);
        if shape(got) != shape(&want) {
            fail(format!("{file}: shape {:?}, fixture {:?}", shape(got), shape(&want)));
            continue;
        }
        let d = max_abs_diff(&got.data, &want.data);
        if d > DENSE_TOL {
            fail(format!("{file}: max abs diff {d:e} > {DENSE_TOL:e}"));
        }
    }

    let keypoints = values.keypoints(names::KEYPOINTS).expect("keypoints");
    let got: Vec<[i32; 2]> = keypoints.iter().map(|k| [k.x as i32, k.y as i32]).collect();
    let want = case.keypoints_net();
    if got != want {
        let first = got.iter().zip(&want).position(|(a, b)| a != b);
        fail(format!(
            "keypoints differ: {} vs {} in the fixture, first difference at {first:?}",
            got.len(),
            want.len()
        ));
    }
    assert_eq!(want.len(), case.num_keypoints, "{}: fixture is self-consistent", case.name);

    let scores: Vec<f32> = keypoints.iter().map(|k| k.score).collect();
    let want_scores = case.scores();
    if scores.len() == want_scores.len() {
        let d = max_abs_diff(&scores, &want_scores);
        if d > SCORE_TOL {
            fail(format!("scores: max abs diff {d:e} > {SCORE_TOL:e}"));
        }
    }

    let (dim, desc) = values.descriptors(names::DESCRIPTORS).expect("descriptors");
    let want_desc = case.descriptors();
    if desc.len() == want_desc.len() {
        let worst = desc
            .chunks(dim)
            .zip(want_desc.chunks(dim))
            .map(|(a, b)| cosine(a, b))
            .fold(f64::INFINITY, f64::min);
        if worst.is_nan() || worst < MIN_COSINE {
            fail(format!("descriptors: worst cosine {worst} < {MIN_COSINE}"));
        }
    } else {
        fail(format!("descriptors: {} values, fixture {}", desc.len(), want_desc.len()));
    }
    eprintln!(
        "{}: {} keypoints, {:.1} s",
        case.name,
        keypoints.len(),
        start.elapsed().as_secs_f64()
    );
    problems
}

/// Every fixture case, two at a time (the reference convolution is single-threaded).
#[test]
fn reference_matches_every_fixture() {
    let all = cases();
    assert!(all.len() >= 7, "expected the 7 fixture cases, found {}", all.len());
    let mut problems = Vec::new();
    for pair in all.chunks(2) {
        let found: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = pair.iter().map(|case| s.spawn(move || check_case(case))).collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("case thread"))
                .collect()
        });
        problems.extend(found.into_iter().flatten());
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The decoded image's chosen plane, as DESIGN §2 step 1 defines it.
fn image_plane(case: &Case) -> Tensor<u8> {
    let rgb = image::open(case.image_path()).expect("decodes").to_rgb8();
    let (w, h) = rgb.dimensions();
    assert_eq!([w as usize, h as usize], case.original_size, "{}", case.name);
    let data = rgb
        .pixels()
        .map(|p| {
            let [r, g, b] = p.0.map(u32::from);
            match case.channel.as_str() {
                "red" => r as u8,
                "luma" => ((19595 * r + 38470 * g + 7471 * b + 32768) >> 16) as u8,
                other => panic!("{}: unknown channel {other}", case.name),
            }
        })
        .collect();
    Tensor::from_vec(1, h as usize, w as usize, data).expect("plane shape")
}

/// The resize is bit-identical to Pillow on the PNG cases. JPEG cases are left out here: their
/// decode is the library's (libjpeg-turbo) job and is tested with it.
#[test]
fn pillow_resize_matches_input_planes() {
    let png: Vec<Case> = cases().into_iter().filter(|c| c.image.ends_with(".png")).collect();
    assert!(png.len() >= 4, "expected the PNG cases, found {}", png.len());
    let mut problems = Vec::new();
    for case in &png {
        let resized = pillow_bilinear(&image_plane(case), case.frame_size[0], case.frame_size[1]);
        let want = case.input_plane();
        assert_eq!((resized.width, resized.height), (want.width, want.height), "{}", case.name);
        let differing = resized.data.iter().zip(&want.data).filter(|(a, b)| a != b).count();
        if differing > 0 {
            let worst = resized
                .data
                .iter()
                .zip(&want.data)
                .map(|(&a, &b)| a.abs_diff(b))
                .max()
                .unwrap_or(0);
            problems.push(format!(
                "{} ({}): {differing} of {} pixels differ, by up to {worst}",
                case.name,
                case.channel,
                want.data.len()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
