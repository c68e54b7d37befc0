//! The HTTP service against a server on loopback: every route, every kind of bad input, the
//! limits, 100 concurrent requests, a panicking handler, and `superpoint serve` itself (default
//! port, ready line, graceful shutdown on SIGTERM). Responses must equal the library's output
//! for the same image and options (descriptors as the library's f32 values rounded to f16).

mod common;

use std::io::{BufRead, BufReader, Cursor, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::routing::get;
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use half::f16;
use serde_json::{json, Value};
use superpoint::decode::{decode_plane, PlaneSpec};
use superpoint::server::{self, Config};
use superpoint::{Backend, Detection, Input, Options, SuperPoint};

use common::fixtures_dir;

fn weights_path() -> PathBuf {
    fixtures_dir().join("weights/random-seed1.safetensors")
}

fn image(name: &str) -> Vec<u8> {
    std::fs::read(fixtures_dir().join("images").join(name)).expect("fixture image")
}

fn model() -> SuperPoint {
    SuperPoint::builder()
        .weights(weights_path())
        .backend(Backend::Cpu)
        .build()
        .expect("fixture weights")
}

/// The small frame most tests use, for speed.
fn small() -> Config {
    Config {
        frame: (320, 240),
        ..Config::default()
    }
}

/// A server on 127.0.0.1 (system-chosen port) in its own runtime; stopped when dropped.
struct TestServer {
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(config: Config) -> Self {
        Self::with_router(move || server::app(model(), config).expect("app"))
    }

    fn with_router(make: impl FnOnce() -> Router + Send + 'static) -> Self {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel::<SocketAddr>();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let app = make();
                let listener = server::bind(IpAddr::V4(Ipv4Addr::LOCALHOST), Some(0))
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("address"))
                    .expect("send address");
                server::serve(listener, app, async {
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

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn agent() -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(300))
        .build()
}

/// Status and JSON body of a response, whatever the status.
fn answer(result: Result<ureq::Response, ureq::Error>) -> (u16, Value) {
    let response = match result {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("request failed: {e}"),
    };
    let status = response.status();
    assert_eq!(
        response.content_type(),
        "application/json",
        "status {status}"
    );
    (status, response.into_json().expect("a JSON body"))
}

fn get_json(url: &str) -> (u16, Value) {
    answer(agent().get(url).call())
}

fn post_json(url: &str, body: &Value) -> (u16, Value) {
    answer(agent().post(url).send_json(body.clone()))
}

fn post_bytes(url: &str, body: &[u8]) -> (u16, Value) {
    answer(agent().post(url).send_bytes(body))
}

/// The (N, dim) float16 array of a response's base64 NPZ.
fn descriptors(response: &Value) -> ([usize; 2], Vec<f16>) {
    let d = &response["descriptors"];
    assert_eq!(d["dtype"], "float16");
    let npz = STANDARD
        .decode(d["data"].as_str().expect("descriptors.data"))
        .expect("base64");
    let mut archive = zip::ZipArchive::new(Cursor::new(npz)).expect("an NPZ (zip) archive");
    let mut npy = Vec::new();
    archive
        .by_name("descriptors.npy")
        .expect("descriptors.npy in the archive")
        .read_to_end(&mut npy)
        .expect("read npy");
    assert_eq!(&npy[..8], b"\x93NUMPY\x01\x00");
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0, "data aligned to 64 bytes");
    let header = std::str::from_utf8(&npy[10..10 + header_len]).expect("header text");
    assert!(header.contains("'descr': '<f2'") && header.contains("'fortran_order': False"));
    let shape: [usize; 2] = serde_json::from_value(d["shape"].clone()).expect("shape");
    assert!(
        header.contains(&format!("'shape': ({}, {})", shape[0], shape[1])),
        "{header}"
    );
    let data: Vec<f16> = npy[10 + header_len..]
        .chunks_exact(2)
        .map(|b| f16::from_le_bytes([b[0], b[1]]))
        .collect();
    assert_eq!(data.len(), shape[0] * shape[1]);
    (shape, data)
}

/// Asserts that a prediction response carries exactly the library's detection.
fn assert_equals_library(response: &Value, want: &Detection) {
    let keypoints: Vec<[f32; 2]> =
        serde_json::from_value(response["keypoints"].clone()).expect("keypoints");
    let scores: Vec<f32> = serde_json::from_value(response["scores"].clone()).expect("scores");
    assert!(!want.is_empty());
    assert_eq!(response["num_keypoints"], want.len());
    assert_eq!(keypoints, want.keypoints);
    assert_eq!(scores, want.scores);
    assert_eq!(response["original_size"], json!(want.image_size));
    assert_eq!(response["image_size"], json!(want.frame_size));
    let scale: [f32; 2] = serde_json::from_value(response["scale"].clone()).expect("scale");
    assert_eq!(scale, want.scale);
    assert_eq!(response["serving_path"], "cpu");
    for stage in ["preprocess", "device_forward", "postprocess", "total"] {
        assert!(
            response["timing_ms"][stage].as_f64().expect(stage) >= 0.0,
            "{stage}"
        );
    }
    match &want.descriptors {
        Some(rows) => {
            let (shape, data) = descriptors(response);
            assert_eq!(shape, [want.len(), 256]);
            let got: Vec<u16> = data.iter().map(|v| v.to_bits()).collect();
            let expected: Vec<u16> = rows.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
            assert_eq!(got, expected, "descriptors = the library's rounded to f16");
        }
        None => assert_eq!(response["descriptors"], Value::Null),
    }
}

#[test]
fn health_info_and_models_describe_the_server() {
    let srv = TestServer::start(small());
    let (status, health) = get_json(&srv.url("/health"));
    assert_eq!((status, health), (200, json!({"status": "ok"})));

    let (status, info) = get_json(&srv.url("/info"));
    assert_eq!(status, 200);
    assert_eq!(info["model"], "superpoint");
    assert_eq!(info["backend"], "cpu");
    assert_eq!(info["frame"], json!([320, 240]));
    assert!(info["weights"]
        .as_str()
        .expect("weights")
        .contains("random-seed1.safetensors"));
    assert_eq!(info["limits"]["body_limit_bytes"], 32 << 20);
    assert_eq!(info["limits"]["max_pixels"], 100_000_000);
    assert_eq!(info["defaults"]["max_keypoints"], 1024);

    let (status, models) = get_json(&srv.url("/v1/models"));
    assert_eq!(status, 200);
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], "magic-leap-community/superpoint");
}

#[test]
fn every_predict_route_equals_the_library_on_coffee_at_320x240() {
    let srv = TestServer::start(small());
    let model = model();
    let bytes = image("coffee.png");
    let options = Options {
        frame: (320, 240),
        max_keypoints: -1,
        nms_radius: 2,
        ..Options::default()
    };
    let want = model.detect(&bytes[..], &options).expect("library");

    let request = json!({"image": STANDARD.encode(&bytes), "max_keypoints": -1, "nms_radius": 2});
    let (status, response) = post_json(&srv.url("/predict"), &request);
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);

    let (status, response) = post_bytes(
        &srv.url("/predict_raw?max_keypoints=-1&nms_radius=2"),
        &bytes,
    );
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);

    let plane = decode_plane(&Input::from(&bytes[..]), PlaneSpec::default()).expect("plane");
    let url = format!(
        "/predict_plane?height={}&width={}&max_keypoints=-1&nms_radius=2",
        plane.height, plane.width
    );
    let (status, response) = post_bytes(&srv.url(&url), &plane.data);
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);

    // Without descriptors: the same points, `descriptors` null.
    let lean = Options {
        return_descriptors: false,
        max_keypoints: 100,
        ..options
    };
    let want = model.detect(&bytes[..], &lean).expect("library");
    let request = json!({
        "image": STANDARD.encode(&bytes), "max_keypoints": 100, "nms_radius": 2,
        "return_descriptors": false,
    });
    let (status, response) = post_json(&srv.url("/predict"), &request);
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);
}

#[test]
fn predict_equals_the_library_on_the_hubble_jpeg_at_640x480() {
    let srv = TestServer::start(Config::default());
    let bytes = image("hubble_1600x900.jpg");
    let options = Options {
        nms_radius: 8,
        ..Options::default()
    };
    let want = model().detect(&bytes[..], &options).expect("library");
    assert_eq!(want.image_size, [1600, 900]);

    let request = json!({"image": STANDARD.encode(&bytes), "nms_radius": 8});
    let (status, response) = post_json(&srv.url("/predict"), &request);
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);

    let (status, response) = post_bytes(&srv.url("/predict_raw?nms_radius=8"), &bytes);
    assert_eq!(status, 200, "{response}");
    assert_equals_library(&response, &want);
}

#[test]
fn bad_input_gets_a_4xx_with_a_json_message() {
    let srv = TestServer::start(small());
    let rocket = STANDARD.encode(image("rocket.jpg"));
    let png = image("coffee.png");
    let json_cases = [
        ("missing image", json!({"max_keypoints": 5}), 422),
        ("bad base64", json!({"image": "!!not base64!!"}), 400),
        (
            "not an image",
            json!({"image": STANDARD.encode("hello, not an image")}),
            422,
        ),
        (
            "truncated PNG",
            json!({"image": STANDARD.encode(&png[..2000])}),
            422,
        ),
        ("empty image", json!({"image": ""}), 422),
        (
            "negative nms_radius",
            json!({"image": rocket, "nms_radius": -1}),
            422,
        ),
        (
            "nms_radius too large",
            json!({"image": rocket, "nms_radius": 65}),
            422,
        ),
        (
            "max_keypoints < -1",
            json!({"image": rocket, "max_keypoints": -2}),
            422,
        ),
        (
            "threshold not a number",
            json!({"image": rocket, "keypoint_threshold": "x"}),
            422,
        ),
        (
            "threshold overflows f32",
            json!({"image": rocket, "keypoint_threshold": 1e300}),
            422,
        ),
        (
            "unknown field",
            json!({"image": rocket, "max_keypoint": 5}),
            422,
        ),
    ];
    for (what, body, want) in json_cases {
        let (status, response) = post_json(&srv.url("/predict"), &body);
        assert_eq!(status, want, "{what}: {response}");
        assert!(
            !response["error"]
                .as_str()
                .expect("error message")
                .is_empty(),
            "{what}"
        );
    }
    let jpeg = image("rocket.jpg");
    let byte_cases: [(&str, &str, &[u8], u16); 13] = [
        ("not JSON", "/predict", b"{not json", 400),
        (
            "NaN threshold",
            "/predict_raw?keypoint_threshold=NaN",
            &jpeg,
            422,
        ),
        (
            "infinite threshold",
            "/predict_raw?keypoint_threshold=inf",
            &jpeg,
            422,
        ),
        (
            "negative nms_radius",
            "/predict_raw?nms_radius=-3",
            &jpeg,
            422,
        ),
        (
            "nms_radius not a number",
            "/predict_raw?nms_radius=abc",
            &jpeg,
            400,
        ),
        (
            "unknown query parameter",
            "/predict_raw?frame=64x64",
            &jpeg,
            400,
        ),
        ("empty body", "/predict_raw", b"", 422),
        ("garbage body", "/predict_raw", b"GIF89a garbage", 422),
        ("missing width", "/predict_plane?height=10", &[0; 100], 400),
        ("missing height and width", "/predict_plane", &[0; 100], 400),
        (
            "wrong plane length",
            "/predict_plane?height=10&width=10",
            &[0; 99],
            422,
        ),
        (
            "plane too small",
            "/predict_plane?height=4&width=4",
            &[0; 16],
            422,
        ),
        (
            "max_keypoints < -1",
            "/predict_plane?height=8&width=8&max_keypoints=-5",
            &[0; 64],
            422,
        ),
    ];
    for (what, path, body, want) in byte_cases {
        let (status, response) = post_bytes(&srv.url(path), body);
        assert_eq!(status, want, "{what}: {response}");
        assert!(
            !response["error"]
                .as_str()
                .expect("error message")
                .is_empty(),
            "{what}"
        );
    }
    let (status, response) = get_json(&srv.url("/no/such/route"));
    assert_eq!(status, 404, "{response}");
    assert!(response["error"]
        .as_str()
        .expect("message")
        .contains("/predict_raw"));
    let (status, response) = get_json(&srv.url("/predict"));
    assert_eq!(status, 405, "{response}");
    // The server is still fine.
    assert_eq!(get_json(&srv.url("/health")).0, 200);
}

#[test]
fn body_and_pixel_limits_give_413() {
    let srv = TestServer::start(Config {
        body_limit: 1024,
        max_pixels: 10_000,
        ..small()
    });
    let (status, response) = post_bytes(&srv.url("/predict_raw"), &[0u8; 3000]);
    assert_eq!(status, 413, "{response}");
    assert!(response["error"]
        .as_str()
        .expect("message")
        .contains("1024 bytes"));
    let (status, response) = post_json(&srv.url("/predict"), &json!({"image": "A".repeat(3000)}));
    assert_eq!(status, 413, "{response}");
    // 120 x 100 pixels: more than 10 000, in a body under the limit.
    let (status, response) = post_bytes(
        &srv.url("/predict_plane?height=100&width=120"),
        &[0u8; 1000],
    );
    assert_eq!(status, 413, "{response}");
    assert!(response["error"]
        .as_str()
        .expect("message")
        .contains("10000 pixels"));
    // Within both limits: fine.
    let (status, response) =
        post_bytes(&srv.url("/predict_plane?height=32&width=32"), &[7u8; 1024]);
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["original_size"], json!([32, 32]));

    let big = TestServer::start(Config {
        max_pixels: 100_000,
        ..small()
    });
    // coffee.png is 600 x 400 = 240 000 pixels: refused from its header.
    let (status, response) = post_bytes(&big.url("/predict_raw"), &image("coffee.png"));
    assert_eq!(status, 413, "{response}");
    let (status, response) = post_json(
        &big.url("/predict"),
        &json!({"image": STANDARD.encode(image("hubble_1600x900.jpg"))}),
    );
    assert_eq!(status, 413, "{response}");
}

#[test]
fn a_hundred_concurrent_requests_all_equal_a_single_one() {
    // The smallest sensible frame: this test is about queueing, not the network.
    let srv = TestServer::start(Config {
        frame: (160, 120),
        ..Config::default()
    });
    let bytes = image("rocket.jpg");
    let url = srv.url("/predict_raw?max_keypoints=300");
    let (status, single) = post_bytes(&url, &bytes);
    assert_eq!(status, 200, "{single}");
    let strip = |mut v: Value| {
        v["timing_ms"] = Value::Null;
        v
    };
    let single = strip(single);
    let clients = 100;
    let barrier = Barrier::new(clients);
    let responses: Vec<(u16, Value)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    post_bytes(&url, &bytes)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("client thread"))
            .collect()
    });
    assert_eq!(responses.len(), clients);
    for (i, (status, response)) in responses.into_iter().enumerate() {
        assert_eq!(status, 200, "request {i}: {response}");
        assert!(
            strip(response) == single,
            "request {i} differs from the single request"
        );
    }
}

#[test]
fn a_panicking_handler_gives_500_and_the_server_keeps_serving() {
    async fn boom() -> &'static str {
        panic!("deliberate panic in a test handler")
    }
    let srv = TestServer::with_router(|| {
        let config = small();
        server::with_layers(Router::new().route("/boom", get(boom)), &config)
            .merge(server::app(model(), config).expect("app"))
    });
    let (status, response) = get_json(&srv.url("/boom"));
    assert_eq!(status, 500);
    assert!(response["error"]
        .as_str()
        .expect("message")
        .contains("panicked"));
    assert_eq!(get_json(&srv.url("/health")).0, 200);
    let (status, _) = post_bytes(
        &srv.url("/predict_raw?max_keypoints=10"),
        &image("rocket.jpg"),
    );
    assert_eq!(status, 200);
}

#[test]
fn serve_command_takes_a_default_port_and_finishes_requests_on_sigterm() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .args(["serve", "--backend", "cpu", "--weights"])
        .arg(weights_path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start superpoint serve");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .expect("ready line");
    let base = line
        .trim()
        .strip_prefix("superpoint serve: listening on ")
        .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
        .to_string();
    let port: u16 = base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    assert!((20000..20100).contains(&port), "{base}");
    assert!(base.starts_with("http://127.0.0.1:"));
    assert_eq!(get_json(&format!("{base}/health")).0, 200);

    // Three requests queue on the device; SIGTERM once the first is answered: the other two
    // are in flight and must still be answered.
    let bytes = Arc::new(image("hubble_1600x900.jpg"));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let clients: Vec<_> = (0..3)
        .map(|_| {
            let (url, bytes, done) = (
                format!("{base}/predict_raw"),
                bytes.clone(),
                done_tx.clone(),
            );
            std::thread::spawn(move || {
                let answer = post_bytes(&url, &bytes);
                let _ = done.send(());
                answer
            })
        })
        .collect();
    done_rx.recv().expect("a first answer");
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    for client in clients {
        let (status, response) = client.join().expect("client");
        assert_eq!(status, 200, "{response}");
        assert_eq!(response["original_size"], json!([1600, 900]));
    }
    let status = child.wait().expect("wait");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    assert!(status.success(), "exit {status}: {stderr}");
    assert!(stderr.contains("shutting down"), "{stderr}");
    assert!(
        ureq::get(&format!("{base}/health")).call().is_err(),
        "stopped"
    );
}
