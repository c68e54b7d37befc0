//! End to end through the `superpoint` command: `detect` on fixture images writes an overlay,
//! keypoints.json and descriptors.npy that match the Hugging Face outputs; `info` reports; bad
//! input fails with a message and a non-zero exit code.

mod common;

use std::process::Command;

use common::{assert_matches_fixture, cases, read_npy};

fn superpoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_superpoint"))
}

#[test]
fn detect_writes_outputs_that_match_the_fixtures() {
    let out = tempfile::tempdir().expect("tempdir");
    for name in ["hubble_1600x900_r8", "coffee_luma"] {
        let case = cases().into_iter().find(|c| c.name == name).expect("case");
        let status = superpoint()
            .arg("detect")
            .arg(case.image_path())
            .arg("--weights")
            .arg(case.weights_path())
            .args(["--max-keypoints", &case.max_keypoints.to_string()])
            .args(["--keypoint-threshold", &case.keypoint_threshold.to_string()])
            .args(["--nms-radius", &case.nms_radius.to_string()])
            .args([
                "--frame",
                &format!("{}x{}", case.frame_size[0], case.frame_size[1]),
            ])
            .args(["--channel", &case.channel])
            .args(["--backend", "cpu"])
            .arg("--out")
            .arg(out.path().join(name))
            .output()
            .expect("run superpoint");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let stem = case
            .image_path()
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let dir = out.path().join(name).join(stem);
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("keypoints.json")).expect("json"))
                .expect("parse");
        let keypoints: Vec<[f32; 2]> =
            serde_json::from_value(json["keypoints"].clone()).expect("keypoints");
        let scores: Vec<f32> = serde_json::from_value(json["scores"].clone()).expect("scores");
        assert_eq!(json["num_keypoints"], case.num_keypoints);
        assert_eq!(json["original_size"], serde_json::json!(case.original_size));
        assert_eq!(json["image_size"], serde_json::json!(case.frame_size));
        assert_eq!(json["options"]["nms_radius"], case.nms_radius);
        assert!(json["timing_ms"]["total"].as_f64().expect("timing") > 0.0);
        let (shape, descriptors) = read_npy::<f32>(&dir.join("descriptors.npy"));
        assert_eq!(shape, vec![case.num_keypoints, 256]);
        assert_matches_fixture(&case, &keypoints, &scores, &descriptors);
        let overlay = image::open(dir.join("overlay.png")).expect("overlay");
        assert_eq!(
            [overlay.width() as usize, overlay.height() as usize],
            case.original_size
        );
    }
}

#[test]
fn detect_reports_bad_files_and_options() {
    let out = tempfile::tempdir().expect("tempdir");
    let text = out.path().join("notes.txt");
    std::fs::write(&text, "not an image").expect("write");
    let weights = common::fixtures_dir().join("weights/random-seed1.safetensors");
    let run = |args: &[&str]| {
        superpoint()
            .arg("detect")
            .args(args)
            .arg("--weights")
            .arg(&weights)
            .arg("--out")
            .arg(out.path())
            .output()
            .expect("run superpoint")
    };
    let bad_file = run(&[text.to_str().expect("utf-8 path")]);
    assert!(!bad_file.status.success());
    assert!(String::from_utf8_lossy(&bad_file.stderr).contains("unsupported image format"));
    let image = common::fixtures_dir().join("images/coffee.png");
    let image = image.to_str().expect("utf-8 path");
    for (flag, value, field) in [
        ("--nms-radius", "-1", "nms_radius"),
        ("--max-keypoints", "-2", "max_keypoints"),
        ("--frame", "641x480", "frame"),
        ("--keypoint-threshold", "NaN", "keypoint_threshold"),
    ] {
        let r = run(&[image, flag, value]);
        assert!(!r.status.success(), "{flag} {value} must fail");
        let stderr = String::from_utf8_lossy(&r.stderr);
        assert!(stderr.contains(field), "{flag} {value}: {stderr}");
    }
    let bad_isa = superpoint()
        .args(["detect", image, "--weights"])
        .arg(&weights)
        .arg("--out")
        .arg(out.path())
        .env("SUPERPOINT_CPU_ISA", "neon")
        .output()
        .expect("run superpoint");
    assert!(
        !bad_isa.status.success(),
        "an unknown SUPERPOINT_CPU_ISA must fail"
    );
    let stderr = String::from_utf8_lossy(&bad_isa.stderr);
    assert!(stderr.contains("SUPERPOINT_CPU_ISA=\"neon\""), "{stderr}");
}

#[test]
fn info_reports_version_backends_and_weights() {
    let weights = common::fixtures_dir().join("weights/random-seed1.safetensors");
    let out = superpoint()
        .arg("info")
        .arg("--weights")
        .arg(&weights)
        .output()
        .expect("run superpoint");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(env!("CARGO_PKG_VERSION")), "{text}");
    assert!(text.contains("backends available: cpu"), "{text}");
    assert!(text.contains("random-seed1.safetensors"), "{text}");
}
