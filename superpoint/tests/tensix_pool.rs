//! The Tensix device pool on the emulator (two emulated p150a): frames in flight spread over
//! both devices and give bit for bit what one device gives; a device made to fail mid-run (the
//! emulator's fault injection, a test-only feature) leaves the pool and every frame still
//! completes; warm-up prepares exactly the variants listed, on every device.
//!
//! Frames are 96×64 crops of a fixture's input plane (a 96×64 frame runs in well under a second
//! on the emulator; its kernels compile once, cached on disk).

mod common;

use std::collections::BTreeSet;

use common::cases;
use superpoint::backend::tensix::LoadedProgram;
use superpoint::{Backend, Detection, DeviceSet, Error, Input, Options, SuperPoint, Warmup};
use superpoint::{WarmupStep, WarmupVariant};
use superpoint_graph::Tensor;

const FRAME: (usize, usize) = (96, 64);

fn options() -> Options {
    Options {
        frame: FRAME,
        ..Options::default()
    }
}

/// A model on `devices` of two emulated devices, without warm-up.
fn model(devices: DeviceSet) -> SuperPoint {
    tt_runtime::Device::emulate_devices(2).expect("the emulator presents two devices");
    SuperPoint::builder()
        .weights(cases()[0].weights_path())
        .backend(Backend::Tensix)
        .devices(devices)
        .frame(FRAME)
        .warmup(Warmup::None)
        .build()
        .expect("the Tensix backend opens on the emulator")
}

/// `n` different frame-sized planes: crops along the diagonal of a fixture's input plane.
fn planes(n: usize) -> Vec<Tensor<u8>> {
    let source = cases()[0].input_plane();
    let (w, h) = FRAME;
    (0..n)
        .map(|i| {
            let x0 = i * (source.width - w) / n;
            let y0 = i * (source.height - h) / n;
            let data = (0..h)
                .flat_map(|y| {
                    let row = (y0 + y) * source.width + x0;
                    source.data[row..row + w].to_vec()
                })
                .collect();
            Tensor::from_vec(1, h, w, data).expect("a plane")
        })
        .collect()
}

fn input(plane: &Tensor<u8>) -> Input<'_> {
    Input::plane(&plane.data, plane.width, plane.height)
}

/// What one device gives for each plane, one frame at a time.
fn one_device(planes: &[Tensor<u8>]) -> Vec<Detection> {
    let single = model(DeviceSet::Count(1));
    planes
        .iter()
        .map(|p| single.detect(input(p), &options()).expect("one device"))
        .collect()
}

/// Keypoints, scores and descriptors equal bit for bit.
fn assert_same(got: &Detection, want: &Detection, what: &str) {
    assert!(!want.is_empty(), "{what}: the reference has keypoints");
    assert_eq!(got.keypoints, want.keypoints, "{what}: keypoints");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got.scores), bits(&want.scores), "{what}: scores");
    assert_eq!(
        bits(got.descriptors.as_deref().unwrap_or_default()),
        bits(want.descriptors.as_deref().unwrap_or_default()),
        "{what}: descriptors"
    );
}

/// Runs every plane on `model` at once, one thread each.
fn all_at_once(model: &SuperPoint, planes: &[Tensor<u8>]) -> Vec<Result<Detection, Error>> {
    std::thread::scope(|s| {
        let running: Vec<_> = planes
            .iter()
            .map(|p| s.spawn(move || model.detect(input(p), &options())))
            .collect();
        running
            .into_iter()
            .map(|t| t.join().expect("no panic"))
            .collect()
    })
}

#[test]
fn eight_frames_in_flight_run_on_both_devices_and_match_one_device() {
    let planes = planes(8);
    let reference = one_device(&planes);
    let pool = model(DeviceSet::Count(2));
    assert_eq!(pool.parallelism(), 2);
    let threads = all_at_once(&pool, &planes);
    let streamed = pool.detect_all(planes.iter().map(input), &options());
    for (how, results) in [("8 threads", threads), ("detect_all", streamed)] {
        let mut used = BTreeSet::new();
        for (i, (got, want)) in results.iter().zip(&reference).enumerate() {
            let got = got.as_ref().expect("frame");
            assert_same(got, want, &format!("{how}, frame {i}"));
            used.insert(got.device.expect("a device id"));
        }
        assert_eq!(
            used,
            BTreeSet::from([0, 1]),
            "{how}: both devices ran frames"
        );
    }
    let stats = pool.tensix().expect("tensix").devices();
    assert_eq!(stats.iter().map(|d| d.stats.frames).sum::<u64>(), 16);
    assert!(stats
        .iter()
        .all(|d| d.stats.queue == 0 && d.stats.failed.is_none()));
}

#[test]
fn a_device_failing_mid_run_leaves_the_pool_and_every_frame_completes() {
    let planes = planes(8);
    let reference = one_device(&planes);
    let pool = model(DeviceSet::Count(2));
    let tensix = pool.tensix().expect("tensix");
    pool.warmup(FRAME, &options()).expect("warm-up");
    let steps = tensix.info().devices[1].programs[0].steps as u64;
    // Device 1 replays one whole frame, then fails three programs into its next one.
    tensix
        .with_device_id(1, |d| d.fail_after(steps + 3))
        .expect("device 1 is in the pool")
        .expect("the emulator injects faults");
    let results = all_at_once(&pool, &planes);
    let mut on_device_1 = 0;
    for (i, (got, want)) in results.iter().zip(&reference).enumerate() {
        let got = got.as_ref().expect("every frame completes");
        assert_same(got, want, &format!("frame {i}"));
        on_device_1 += usize::from(got.device == Some(1));
    }
    assert_eq!(on_device_1, 1, "device 1 ran one frame before it failed");
    assert_eq!(tensix.healthy_devices(), 1);
    let devices = tensix.devices();
    let failure = devices[1].stats.failed.as_deref().expect("device 1 failed");
    assert!(failure.contains("device 1"), "{failure}");
    assert!(devices[0].stats.failed.is_none());
    // Later frames run on device 0; once it fails too, frames fail naming both failures.
    let after = pool
        .detect(input(&planes[0]), &options())
        .expect("device 0");
    assert_eq!(after.device, Some(0));
    tensix
        .with_device_id(0, |d| d.fail_after(0))
        .expect("device 0 is in the pool")
        .expect("the emulator injects faults");
    let e = pool
        .detect(input(&planes[0]), &options())
        .expect_err("no device left");
    let message = e.to_string();
    assert!(
        message.contains("no Tensix device is left")
            && message.contains("device 0:")
            && message.contains("device 1:"),
        "{message}"
    );
}

/// The programs of each device as (kind, input size, trace captured).
fn programs(model: &SuperPoint) -> Vec<BTreeSet<(String, [u32; 2], bool)>> {
    let key = |p: &LoadedProgram| (p.kind.clone(), p.input, p.trace_captured);
    model
        .tensix()
        .expect("tensix")
        .info()
        .devices
        .iter()
        .map(|d| d.programs.iter().map(key).collect())
        .collect()
}

#[test]
fn warm_up_prepares_exactly_the_listed_variants_on_every_device() {
    let pool = model(DeviceSet::Count(2));
    assert!(programs(&pool).iter().all(BTreeSet::is_empty));
    let variant = |input, nms_radius| WarmupVariant {
        input,
        frame: FRAME,
        nms_radius,
    };
    let listed = [variant((128, 96), 4), variant(FRAME, 4), variant(FRAME, 2)];
    let steps = std::sync::Mutex::new(Vec::<WarmupStep>::new());
    let record = |s: &WarmupStep| steps.lock().expect("steps").push(*s);
    pool.warmup_variants(&listed, Some(&record))
        .expect("warm-up");
    let want: BTreeSet<_> = [
        ("main".to_string(), [128, 96], true),
        ("main".to_string(), [96, 64], true),
        ("nms2".to_string(), [96, 64], true),
    ]
    .into();
    assert_eq!(programs(&pool), vec![want.clone(), want.clone()]);
    let steps = steps.into_inner().expect("steps");
    assert_eq!(steps.len(), 6, "3 variants on 2 devices");
    assert!(steps.iter().all(|s| s.prepared && s.total == 6));
    let mut done: Vec<usize> = steps.iter().map(|s| s.done).collect();
    done.sort_unstable();
    assert_eq!(done, (1..=6).collect::<Vec<_>>());
    // Warm variants compile nothing again, at warm-up or in a frame.
    let again = std::sync::Mutex::new(Vec::<bool>::new());
    let record = |s: &WarmupStep| again.lock().expect("again").push(s.prepared);
    pool.warmup_variants(&listed, Some(&record))
        .expect("warm-up");
    assert_eq!(again.into_inner().expect("again"), vec![false; 6]);
    let plane = &planes(1)[0];
    let warm = pool
        .detect(
            input(plane),
            &Options {
                nms_radius: 2,
                ..options()
            },
        )
        .expect("warm frame");
    assert_eq!(warm.timing.compile, 0.0);
    assert_eq!(programs(&pool), vec![want.clone(), want]);
    // A variant nobody warmed compiles in the frame that needs it, and says so.
    let cold_plane = Tensor::from_vec(1, 64, 80, vec![128u8; 80 * 64]).expect("plane");
    let cold = pool
        .detect(input(&cold_plane), &options())
        .expect("cold frame");
    assert!(cold.timing.compile > 0.0, "{:?}", cold.timing);
    let devices = pool.tensix().expect("tensix").devices();
    let compiled: Vec<u64> = devices.iter().map(|d| d.stats.compiles).collect();
    assert_eq!(compiled.iter().sum::<u64>(), 1, "{compiled:?}");
}

#[test]
fn device_sets_the_runtime_cannot_give_are_refused_before_anything_runs() {
    tt_runtime::Device::emulate_devices(2).expect("two devices");
    let builder = || {
        SuperPoint::builder()
            .weights(cases()[0].weights_path())
            .backend(Backend::Tensix)
            .warmup(Warmup::None)
    };
    for (set, needle) in [
        (
            DeviceSet::Count(3),
            "include device 2, but the runtime has 2",
        ),
        (DeviceSet::Ids(vec![0, 5]), "include device 5"),
        (DeviceSet::Ids(vec![1, 1]), "listed twice"),
    ] {
        let e = builder().devices(set).build().err().expect("refused");
        assert!(e.to_string().contains(needle), "{e}");
    }
    let pool = builder()
        .devices(DeviceSet::Ids(vec![1]))
        .build()
        .expect("device 1 alone");
    let ids: Vec<u32> = pool
        .tensix()
        .expect("tensix")
        .devices()
        .iter()
        .map(|d| d.stats.id)
        .collect();
    assert_eq!(ids, vec![1]);
}
