//! Shared helpers of the integration tests: the fixture cases (computed by the Hugging Face
//! implementation, see `tests/fixtures/README.md`), `.npy` readers and the accuracy metrics of
//! DESIGN §5.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde::Deserialize;
use superpoint_graph::{Tensor, WeightSet};

/// The repository's copy of the reference fixtures.
pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// One fixture case (`cases/NAME/case.json`).
#[derive(Debug, Clone, Deserialize)]
pub struct Case {
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
}

/// Every case listed in `cases.json`.
pub fn cases() -> Vec<Case> {
    #[derive(Deserialize)]
    struct Entry {
        name: String,
    }
    let list: Vec<Entry> =
        serde_json::from_slice(&std::fs::read(fixtures_dir().join("cases.json")).expect("cases.json"))
            .expect("cases.json parses");
    list.iter()
        .map(|e| {
            let path = fixtures_dir().join("cases").join(&e.name).join("case.json");
            serde_json::from_slice(&std::fs::read(&path).expect("case.json")).expect("case.json parses")
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

/// Pearson correlation of two equally long arrays, in f64.
pub fn pcc(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "pcc of arrays of different lengths");
    let n = a.len() as f64;
    let ma = a.iter().map(|&v| v as f64).sum::<f64>() / n;
    let mb = b.iter().map(|&v| v as f64).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        let (dx, dy) = (x as f64 - ma, y as f64 - mb);
        sab += dx * dy;
        saa += dx * dx;
        sbb += dy * dy;
    }
    sab / (saa.sqrt() * sbb.sqrt())
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
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f32::max)
}

/// Checks a detection against the case's expected keypoints, scores and descriptors.
pub fn assert_matches_fixture(case: &Case, keypoints: &[[f32; 2]], scores: &[f32], descriptors: &[f32]) {
    let want_kp = case.keypoints();
    let want_scores = case.scores();
    let want_desc = case.descriptors();
    assert_eq!(keypoints.len(), want_kp.len(), "{}: keypoint count", case.name);
    for (i, (got, want)) in keypoints.iter().zip(&want_kp).enumerate() {
        for axis in 0..2 {
            assert!(
                (got[axis] - want[axis]).abs() <= 1e-4 * want[axis].abs().max(1.0),
                "{}: keypoint {i} is {got:?}, expected {want:?}",
                case.name
            );
        }
    }
    for (i, (got, want)) in scores.iter().zip(&want_scores).enumerate() {
        assert!((got - want).abs() <= 1e-5, "{}: score {i} is {got}, expected {want}", case.name);
    }
    assert_eq!(descriptors.len(), want_desc.len(), "{}: descriptor count", case.name);
    for (i, (got, want)) in descriptors.chunks(256).zip(want_desc.chunks(256)).enumerate() {
        let c = cosine(got, want);
        assert!(c >= 0.99999, "{}: descriptor {i} cosine {c}", case.name);
    }
}
