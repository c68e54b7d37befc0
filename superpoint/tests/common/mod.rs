//! Shared helpers of the integration tests (and the `precision_bound` example): the fixture
//! cases (computed by the Hugging Face implementation, see `tests/fixtures/README.md`), `.npy`
//! readers and comparisons of detections with a case's outputs. DESIGN §5's metrics are the
//! library's [`superpoint::metrics`].
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use superpoint::{Channel, Options};
use superpoint_graph::{Tensor, WeightSet};

/// The repository's copy of the reference fixtures.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// One fixture case (`cases/NAME/case.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
    /// The case's directory name (from `cases.json`; `case.json` itself does not carry it).
    #[serde(default)]
    pub name: String,
    pub image: String,
    pub weights: String,
    pub original_size: [usize; 2],
    pub frame_size: [usize; 2],
    pub max_keypoints: i64,
    pub keypoint_threshold: f32,
    pub nms_radius: usize,
    pub channel: String,
    pub border: usize,
    pub num_keypoints: usize,
}

impl Case {
    pub fn dir(&self) -> PathBuf {
        fixtures_dir().join("cases").join(&self.name)
    }
    pub fn image_path(&self) -> PathBuf {
        fixtures_dir().join(&self.image)
    }
    pub fn weights_path(&self) -> PathBuf {
        fixtures_dir().join(&self.weights)
    }
    pub fn has(&self, array: &str) -> bool {
        self.dir().join(format!("{array}.npy")).exists()
    }
    /// The u8 H×W plane after the reference resize.
    pub fn input_plane(&self) -> Tensor<u8> {
        let (shape, data) = read_npy::<u8>(&self.dir().join("input_plane.npy"));
        Tensor::from_vec(1, shape[0], shape[1], data).expect("input_plane shape")
    }
    /// A dense f32 array as a C×H×W tensor (H×W arrays get one channel).
    pub fn dense(&self, array: &str) -> Tensor<f32> {
        let (shape, data) = read_npy::<f32>(&self.dir().join(format!("{array}.npy")));
        match shape.as_slice() {
            [h, w] => Tensor::from_vec(1, *h, *w, data),
            [c, h, w] => Tensor::from_vec(*c, *h, *w, data),
            other => panic!("{array}: unexpected shape {other:?}"),
        }
        .expect("dense shape")
    }
    /// Keypoints in the network frame, [x, y] per row.
    pub fn keypoints_net(&self) -> Vec<[i32; 2]> {
        let (_, data) = read_npy::<i32>(&self.dir().join("keypoints_net.npy"));
        data.chunks_exact(2).map(|c| [c[0], c[1]]).collect()
    }
    /// Keypoints in original-image pixels, [x, y] per row.
    pub fn keypoints(&self) -> Vec<[f32; 2]> {
        let (_, data) = read_npy::<f32>(&self.dir().join("keypoints.npy"));
        data.chunks_exact(2).map(|c| [c[0], c[1]]).collect()
    }
    pub fn scores(&self) -> Vec<f32> {
        read_npy::<f32>(&self.dir().join("scores.npy")).1
    }
    /// N×256 sampled descriptors, row-major.
    pub fn descriptors(&self) -> Vec<f32> {
        read_npy::<f32>(&self.dir().join("descriptors.npy")).1
    }
    pub fn weights(&self) -> WeightSet {
        superpoint::weights::load_safetensors(&self.weights_path()).expect("fixture weights")
    }
    /// The library options the case was computed with.
    pub fn options(&self) -> Options {
        Options {
            max_keypoints: self.max_keypoints,
            keypoint_threshold: self.keypoint_threshold,
            nms_radius: self.nms_radius,
            channel: match self.channel.as_str() {
                "luma" => Channel::Luma,
                _ => Channel::Red,
            },
            frame: (self.frame_size[0], self.frame_size[1]),
            ..Options::default()
        }
    }
    /// Whether the Tensix device program takes the case's frame (sides multiples of 32).
    pub fn fits_tensix(&self) -> bool {
        self.frame_size.iter().all(|s| s % 32 == 0)
    }
}

/// Every case listed in `cases.json`.
pub fn cases() -> Vec<Case> {
    #[derive(Deserialize)]
    struct Entry {
        name: String,
    }
    let list: Vec<Entry> = serde_json::from_slice(
        &std::fs::read(fixtures_dir().join("cases.json")).expect("cases.json"),
    )
    .expect("cases.json parses");
    list.iter()
        .map(|e| {
            let path = fixtures_dir().join("cases").join(&e.name).join("case.json");
            let mut case: Case = serde_json::from_slice(&std::fs::read(&path).expect("case.json"))
                .expect("case.json parses");
            case.name = e.name.clone();
            case
        })
        .collect()
}

/// Reads a C-order `.npy` file: (shape, data).
pub fn read_npy<T: npyz::Deserialize>(path: &Path) -> (Vec<usize>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("npy header");
    let shape = npy.shape().iter().map(|&d| d as usize).collect();
    (shape, npy.into_vec().expect("npy data"))
}

/// Cosine similarity of two vectors, in f64.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let na: f64 = a.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|&x| (x as f64).powi(2)).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// The largest absolute difference of two equally long arrays.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Tolerance on keypoint scores.
pub const SCORE_TOL: f32 = 1e-5;
/// Smallest cosine between a sampled descriptor and the fixture's.
pub const MIN_COSINE: f64 = 0.99999;

/// How our keypoint list relates to the fixture's.
pub struct Order {
    /// (our index, fixture index) of every point in both lists.
    pub matches: Vec<(usize, usize)>,
    /// Points found in both lists but at different indices.
    pub displaced: usize,
    /// Points in only one list.
    pub unmatched: usize,
    /// The largest fixture-score gap a displaced point moved across.
    pub max_gap: f32,
    pub problems: Vec<String>,
}

/// Compares keypoint lists. The fixture's scores come from PyTorch in f32 and carry about 1e-6
/// of rounding noise (the detector's logits are large), while the reference accumulates in f64;
/// two points whose scores differ by less than that noise can come out in either order. So
/// the lists must be identical except that a point may sit at another index only among points
/// whose fixture scores are within `SCORE_TOL` of its own, and a point may be in one list only
/// when its score is within `SCORE_TOL` of `boundary` (the threshold or the cut-off score).
pub fn compare_order(
    got: &[[i32; 2]],
    got_scores: &[f32],
    want: &[[i32; 2]],
    want_scores: &[f32],
    boundary: f32,
) -> Order {
    let index: HashMap<[i32; 2], usize> = want.iter().enumerate().map(|(j, p)| (*p, j)).collect();
    let mut order = Order {
        matches: Vec::new(),
        displaced: 0,
        unmatched: 0,
        max_gap: 0.0,
        problems: Vec::new(),
    };
    let mut seen = vec![false; want.len()];
    for (i, p) in got.iter().enumerate() {
        match index.get(p) {
            Some(&j) => {
                seen[j] = true;
                order.matches.push((i, j));
                if i != j {
                    order.displaced += 1;
                    let here = want_scores.get(i).copied().unwrap_or(boundary);
                    order.max_gap = order.max_gap.max((want_scores[j] - here).abs());
                    if (want_scores[j] - here).abs() > SCORE_TOL {
                        order.problems.push(format!(
                            "keypoint {p:?} is at index {i}, fixture index {j}, and the fixture's \
                             scores there differ by {:e}",
                            (want_scores[j] - here).abs()
                        ));
                    }
                }
            }
            None => {
                order.unmatched += 1;
                if (got_scores[i] - boundary).abs() > SCORE_TOL {
                    order.problems.push(format!(
                        "keypoint {p:?} (score {}) at index {i} is not in the fixture",
                        got_scores[i]
                    ));
                }
            }
        }
    }
    for (j, p) in want.iter().enumerate().filter(|(j, _)| !seen[*j]) {
        order.unmatched += 1;
        if (want_scores[j] - boundary).abs() > SCORE_TOL {
            order.problems.push(format!(
                "fixture keypoint {p:?} (score {}) at index {j} is missing",
                want_scores[j]
            ));
        }
    }
    order
}

/// Compares network-frame keypoints and their scores with the case's, using as boundary the
/// threshold, or the last kept score when the list was cut at `max_keypoints`.
pub fn compare_with_fixture(case: &Case, got: &[[i32; 2]], got_scores: &[f32]) -> Order {
    let want = case.keypoints_net();
    let want_scores = case.scores();
    assert_eq!(
        want.len(),
        case.num_keypoints,
        "{}: fixture is self-consistent",
        case.name
    );
    let cut = case.max_keypoints >= 0 && want.len() == case.max_keypoints as usize;
    let boundary = if cut {
        want_scores
            .last()
            .copied()
            .unwrap_or(case.keypoint_threshold)
    } else {
        case.keypoint_threshold
    };
    compare_order(got, got_scores, &want, &want_scores, boundary)
}

/// Checks a detection (keypoints in original pixels, scores, N×256 descriptors) against the
/// case's expected outputs: the same points up to near-tie reordering (see [`compare_order`]),
/// coordinates equal to the fixture's, scores within `SCORE_TOL`, descriptor cosine at least
/// `MIN_COSINE` point by point.
pub fn assert_matches_fixture(
    case: &Case,
    keypoints: &[[f32; 2]],
    scores: &[f32],
    descriptors: &[f32],
) {
    let [w0, h0] = case.original_size;
    let [w, h] = case.frame_size;
    let net: Vec<[i32; 2]> = keypoints
        .iter()
        .map(|p| {
            [
                (p[0] as f64 * w as f64 / w0 as f64).round() as i32,
                (p[1] as f64 * h as f64 / h0 as f64).round() as i32,
            ]
        })
        .collect();
    let order = compare_with_fixture(case, &net, scores);
    assert!(
        order.problems.is_empty(),
        "{}: {:#?}",
        case.name,
        order.problems
    );
    let want_kp = case.keypoints();
    let want_scores = case.scores();
    let want_desc = case.descriptors();
    for &(i, j) in &order.matches {
        for axis in 0..2 {
            let (got, want) = (keypoints[i][axis], want_kp[j][axis]);
            assert!(
                (got - want).abs() <= 1e-4 * want.abs().max(1.0),
                "{}: keypoint {i} is {:?}, expected {:?}",
                case.name,
                keypoints[i],
                want_kp[j]
            );
        }
        assert!(
            (scores[i] - want_scores[j]).abs() <= SCORE_TOL,
            "{}: score {i} is {}, expected {}",
            case.name,
            scores[i],
            want_scores[j]
        );
        let c = cosine(
            &descriptors[i * 256..(i + 1) * 256],
            &want_desc[j * 256..(j + 1) * 256],
        );
        assert!(c >= MIN_COSINE, "{}: descriptor {i} cosine {c}", case.name);
    }
}
