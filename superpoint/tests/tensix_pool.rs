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
    assert!(
        failure.contains("on device 1: device lost: emulated device 1 stopped responding"),
        "{failure}"
    );
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

/// `superpoint detect A B C D --devices N` on `devices` emulated devices: each image's
/// `keypoints.json` and `descriptors.npy`.
fn detect_cli(images: &[std::path::PathBuf], devices: &str) -> Vec<(serde_json::Value, Vec<u8>)> {
    let out = tempfile::tempdir().expect("tempdir");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .arg("detect")
        .args(images)
        .arg("--weights")
        .arg(cases()[0].weights_path())
        .args([
            "--backend",
            "tensix",
            "--devices",
            devices,
            "--frame",
            "96x64",
        ])
        .args(["--no-overlay", "--out"])
        .arg(out.path())
        .env("TTR_EMU_DEVICES", "2")
        .output()
        .expect("run superpoint");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    images
        .iter()
        .map(|image| {
            let dir = out.path().join(image.file_stem().expect("a name"));
            let json = std::fs::read(dir.join("keypoints.json")).expect("keypoints.json");
            let npy = std::fs::read(dir.join("descriptors.npy")).expect("descriptors.npy");
            (serde_json::from_slice(&json).expect("JSON"), npy)
        })
        .collect()
}

#[test]
fn detect_on_two_devices_records_both_and_equals_one_device() {
    let dir = tempfile::tempdir().expect("tempdir");
    let images: Vec<std::path::PathBuf> = planes(4)
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let path = dir.path().join(format!("crop{i}.png"));
            image::GrayImage::from_raw(p.width as u32, p.height as u32, p.data.clone())
                .expect("a gray image")
                .save(&path)
                .expect("PNG written");
            path
        })
        .collect();
    let pool = detect_cli(&images, "2");
    let single = detect_cli(&images, "1");
    let devices: BTreeSet<u64> = pool
        .iter()
        .map(|(json, _)| json["device"].as_u64().expect("a device id"))
        .collect();
    assert_eq!(devices, BTreeSet::from([0, 1]));
    for (i, ((mut got, got_npy), (mut want, want_npy))) in pool.into_iter().zip(single).enumerate()
    {
        assert_eq!(want["device"], 0, "image {i}: one device is device 0");
        assert!(want["num_keypoints"].as_u64() > Some(0), "image {i}");
        assert_eq!(got_npy, want_npy, "image {i}: descriptors");
        for json in [&mut got, &mut want] {
            let fields = json.as_object_mut().expect("an object");
            fields.remove("device");
            fields.remove("timing_ms");
        }
        assert_eq!(got, want, "image {i}: keypoints.json");
    }
}

/// A server for `app` on 127.0.0.1 (a system-chosen port) in its own runtime, stopped when
/// dropped.
struct Serving {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Serving {
    fn start(app: superpoint::server::App) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let localhost = std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);
                let listener = superpoint::server::bind(localhost, Some(0))
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("address"))
                    .expect("send the address");
                superpoint::server::serve(listener, app, async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
            });
        });
        let addr = addr_rx.recv().expect("the server starts");
        Self {
            base: format!("http://{addr}"),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Status, `Retry-After` and JSON body of `GET path`, or of `POST path` with `body`.
    fn call(&self, path: &str, body: Option<&[u8]>) -> (u16, Option<String>, serde_json::Value) {
        let url = format!("{}{path}", self.base);
        // A request that waits for a device the test holds fails here rather than hanging.
        let agent = ureq::AgentBuilder::new()
            .timeout(std::time::Duration::from_secs(120))
            .build();
        let result = match body {
            Some(body) => agent.post(&url).send_bytes(body),
            None => agent.get(&url).call(),
        };
        let response = match result {
            Ok(r) | Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{path}: {e}"),
        };
        let retry = response.header("retry-after").map(str::to_string);
        (
            response.status(),
            retry,
            response.into_json().expect("JSON"),
        )
    }

    /// The value of a series in `/metrics` (`name{labels}`).
    fn metric(&self, series: &str) -> Option<f64> {
        let text = ureq::get(&format!("{}/metrics", self.base))
            .call()
            .expect("metrics")
            .into_string()
            .expect("text");
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn the_server_on_two_devices_is_ready_once_warm_up_is_done_and_uses_both() {
    let model = std::sync::Arc::new(model(DeviceSet::Count(2)));
    let config = superpoint::server::Config {
        frame: FRAME,
        ..superpoint::server::Config::default()
    };
    let variants = Warmup::Minimal.variants(FRAME, &[]);
    let plane = &planes(1)[0];
    let path = format!(
        "/predict_plane?width={}&height={}",
        plane.width, plane.height
    );
    // While a thread holds device 0, warm-up cannot finish there: the server is not ready.
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let holder = {
        let model = model.clone();
        std::thread::spawn(move || {
            model.tensix().expect("tensix").with_device_id(0, |_| {
                held_tx.send(()).expect("say it is held");
                let _ = release_rx.recv();
            })
        })
    };
    held_rx.recv().expect("device 0 is held");
    let app = superpoint::server::app_warming(model.clone(), config, variants).expect("the app");
    let serving = Serving::start(app);
    // Declared after `serving`, so dropped before it when an assertion fails: device 0 is let go
    // before the server waits for its requests.
    let release = release_tx;
    let (status, _, health) = serving.call("/health", None);
    assert_eq!((status, &health["status"]), (503, &"warming_up".into()));
    assert_eq!(health["total"], 2, "1 variant on 2 devices: {health}");
    let (status, retry, error) = serving.call(&path, Some(&plane.data));
    assert_eq!((status, retry.as_deref()), (503, Some("5")), "{error}");
    assert!(error["error"]
        .as_str()
        .is_some_and(|e| e.contains("warming up")));
    drop(release);
    holder
        .join()
        .expect("no panic")
        .expect("device 0 is in the pool");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(300);
    while serving.call("/health", None).0 != 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "not ready in 5 minutes"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let (_, _, info) = serving.call("/info", None);
    let devices = info["devices"].as_array().expect("devices");
    let ids: Vec<_> = devices.iter().map(|d| d["id"].as_u64()).collect();
    assert_eq!(ids, [Some(0), Some(1)], "{info}");
    for d in devices {
        assert_eq!(d["grid"], info["tensix"]["grid"], "{d}");
        assert_eq!(d["dispatch"], info["tensix"]["dispatch"], "{d}");
    }
    // Two requests at once: one on each device, neither compiling (the variant is warm).
    let answers: Vec<serde_json::Value> = std::thread::scope(|s| {
        let running: Vec<_> = (0..2)
            .map(|_| s.spawn(|| serving.call(&path, Some(&plane.data))))
            .collect();
        running
            .into_iter()
            .map(|t| {
                let (status, _, body) = t.join().expect("no panic");
                assert_eq!(status, 200, "{body}");
                body
            })
            .collect()
    });
    let used: BTreeSet<_> = answers.iter().map(|a| a["device"].as_u64()).collect();
    assert_eq!(used, BTreeSet::from([Some(0), Some(1)]));
    assert!(answers.iter().all(|a| a["timing_ms"]["compile"] == 0.0));
    assert_eq!(answers[0]["keypoints"], answers[1]["keypoints"]);
    assert_eq!(serving.metric("superpoint_ready"), Some(1.0));
    assert_eq!(
        serving.metric("superpoint_rejected_total{reason=\"warming_up\"}"),
        Some(1.0)
    );
    for id in ["0", "1"] {
        let series = |name: &str| format!("{name}{{device=\"{id}\"}}");
        assert_eq!(serving.metric(&series("superpoint_device_up")), Some(1.0));
        assert_eq!(
            serving.metric(&series("superpoint_device_frames_total")),
            Some(1.0)
        );
        assert_eq!(
            serving.metric(&series("superpoint_device_compiles_total")),
            Some(0.0)
        );
        let busy = serving.metric(&series("superpoint_device_busy_seconds_total"));
        assert!(busy.is_some_and(|b| b > 0.0), "device {id}: {busy:?}");
    }
}
