//! End to end through the public API, from the image files of every fixture case: the decoded
//! and resized plane, keypoints in original pixels, scores and descriptors against the outputs
//! of the Hugging Face implementation.

mod common;

use common::{assert_matches_fixture, cases};
use superpoint::decode::{decode_plane, PlaneSpec};
use superpoint::{Input, Options, SuperPoint};
use superpoint_graph::reference::resize::pillow_bilinear;

#[test]
fn decoded_and_resized_planes_equal_the_reference_bit_for_bit() {
    for case in cases() {
        let spec = PlaneSpec {
            channel: case.options().channel,
            bgr: false,
        };
        let plane = decode_plane(&Input::from(case.image_path()), spec).expect("decode");
        assert_eq!(
            [plane.width, plane.height],
            case.original_size,
            "{}",
            case.name
        );
        let resized = pillow_bilinear(&plane, case.frame_size[0], case.frame_size[1]);
        let want = case.input_plane();
        let differing = resized
            .data
            .iter()
            .zip(&want.data)
            .filter(|(a, b)| a != b)
            .count();
        assert_eq!(
            differing, 0,
            "{}: {differing} pixels differ from input_plane.npy",
            case.name
        );
    }
}

#[test]
fn detect_from_image_files_matches_the_fixtures() {
    for case in cases() {
        let model = SuperPoint::from_weights(case.weights_path()).expect("weights");
        let d = model
            .detect(case.image_path(), &case.options())
            .expect("detect");
        assert_eq!(d.image_size, case.original_size, "{}", case.name);
        assert_eq!(d.frame_size, case.frame_size, "{}", case.name);
        assert_eq!(d.len(), case.num_keypoints, "{}", case.name);
        assert_eq!(d.backend, "cpu");
        assert!(
            !d.device_nms,
            "{}: the CPU backend runs NMS on the host",
            case.name
        );
        assert_matches_fixture(
            &case,
            &d.keypoints,
            &d.scores,
            d.descriptors.as_deref().unwrap_or(&[]),
        );
    }
}

#[test]
fn every_input_kind_gives_the_same_detection() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_320x240_r4")
        .expect("case");
    let model = SuperPoint::from_weights(case.weights_path()).expect("weights");
    let opts = case.options();
    let from_path = model.detect(case.image_path(), &opts).expect("path");
    let bytes = std::fs::read(case.image_path()).expect("read");
    let from_bytes = model.detect(bytes.as_slice(), &opts).expect("bytes");
    let image = image::open(case.image_path()).expect("image");
    let from_image = model.detect(&image, &opts).expect("image");
    let rgb = image.to_rgb8();
    let red: Vec<u8> = rgb.pixels().map(|p| p.0[0]).collect();
    let from_plane = model
        .detect(
            Input::plane(red, rgb.width() as usize, rgb.height() as usize),
            &opts,
        )
        .expect("plane");
    let bgr = image::DynamicImage::ImageRgb8(image::RgbImage::from_fn(
        rgb.width(),
        rgb.height(),
        |x, y| {
            let [r, g, b] = rgb.get_pixel(x, y).0;
            image::Rgb([b, g, r])
        },
    ));
    let from_bgr = model
        .detect(&bgr, &Options { bgr: true, ..opts })
        .expect("bgr");
    for other in [&from_bytes, &from_image, &from_plane, &from_bgr] {
        assert_eq!(other.keypoints, from_path.keypoints);
        assert_eq!(other.scores, from_path.scores);
        assert_eq!(other.descriptors, from_path.descriptors);
    }
}

#[test]
fn lists_and_streams_keep_input_order_and_equal_single_calls() {
    let all = cases();
    let model = SuperPoint::from_weights(all[0].weights_path()).expect("weights");
    let opts = Options {
        frame: (320, 240),
        ..Options::default()
    };
    let paths: Vec<_> = [
        "astronaut.png",
        "coffee.png",
        "rocket.jpg",
        "missing.png",
        "hubble_1600x900.jpg",
    ]
    .iter()
    .map(|f| common::fixtures_dir().join("images").join(f))
    .collect();
    let listed = model.detect_all(&paths, &opts);
    assert_eq!(listed.len(), paths.len());
    let inputs: Vec<Input<'static>> = paths.iter().cloned().map(Input::from).collect();
    let one_worker: Vec<_> = model.stream_with(inputs, opts, 1).collect();
    assert_eq!(one_worker.len(), paths.len());
    for (a, b) in listed.iter().zip(&one_worker) {
        let points = |r: &superpoint::Result<superpoint::Detection>| {
            r.as_ref()
                .ok()
                .map(|d| (d.keypoints.clone(), d.descriptors.clone()))
        };
        assert_eq!(points(a), points(b), "one decoding worker, same order");
    }
    for (path, got) in paths.iter().zip(&listed) {
        match model.detect(path, &opts) {
            Ok(want) => assert_eq!(got.as_ref().expect("listed ok").keypoints, want.keypoints),
            Err(_) => assert!(
                got.is_err(),
                "{} should fail in the list too",
                path.display()
            ),
        }
    }
}

#[test]
fn without_descriptors_the_keypoints_are_the_same() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "coffee_all_points")
        .expect("case");
    let model = SuperPoint::from_weights(case.weights_path()).expect("weights");
    let opts = case.options();
    let with = model.detect(case.image_path(), &opts).expect("with");
    let without = model
        .detect(
            case.image_path(),
            &Options {
                return_descriptors: false,
                ..opts
            },
        )
        .expect("without");
    assert_eq!(with.keypoints, without.keypoints);
    assert!(without.descriptors.is_none());
}

#[test]
fn one_model_serves_several_threads() {
    let case = cases()
        .into_iter()
        .find(|c| c.name == "astronaut_320x240_no_nms")
        .expect("case");
    let model = SuperPoint::from_weights(case.weights_path()).expect("weights");
    let opts = case.options();
    let want = model.detect(case.image_path(), &opts).expect("detect");
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|_| s.spawn(|| model.detect(case.image_path(), &opts).expect("detect")))
            .collect();
        for h in handles {
            assert_eq!(h.join().expect("thread").keypoints, want.keypoints);
        }
    });
}
