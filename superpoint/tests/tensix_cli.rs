//! The `superpoint` command on the Tensix backend (tt-runtime emulator): `detect --backend
//! tensix` writes a full result for a fixture image, and `info` reports the device, grid, dispatch
//! and precision (`--precision accurate` selects the accurate one; an unknown precision is refused
//! with the valid ones). `bench` is run by `figures.rs`, which pins the modeled times it prints.

mod common;

use std::process::Command;

use common::{cases, read_npy};

fn superpoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_superpoint"))
}

fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run superpoint");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn detect_with_the_tensix_backend_writes_keypoints_and_descriptors() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_default")
        .expect("case");
    let out = tempfile::tempdir().expect("tempdir");
    stdout_of(
        superpoint()
            .arg("detect")
            .arg(case.image_path())
            .arg("--weights")
            .arg(case.weights_path())
            .args(["--backend", "tensix", "--no-overlay"])
            .arg("--out")
            .arg(out.path()),
    );
    let dir = out.path().join("astronaut");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("keypoints.json")).expect("json"))
            .expect("parse");
    assert_eq!(json["backend"], "tensix");
    assert_eq!(json["num_keypoints"], case.num_keypoints);
    assert_eq!(json["original_size"], serde_json::json!([512, 512]));
    let (shape, rows) = read_npy::<f32>(&dir.join("descriptors.npy"));
    assert_eq!(shape, vec![case.num_keypoints, 256]);
    for row in rows.chunks_exact(256) {
        let norm: f64 = row
            .iter()
            .map(|v| f64::from(*v).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!((norm - 1.0).abs() < 1e-3, "descriptor norm {norm}");
    }
}

#[test]
fn info_reports_the_device_grid_and_dispatch() {
    let case = &cases()[0];
    let text = stdout_of(
        superpoint()
            .arg("info")
            .arg("--weights")
            .arg(case.weights_path())
            .args(["--backend", "tensix", "--grid", "11x10"]),
    );
    assert!(text.contains("backend: tensix"), "{text}");
    assert!(
        text.contains("emulator runtime, grid 11x10, tensix dispatch, precision port"),
        "{text}"
    );
    assert!(
        text.contains("NMS radius [1, 2, 3, 4, 5, 6, 7, 8]"),
        "{text}"
    );
    let auto = stdout_of(
        superpoint()
            .arg("info")
            .arg("--weights")
            .arg(case.weights_path()),
    );
    assert!(auto.contains("backend: cpu"), "no card here: {auto}");
}

#[test]
fn precision_accurate_is_selected_by_the_flag_and_unknown_ones_are_refused() {
    let case = &cases()[0];
    // `info` opens the backend without running a frame: programs compile at first use.
    let text = stdout_of(
        superpoint()
            .arg("info")
            .arg("--weights")
            .arg(case.weights_path())
            .args(["--backend", "tensix", "--precision", "accurate"]),
    );
    assert!(
        text.contains("grid 12x10, eth dispatch, precision accurate"),
        "{text}"
    );
    let out = superpoint()
        .args([
            "detect",
            "x.png",
            "--backend",
            "tensix",
            "--precision",
            "fp64",
        ])
        .output()
        .expect("run superpoint");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("invalid value 'fp64'") && stderr.contains("port, accurate"),
        "{stderr}"
    );
}
