//! Bad input of every kind gives a typed error with a useful message, never a panic: broken
//! and unsupported image files, degenerate and huge sizes, files that are not files, broken
//! weights, bad options, frames too large for memory. Odd JPEGs (CMYK, YCCK, warning-level
//! corruption) decode exactly as Pillow decodes them (tests/fixtures/decode, made by Pillow).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use safetensors::{Dtype, View};
use serde::Deserialize;
use superpoint::decode::{decode_plane, read_image_file, PlaneSpec, MAX_FILE_BYTES};
use superpoint::weights::weights_from_bytes;
use superpoint::{Channel, Error, Input, Options, SuperPoint};

fn fixture_bytes(name: &str) -> Vec<u8> {
    std::fs::read(common::fixtures_dir().join("images").join(name)).expect("fixture image")
}

fn decode(bytes: &[u8]) -> Result<superpoint_graph::Tensor<u8>, Error> {
    decode_plane(&Input::from(bytes), PlaneSpec::default())
}

/// A PNG whose IHDR says `width`×`height` (valid signature and CRCs, one empty IDAT).
fn png_header_only(width: u32, height: u32) -> Vec<u8> {
    fn chunk(out: &mut Vec<u8>, kind: &[u8], data: &[u8]) {
        out.extend((data.len() as u32).to_be_bytes());
        let mut body = kind.to_vec();
        body.extend(data);
        out.extend(&body);
        out.extend(crc32fast::hash(&body).to_be_bytes());
    }
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::new();
    ihdr.extend(width.to_be_bytes());
    ihdr.extend(height.to_be_bytes());
    ihdr.extend([8, 2, 0, 0, 0]);
    chunk(&mut png, b"IHDR", &ihdr);
    chunk(&mut png, b"IDAT", &[]);
    chunk(&mut png, b"IEND", &[]);
    png
}

fn png_of_size(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image::RgbImage::new(width, height)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .expect("encode");
    out
}

#[test]
fn empty_data_is_refused() {
    assert!(matches!(decode(&[]), Err(Error::EmptyImage)));
}

#[test]
fn unknown_and_unsupported_formats_are_refused() {
    let text = decode(b"this is a text file, not an image");
    assert!(matches!(text, Err(Error::UnsupportedFormat(_))), "{text:?}");
    // An ICO header: a format the image crate recognises but the detector does not accept.
    let ico = decode(&[0, 0, 1, 0, 1, 0, 16, 16, 0, 0, 1, 0, 32, 0]);
    assert!(matches!(ico, Err(Error::UnsupportedFormat(_))), "{ico:?}");
}

#[test]
fn corrupt_and_truncated_files_are_decode_errors() {
    for name in ["astronaut.png", "rocket.jpg"] {
        let bytes = fixture_bytes(name);
        let truncated = decode(&bytes[..bytes.len() / 3]);
        assert!(
            matches!(truncated, Err(Error::Decode(_))),
            "{name} truncated: {truncated:?}"
        );
        let mut corrupt = bytes.clone();
        for b in corrupt.iter_mut().skip(64).step_by(7) {
            *b ^= 0x5a;
        }
        // PNG chunks carry CRCs, so corruption is always detected; a JPEG decoder may recover
        // damaged entropy-coded data, and then the plane must still have the header's size.
        match (name, decode(&corrupt)) {
            (_, Err(Error::Decode(_))) => {}
            ("rocket.jpg", Ok(plane)) => assert_eq!((plane.width, plane.height), (640, 427)),
            (_, other) => panic!("{name} corrupt: {other:?}"),
        }
    }
    let header_only = decode(&fixture_bytes("rocket.jpg")[..200]);
    assert!(
        matches!(header_only, Err(Error::Decode(_))),
        "{header_only:?}"
    );
}

#[test]
fn tiny_and_empty_images_are_refused() {
    let one = decode(&png_of_size(1, 1));
    assert!(
        matches!(
            one,
            Err(Error::ImageSize {
                width: 1,
                height: 1,
                ..
            })
        ),
        "{one:?}"
    );
    let zero = decode(&png_header_only(0, 0));
    assert!(zero.is_err(), "{zero:?}");
    let plane = decode_plane(&Input::plane(Vec::new(), 0, 0), PlaneSpec::default());
    assert!(matches!(plane, Err(Error::ImageSize { .. })), "{plane:?}");
}

#[test]
fn a_huge_png_header_is_refused_before_decoding() {
    let huge = decode(&png_header_only(30000, 30000));
    match huge {
        Err(Error::ImageSize { width, height, why }) => {
            assert_eq!((width, height), (30000, 30000));
            assert!(why.contains("too large"), "{why}");
        }
        Err(Error::Decode(msg)) => assert!(msg.contains("16384"), "{msg}"),
        other => panic!("expected a size error, got {other:?}"),
    }
}

#[test]
fn a_plane_of_the_wrong_length_is_refused() {
    let r = decode_plane(&Input::plane(vec![0u8; 100], 16, 16), PlaneSpec::default());
    match r {
        Err(Error::PlaneLength { len, expected, .. }) => assert_eq!((len, expected), (100, 256)),
        other => panic!("expected a plane length error, got {other:?}"),
    }
}

fn fixture_weight_tensors() -> Vec<(String, Vec<usize>, Vec<u8>)> {
    let bytes = std::fs::read(common::fixtures_dir().join("weights/random-seed1.safetensors"))
        .expect("weights");
    let st = safetensors::SafeTensors::deserialize(&bytes).expect("parse");
    st.tensors()
        .into_iter()
        .map(|(name, view)| (name, view.shape().to_vec(), view.data().to_vec()))
        .collect()
}

struct Raw {
    dtype: Dtype,
    shape: Vec<usize>,
    data: Vec<u8>,
}

impl View for &Raw {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> std::borrow::Cow<'_, [u8]> {
        std::borrow::Cow::Borrowed(&self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The fixture checkpoint with `edit` applied to its tensors, serialised again.
fn edited_weights(edit: impl Fn(&mut HashMap<String, Raw>)) -> Vec<u8> {
    let mut tensors: HashMap<String, Raw> = fixture_weight_tensors()
        .into_iter()
        .map(|(name, shape, data)| {
            (
                name,
                Raw {
                    dtype: Dtype::F32,
                    shape,
                    data,
                },
            )
        })
        .collect();
    edit(&mut tensors);
    safetensors::serialize(tensors.iter().map(|(k, v)| (k.clone(), v)), None).expect("serialize")
}

fn weight_error(bytes: &[u8]) -> Error {
    weights_from_bytes(bytes, Path::new("test.safetensors")).expect_err("must be refused")
}

#[test]
fn the_fixture_weights_load() {
    let set =
        weights_from_bytes(&edited_weights(|_| {}), Path::new("ok.safetensors")).expect("load");
    assert_eq!(set.len(), 12);
}

#[test]
fn weights_missing_a_tensor_name_it() {
    let e = weight_error(&edited_weights(|t| {
        t.remove("keypoint_decoder.conv_score_b.bias");
    }));
    let msg = e.to_string();
    assert!(matches!(e, Error::WeightTensor { .. }), "{msg}");
    assert!(
        msg.contains("keypoint_decoder.conv_score_b.bias") && msg.contains("missing"),
        "{msg}"
    );
}

#[test]
fn weights_with_a_wrong_shape_name_it() {
    let e = weight_error(&edited_weights(|t| {
        let w = t
            .get_mut("encoder.conv_blocks.1.conv_a.weight")
            .expect("tensor");
        w.shape = vec![64, 64, 9, 1];
    }));
    let msg = e.to_string();
    assert!(
        msg.contains("encoder.conv_blocks.1.conv_a.weight") && msg.contains("shape"),
        "{msg}"
    );
}

#[test]
fn weights_with_a_wrong_dtype_name_it() {
    let e = weight_error(&edited_weights(|t| {
        let b = t
            .get_mut("encoder.conv_blocks.0.conv_a.bias")
            .expect("tensor");
        b.dtype = Dtype::I32;
    }));
    let msg = e.to_string();
    assert!(
        msg.contains("encoder.conv_blocks.0.conv_a.bias") && msg.contains("dtype"),
        "{msg}"
    );
}

#[test]
fn weights_in_the_original_naming_load_the_same() {
    let hf = weights_from_bytes(&edited_weights(|_| {}), Path::new("hf")).expect("hf");
    let original = edited_weights(|t| {
        let renamed: HashMap<String, Raw> = t
            .drain()
            .map(|(name, raw)| {
                let layer = superpoint_graph::CONV_LAYERS
                    .iter()
                    .find(|l| name.starts_with(l.hf_prefix))
                    .expect("known tensor");
                (name.replacen(layer.hf_prefix, layer.name, 1), raw)
            })
            .collect();
        *t = renamed;
    });
    assert_eq!(
        weights_from_bytes(&original, Path::new("orig")).expect("original"),
        hf
    );
}

#[test]
fn a_file_that_is_not_safetensors_is_refused() {
    let e = weight_error(b"PK\x03\x04 this is a zip, maybe a .pth");
    assert!(matches!(e, Error::Weights { .. }), "{e}");
    assert!(e.to_string().contains("safetensors"), "{e}");
    let missing = SuperPoint::from_weights("/nonexistent/weights.safetensors");
    assert!(matches!(missing, Err(Error::Io { .. })));
}

#[test]
fn options_out_of_range_are_refused() {
    let negative_radius = Options::default().with_nms_radius(-1);
    assert!(matches!(
        negative_radius,
        Err(Error::InvalidOption {
            name: "nms_radius",
            ..
        })
    ));
    let cases = [
        (
            Options {
                keypoint_threshold: f32::NAN,
                ..Options::default()
            },
            "keypoint_threshold",
        ),
        (
            Options {
                max_keypoints: -2,
                ..Options::default()
            },
            "max_keypoints",
        ),
        (
            Options {
                frame: (642, 480),
                ..Options::default()
            },
            "frame",
        ),
        (
            Options {
                frame: (0, 0),
                ..Options::default()
            },
            "frame",
        ),
        (
            Options {
                nms_radius: 1000,
                ..Options::default()
            },
            "nms_radius",
        ),
    ];
    for (options, field) in cases {
        match options.validate() {
            Err(Error::InvalidOption { name, .. }) => assert_eq!(name, field),
            other => panic!("{field}: expected an option error, got {other:?}"),
        }
    }
    let model =
        SuperPoint::from_weights(common::fixtures_dir().join("weights/random-seed1.safetensors"))
            .expect("weights");
    let bad = Options {
        max_keypoints: -5,
        ..Options::default()
    };
    let r = model.detect(common::fixtures_dir().join("images/coffee.png"), &bad);
    assert!(matches!(r, Err(Error::InvalidOption { .. })));
}

/// One file of tests/fixtures/decode (see its generate.py) and what Pillow made of it.
#[derive(Debug, Deserialize)]
struct PillowCase {
    name: String,
    file: String,
    /// "decodes" or "error".
    pillow: String,
    mode: Option<String>,
}

fn decode_fixtures() -> PathBuf {
    common::fixtures_dir().join("decode")
}

fn pillow_cases() -> Vec<PillowCase> {
    let text = std::fs::read_to_string(decode_fixtures().join("cases.json")).expect("cases.json");
    serde_json::from_str(&text).expect("parse cases.json")
}

#[test]
fn odd_jpegs_decode_bit_exactly_as_pillow_does() {
    let cases = pillow_cases();
    assert_eq!(cases.len(), 12, "the fixture set");
    let mut four_components = 0;
    for case in cases.iter().filter(|c| c.pillow == "decodes") {
        let bytes = std::fs::read(decode_fixtures().join(&case.file)).expect("fixture");
        for (channel, suffix) in [(Channel::Red, "r"), (Channel::Luma, "l")] {
            let spec = PlaneSpec {
                channel,
                bgr: false,
            };
            let plane = decode_plane(&Input::from(&bytes[..]), spec)
                .unwrap_or_else(|e| panic!("{}: Pillow decodes it, we say {e}", case.name));
            let (shape, want) = common::read_npy::<u8>(
                &decode_fixtures().join(format!("{}.{suffix}.npy", case.name)),
            );
            assert_eq!(shape, vec![plane.height, plane.width], "{}", case.name);
            let differing = plane.data.iter().zip(&want).filter(|(a, b)| a != b).count();
            assert_eq!(
                differing, 0,
                "{} ({suffix}): pixels unlike Pillow's",
                case.name
            );
        }
        if case.mode.as_deref() == Some("CMYK") {
            four_components += 1;
        }
    }
    assert_eq!(four_components, 3, "CMYK, progressive CMYK and YCCK");
}

#[test]
fn the_odd_jpegs_are_ones_a_plain_turbojpeg_decode_refuses() {
    // What makes the fixtures worth having: libjpeg-turbo's TurboJPEG API (through the
    // `turbojpeg` crate, which fails on warnings) cannot decode any of them to RGB as it is.
    for case in pillow_cases()
        .iter()
        .filter(|c| c.pillow == "decodes" && c.name != "gray")
    {
        let bytes = std::fs::read(decode_fixtures().join(&case.file)).expect("fixture");
        let plain = turbojpeg::decompress(&bytes, turbojpeg::PixelFormat::RGB);
        assert!(
            plain.is_err(),
            "{}: a plain decode works, so it is not odd",
            case.name
        );
    }
}

#[test]
fn jpegs_pillow_refuses_as_truncated_are_refused() {
    let refused: Vec<PillowCase> = pillow_cases()
        .into_iter()
        .filter(|c| c.pillow == "error")
        .collect();
    assert_eq!(refused.len(), 2);
    for case in refused {
        let bytes = std::fs::read(decode_fixtures().join(&case.file)).expect("fixture");
        match decode(&bytes) {
            Err(Error::Decode(message)) => assert!(message.contains("truncated"), "{message}"),
            other => panic!("{}: Pillow refuses it, we give {other:?}", case.name),
        }
    }
}

#[test]
fn a_ten_byte_jpeg_says_it_is_truncated() {
    let e = decode(&fixture_bytes("rocket.jpg")[..10]).expect_err("10 bytes");
    let message = e.to_string();
    assert!(
        message.contains("truncated or not a JPEG") && !message.contains("overflow"),
        "{message}"
    );
}

#[test]
fn paths_that_are_not_regular_files_or_too_large_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zero = dir.path().join("z.png");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let fifo = dir.path().join("pipe.png");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    for (path, kind) in [
        (zero, "a character device"),
        (fifo, "a FIFO"),
        (dir.path().to_path_buf(), "a directory"),
    ] {
        match read_image_file(&path) {
            Err(e @ Error::NotAFile { .. }) => {
                assert!(e.to_string().contains(kind), "{e}")
            }
            other => panic!("{}: {other:?}", path.display()),
        }
    }
    let big = dir.path().join("big.png");
    let file = std::fs::File::create(&big).expect("create");
    file.set_len(MAX_FILE_BYTES + 1).expect("sparse file");
    match read_image_file(&big) {
        Err(Error::FileTooLarge { len, limit, .. }) => {
            assert_eq!((len, limit), (MAX_FILE_BYTES + 1, MAX_FILE_BYTES))
        }
        other => panic!("{other:?}"),
    }
}

fn superpoint() -> Command {
    Command::new(env!("CARGO_BIN_EXE_superpoint"))
}

fn weights_path() -> PathBuf {
    common::fixtures_dir().join("weights/random-seed1.safetensors")
}

#[test]
fn detect_refuses_a_device_file_and_names_a_missing_file_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let zero = dir.path().join("z.png");
    std::os::unix::fs::symlink("/dev/zero", &zero).expect("symlink");
    let missing = dir.path().join("missing.png");
    let out = superpoint()
        .arg("detect")
        .args([&zero, &missing])
        .arg("--weights")
        .arg(weights_path())
        .args(["--backend", "cpu", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .expect("run superpoint");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("is a character device, not a regular file"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("No such file or directory").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn a_frame_too_large_for_memory_fails_with_a_message_under_an_address_space_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let image = common::fixtures_dir().join("images/coffee.png");
    // 3 GB of address space, as `ulimit -v` sets it in a child shell: a 4096x4096 frame needs
    // far more; a 320x240 one fits.
    let run = |frame: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(r#"ulimit -v 3000000 && exec "$@""#)
            .arg("sh")
            .arg(env!("CARGO_BIN_EXE_superpoint"))
            .arg("detect")
            .arg(&image)
            .arg("--weights")
            .arg(weights_path())
            .args([
                "--backend",
                "cpu",
                "--no-overlay",
                "--frame",
                frame,
                "--out",
            ])
            .arg(dir.path().join(frame))
            .output()
            .expect("run superpoint")
    };
    let huge = run("4096x4096");
    let stderr = String::from_utf8_lossy(&huge.stderr);
    assert_eq!(
        huge.status.code(),
        Some(1),
        "exits with an error, no abort: {stderr}"
    );
    assert!(
        stderr.contains("not enough memory") && stderr.contains("--frame"),
        "{stderr}"
    );
    let small = run("320x240");
    assert!(
        small.status.success(),
        "{}",
        String::from_utf8_lossy(&small.stderr)
    );
}

#[test]
fn info_with_weights_holding_nan_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nan.safetensors");
    let bytes = edited_weights(|t| {
        let bias = t
            .get_mut("encoder.conv_blocks.0.conv_a.bias")
            .expect("tensor");
        bias.data[..4].copy_from_slice(&f32::NAN.to_le_bytes());
    });
    std::fs::write(&path, bytes).expect("write");
    let out = superpoint()
        .arg("info")
        .arg("--weights")
        .arg(&path)
        .output()
        .expect("run superpoint");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("NaN"), "{stderr}");
}

#[test]
fn a_progressive_jpeg_with_too_many_scans_is_refused_as_a_bomb() {
    // The fixture's last progressive scan repeated 1100 times: libjpeg only warns about the
    // repeats, so without the scan limit every scan would be decoded (Pillow does so).
    let jpeg = std::fs::read(decode_fixtures().join("cmyk_progressive.jpg")).expect("fixture");
    let eoi = jpeg.len() - 2;
    assert_eq!(&jpeg[eoi..], [0xFF, 0xD9]);
    let last_scan = (0..eoi - 1)
        .rev()
        .find(|&i| jpeg[i] == 0xFF && jpeg[i + 1] == 0xDA)
        .expect("a scan");
    let mut bomb = jpeg[..eoi].to_vec();
    for _ in 0..1100 {
        bomb.extend_from_slice(&jpeg[last_scan..eoi]);
    }
    bomb.extend_from_slice(&[0xFF, 0xD9]);
    match decode(&bomb) {
        Err(Error::Decode(message)) => {
            assert!(message.contains("decompression bomb"), "{message}")
        }
        other => panic!("{other:?}"),
    }
    // The same file with its scans as written decodes.
    decode(&jpeg).expect("the fixture itself");
}
