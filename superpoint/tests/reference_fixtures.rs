//! The reference evaluator against every fixture case computed by the Hugging Face
//! implementation (DESIGN §2, §5), and the Pillow-exact resize against the fixtures' input
//! planes. Run with `--nocapture` to see each case's deviations from the fixture.
//!
//! The dense arrays are compared on the cases that carry them, [`DENSE`] (the fixtures keep them
//! for 3 of the 7 cases, `tests/fixtures/README.md`); a case that lost one, or gained one the table
//! does not list, fails.

mod common;

use std::time::Instant;

use common::{cases, compare_with_fixture, cosine, max_abs_diff, Case, MIN_COSINE, SCORE_TOL};
use superpoint_graph::reference::{evaluate, resize::pillow_bilinear};
use superpoint_graph::{names, superpoint_with, SuperPointParams, Tensor};

/// Tolerance on dense maps and descriptors (DESIGN §5).
const DENSE_TOL: f32 = 1e-4;

/// The dense arrays each fixture case carries, as `tests/fixtures/README.md` lists them, in the
/// order of `cases.json`.
const DENSE: &[(&str, &[&str])] = &[
    (
        "astronaut_320x240_no_nms",
        &["scores_dense", "nms_map", "descriptors_dense"],
    ),
    (
        "astronaut_320x240_r4",
        &["scores_dense", "nms_map", "descriptors_dense"],
    ),
    ("astronaut_default", &["scores_dense"]),
    ("coffee_all_points", &[]),
    ("rocket_r2_t01", &[]),
    ("hubble_1600x900_r8", &[]),
    ("coffee_luma", &[]),
];

/// The fixture's file of each dense value the reference keeps.
const DENSE_FILES: [(&str, &str); 3] = [
    (names::SCORES, "scores_dense"),
    (names::NMS, "nms_map"),
    (names::DESCRIPTORS_DENSE, "descriptors_dense"),
];

/// The dense arrays `case` carries, by [`DENSE`].
fn dense_arrays(case: &Case) -> &'static [&'static str] {
    DENSE
        .iter()
        .find(|(name, _)| *name == case.name)
        .map(|(_, arrays)| *arrays)
        .unwrap_or_else(|| panic!("{}: not in DENSE", case.name))
}

#[test]
fn the_cases_carry_the_dense_arrays_the_fixtures_list() {
    let all = cases();
    let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
    let listed: Vec<&str> = DENSE.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names, listed,
        "DENSE lists every case of cases.json, in order"
    );
    for case in &all {
        let present: Vec<&str> = DENSE_FILES
            .iter()
            .map(|(_, file)| *file)
            .filter(|file| case.has(file))
            .collect();
        assert_eq!(present, dense_arrays(case), "{}", case.name);
    }
    let with_dense = DENSE.iter().filter(|(_, a)| !a.is_empty()).count();
    assert_eq!(with_dense, 3, "3 of the 7 cases carry dense arrays");
}

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
    let mut dense_diffs = Vec::new();

    for (array, file) in DENSE_FILES {
        if !dense_arrays(case).contains(&file) {
            continue;
        }
        let want = case.dense(file);
        let got = values.dense(array).expect("kept dense value");
        let shape = |t: &Tensor<f32>| (t.channels, t.height, t.width);
        if shape(got) != shape(&want) {
            problems.push(format!(
                "{file}: shape {:?}, fixture {:?}",
                shape(got),
                shape(&want)
            ));
            continue;
        }
        let d = max_abs_diff(&got.data, &want.data);
        dense_diffs.push(format!("{file} {d:.1e}"));
        if d > DENSE_TOL {
            problems.push(format!("{file}: max abs diff {d:e} > {DENSE_TOL:e}"));
        }
    }

    let keypoints = values.keypoints(names::KEYPOINTS).expect("keypoints");
    let got: Vec<[i32; 2]> = keypoints.iter().map(|k| [k.x as i32, k.y as i32]).collect();
    let got_scores: Vec<f32> = keypoints.iter().map(|k| k.score).collect();
    let want = case.keypoints_net();
    let want_scores = case.scores();
    let order = compare_with_fixture(case, &got, &got_scores);
    problems.extend(order.problems.iter().cloned());

    if got_scores.len() == want_scores.len() {
        let d = max_abs_diff(&got_scores, &want_scores);
        if d > SCORE_TOL {
            problems.push(format!("scores: max abs diff {d:e} > {SCORE_TOL:e}"));
        }
    } else {
        problems.push(format!("{} keypoints, fixture {}", got.len(), want.len()));
    }

    // Each descriptor is compared with the fixture's descriptor of the same point.
    let (dim, desc) = values.descriptors(names::DESCRIPTORS).expect("descriptors");
    let want_desc = case.descriptors();
    assert_eq!(
        want_desc.len(),
        want.len() * dim,
        "{}: fixture descriptors",
        case.name
    );
    let worst = order
        .matches
        .iter()
        .map(|&(i, j)| {
            cosine(
                &desc[i * dim..(i + 1) * dim],
                &want_desc[j * dim..(j + 1) * dim],
            )
        })
        .fold(f64::INFINITY, f64::min);
    if worst.is_nan() || worst < MIN_COSINE {
        problems.push(format!("descriptors: worst cosine {worst} < {MIN_COSINE}"));
    }
    eprintln!(
        "{}: {} keypoints ({} at another index than in the fixture, across score gaps up to {:.1e}; \
         {} only on one side of the cut), max dense diffs [{}], worst descriptor cosine {worst:.9}, {:.1} s",
        case.name,
        keypoints.len(),
        order.displaced,
        order.max_gap,
        order.unmatched,
        dense_diffs.join(", "),
        start.elapsed().as_secs_f64()
    );
    problems
        .into_iter()
        .map(|p| format!("{}: {p}", case.name))
        .collect()
}

/// Every fixture case, two at a time (the reference convolution is single-threaded).
#[test]
fn reference_matches_every_fixture() {
    let all = cases();
    assert!(
        all.len() >= 7,
        "expected the 7 fixture cases, found {}",
        all.len()
    );
    let mut problems = Vec::new();
    for pair in all.chunks(2) {
        let found: Vec<Vec<String>> = std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|case| s.spawn(move || check_case(case)))
                .collect();
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
    assert_eq!(
        [w as usize, h as usize],
        case.original_size,
        "{}",
        case.name
    );
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
    let png: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.image.ends_with(".png"))
        .collect();
    assert!(
        png.len() >= 4,
        "expected the PNG cases, found {}",
        png.len()
    );
    let mut problems = Vec::new();
    for case in &png {
        let resized = pillow_bilinear(&image_plane(case), case.frame_size[0], case.frame_size[1]);
        let want = case.input_plane();
        assert_eq!(
            (resized.width, resized.height),
            (want.width, want.height),
            "{}",
            case.name
        );
        let differing = resized
            .data
            .iter()
            .zip(&want.data)
            .filter(|(a, b)| a != b)
            .count();
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
