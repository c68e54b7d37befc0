//! The HTTP service against a server on loopback: every route, every kind of bad input, the
//! limits, 100 concurrent requests, a panicking handler, and `superpoint serve` itself (default
//! port, ready line, graceful shutdown on SIGTERM). Responses must equal the library's output
//! for the same image and options (descriptors as the library's f32 values rounded to f16).
//!
//! Hostile clients, over raw TCP: partial heads, idle and never-reading connections, slow and
//! oversized bodies, more connections or requests than allowed; the metrics; the keypoint cap.
//! Timeouts are set to a second or two here so that the tests see them fire.

mod common;

use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl TestServer {
    fn start(config: Config) -> Self {
        Self::with_app(move || server::app(model(), config).expect("app"))
    }

    fn with_app(make: impl FnOnce() -> server::App + Send + 'static) -> Self {
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
            addr,
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
    // The f32 default as written, not widened to 0.004999999888241291.
    assert_eq!(info["defaults"]["keypoint_threshold"], json!(0.005));
    let defaults = Config::default();
    let limits = &info["limits"];
    assert_eq!(limits["max_queue"], defaults.max_queue);
    assert_eq!(limits["max_connections"], defaults.max_connections);
    assert_eq!(
        limits["max_response_keypoints"],
        defaults.max_response_keypoints
    );
    assert_eq!(limits["request_memory_bytes"], defaults.request_memory);
    assert_eq!(
        limits["timeouts_s"]["header"],
        defaults.header_timeout.as_secs_f64()
    );

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
        max_queue: 128,
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
    let srv = TestServer::with_app(|| {
        server::app(model(), small())
            .expect("app")
            .merge(Router::new().route("/boom", get(boom)))
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

/// `superpoint serve` with fixture weights on the CPU and extra flags, its base URL once ready.
fn spawn_serve(extra: &[&str]) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_superpoint"))
        .args(["serve", "--backend", "cpu", "--weights"])
        .arg(weights_path())
        .args(extra)
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
    (child, base)
}

/// Sends SIGTERM; waits (at most a minute) for the exit and returns the status and stderr.
fn terminate(mut child: Child) -> (std::process::ExitStatus, String) {
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("superpoint serve is still running a minute after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr");
    (status, stderr)
}

/// The number in the shutdown log line "shutting down: N requests in flight".
fn in_flight_at_signal(stderr: &str) -> usize {
    let tail = stderr
        .split("shutting down: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no shutdown line in {stderr}"));
    tail.split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {tail}"))
}

#[test]
fn serve_command_takes_a_default_port_and_finishes_requests_on_sigterm() {
    let (child, base) = spawn_serve(&[]);
    let port: u16 = base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    assert!((20000..20100).contains(&port), "{base}");
    assert!(base.starts_with("http://127.0.0.1:"));
    assert_eq!(get_json(&format!("{base}/health")).0, 200);

    // Three requests queue on the device; SIGTERM once the first is answered: the other two
    // are in flight (the server's own count at the signal says so) and must still be answered.
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
    let pid = child.id();
    let (status, stderr) = std::thread::scope(|s| {
        let stopping = s.spawn(|| terminate(child));
        for client in clients {
            let (status, response) = client.join().expect("client");
            assert_eq!(status, 200, "{response}");
            assert_eq!(response["original_size"], json!([1600, 900]));
        }
        stopping.join().expect("terminate")
    });
    assert!(status.success(), "exit {status}: {stderr}");
    assert_eq!(in_flight_at_signal(&stderr), 2, "pid {pid}: {stderr}");
    assert!(
        ureq::get(&format!("{base}/health")).call().is_err(),
        "stopped"
    );
    // Every request's log line carries its id.
    let answered: Vec<&str> = stderr.lines().filter(|l| l.contains("answered")).collect();
    assert_eq!(answered.len(), 4, "{stderr}");
    for line in answered {
        assert!(line.contains("request{id=r"), "{line}");
    }
}

#[test]
fn sigterm_drops_an_incomplete_request_and_an_idle_connection_after_the_deadline() {
    let (child, base) = spawn_serve(&[
        "--port",
        "0",
        "--shutdown-timeout",
        "1",
        "--body-timeout",
        "600",
    ]);
    let addr: SocketAddr = base
        .strip_prefix("http://")
        .and_then(|a| a.parse().ok())
        .expect("address");
    // A body that never completes (100 bytes declared, 3 sent) and an idle connection.
    let mut stuck = connect(addr);
    stuck
        .write_all(b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
        .expect("send");
    let mut idle = connect(addr);
    wait_for_metric(&base, "superpoint_requests_in_flight", 2.0);
    let (status, stderr) = terminate(child);
    assert!(status.success(), "exit {status}: {stderr}");
    // The stuck request was the one in flight (the metrics request is done by then).
    assert_eq!(in_flight_at_signal(&stderr), 1, "{stderr}");
    assert!(stderr.contains("shutdown deadline"), "{stderr}");
    assert!(
        stderr.contains("dropped at the shutdown deadline"),
        "{stderr}"
    );
    assert!(read_until_closed(&mut stuck).is_empty());
    assert!(read_until_closed(&mut idle).is_empty());
}

/// A raw connection, reads failing after 30 s.
fn connect(addr: SocketAddr) -> TcpStream {
    let stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("read timeout");
    stream
}

/// Everything the server sends until it closes the connection; panics when it is still open
/// after the read timeout.
fn read_until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return got,
            Err(e) => panic!("the server kept the connection open: {e}"),
        }
    }
}

/// One HTTP/1.1 response read from a raw connection: status line + headers, and the body of
/// its Content-Length.
fn read_response(stream: &mut TcpStream) -> (String, Vec<u8>) {
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("response line");
        assert!(
            !line.is_empty(),
            "closed before the end of the head: {head}"
        );
        head.push_str(&line);
        if line == "\r\n" {
            break;
        }
    }
    let length: usize = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body).expect("response body");
    (head, body)
}

/// The value of one series in the server's /metrics text (`name` with its labels).
fn metric(base: &str, series: &str) -> Option<f64> {
    let text = agent()
        .get(&format!("{base}/metrics"))
        .call()
        .expect("metrics")
        .into_string()
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// Polls /metrics (for at most a minute) until `series` has `value`.
fn wait_for_metric(base: &str, series: &str, value: f64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = metric(base, series);
        if got == Some(value) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{series} is {got:?} after a minute, expected {value}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rejected(reason: &str) -> String {
    format!("superpoint_rejected_total{{reason=\"{reason}\"}}")
}

#[test]
fn idle_connections_and_slow_request_heads_are_closed_by_their_timeouts() {
    let srv = TestServer::start(Config {
        header_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(2),
        ..small()
    });
    // Connected, nothing sent: the idle timeout.
    let mut silent = connect(srv.addr);
    assert!(read_until_closed(&mut silent).is_empty());
    // Half a request head: the header timeout.
    let mut partial = connect(srv.addr);
    partial
        .write_all(b"POST /predict_raw HTTP/1.1\r\nHost: x\r\n")
        .expect("send");
    assert!(read_until_closed(&mut partial).is_empty());
    // A head trickled a byte at a time, each within the idle timeout: still the header timeout,
    // counted from its first byte.
    let mut trickle = connect(srv.addr);
    let mut closed = false;
    for byte in b"GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaa" {
        if trickle.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(closed || read_until_closed(&mut trickle).is_empty());
    // A keep-alive connection after its response: the idle timeout.
    let mut kept = connect(srv.addr);
    kept.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("send");
    let (head, body) = read_response(&mut kept);
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, br#"{"status":"ok"}"#);
    assert!(read_until_closed(&mut kept).is_empty());
    assert_eq!(metric(&srv.base, &rejected("idle_timeout")), Some(2.0));
    assert_eq!(metric(&srv.base, &rejected("header_timeout")), Some(2.0));
}

#[test]
fn a_slow_body_gets_408_and_a_declared_oversized_body_413_at_once() {
    let srv = TestServer::start(Config {
        body_timeout: Duration::from_secs(1),
        body_limit: 1024,
        ..small()
    });
    let mut slow = connect(srv.addr);
    slow.write_all(b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
        .expect("send");
    let (head, body) = read_response(&mut slow);
    assert!(head.starts_with("HTTP/1.1 408"), "{head}");
    let message: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(message["error"]
        .as_str()
        .expect("error")
        .contains("--body-timeout"));
    // Ten megabytes declared, none sent: refused without waiting for them.
    let mut big = connect(srv.addr);
    big.write_all(b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 10000000\r\n\r\n")
        .expect("send");
    let (head, body) = read_response(&mut big);
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    let message: Value = serde_json::from_slice(&body).expect("JSON");
    assert!(message["error"]
        .as_str()
        .expect("error")
        .contains("1024 bytes"));
    assert_eq!(metric(&srv.base, &rejected("body_timeout")), Some(1.0));
    assert_eq!(metric(&srv.base, &rejected("body_too_large")), Some(1.0));
}

#[test]
fn early_answers_reach_clients_still_sending_their_body() {
    // Answered before the body is read (a bad query, a declared length over the limit): the
    // server reads and drops the rest of the body before closing, so that the client, still
    // sending megabytes, gets the answer rather than a reset connection.
    let srv = TestServer::start(small());
    let eight_mb = vec![0u8; 8 << 20];
    let (status, response) = post_bytes(&srv.url("/predict_raw?keypoint_threshold=inf"), &eight_mb);
    assert_eq!(status, 422, "{response}");
    let over_limit = vec![0u8; (32 << 20) + 1];
    let (status, response) = post_bytes(&srv.url("/predict_raw"), &over_limit);
    assert_eq!(status, 413, "{response}");
}

#[test]
fn a_full_queue_answers_503_with_retry_after() {
    let srv = TestServer::start(Config {
        max_queue: 1,
        ..small()
    });
    // This request holds the only place while its body trickles in.
    let mut holder = connect(srv.addr);
    holder
        .write_all(b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc")
        .expect("send");
    wait_for_metric(&srv.base, "superpoint_queue_depth", 1.0);
    let refused = agent()
        .post(&srv.url("/predict_raw"))
        .send_bytes(&image("rocket.jpg"));
    let Err(ureq::Error::Status(503, response)) = refused else {
        panic!("expected 503, got {refused:?}");
    };
    assert_eq!(response.header("retry-after"), Some("1"));
    let message: Value = response.into_json().expect("JSON");
    assert!(message["error"]
        .as_str()
        .expect("error")
        .contains("--max-queue"));
    assert_eq!(metric(&srv.base, &rejected("queue_full")), Some(1.0));
    // The holder goes away: its place is free again.
    drop(holder);
    wait_for_metric(&srv.base, "superpoint_queue_depth", 0.0);
    let (status, response) = post_bytes(&srv.url("/predict_raw"), &image("rocket.jpg"));
    assert_eq!(status, 200, "{response}");
}

#[test]
fn a_request_whose_client_leaves_returns_everything_it_held() {
    let srv = TestServer::start(Config::default());
    let jpeg = image("hubble_1600x900.jpg");
    let mut request = format!(
        "POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n",
        jpeg.len()
    )
    .into_bytes();
    request.extend_from_slice(&jpeg);
    let mut leaver = connect(srv.addr);
    leaver.write_all(&request).expect("send");
    // Gone while its request is being processed.
    wait_for_metric(&srv.base, "superpoint_queue_depth", 1.0);
    leaver.shutdown(std::net::Shutdown::Both).expect("shutdown");
    drop(leaver);
    // Only the metrics request itself is left in flight; no place, no memory held.
    wait_for_metric(&srv.base, "superpoint_queue_depth", 0.0);
    wait_for_metric(&srv.base, "superpoint_requests_in_flight", 1.0);
    for pool in ["bodies", "requests"] {
        wait_for_metric(
            &srv.base,
            &format!("superpoint_memory_reserved_bytes{{pool=\"{pool}\"}}"),
            0.0,
        );
    }
}

#[test]
fn connections_over_the_limit_get_503_and_are_closed() {
    let srv = TestServer::start(Config {
        max_connections: 3,
        ..small()
    });
    let health = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
    // Three kept-alive connections, each served once (so each is registered).
    let mut open: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut c = connect(srv.addr);
            c.write_all(health).expect("send");
            let (head, _) = read_response(&mut c);
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            c
        })
        .collect();
    let mut fourth = connect(srv.addr);
    let _ = fourth.write_all(health);
    let (head, body) = read_response(&mut fourth);
    assert!(head.starts_with("HTTP/1.1 503"), "{head}");
    assert!(
        head.to_ascii_lowercase().contains("retry-after: 1"),
        "{head}"
    );
    assert!(String::from_utf8_lossy(&body).contains("--max-connections"));
    read_until_closed(&mut fourth);
    // Once one closes, a new connection is served (the server notices the close first).
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut c = connect(srv.addr);
        let _ = c.write_all(health);
        let (head, _) = read_response(&mut c);
        if head.starts_with("HTTP/1.1 200") {
            break;
        }
        assert!(Instant::now() < deadline, "still refused: {head}");
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(open);
    let deadline = Instant::now() + Duration::from_secs(30);
    while agent().get(&srv.url("/health")).call().is_err() {
        assert!(Instant::now() < deadline, "still refused");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(metric(&srv.base, &rejected("connection_limit")).expect("series") >= 1.0);
}

#[test]
fn a_client_that_never_reads_is_dropped_and_its_response_memory_returned() {
    // 20 000 keypoints with descriptors: a response of about 14 MB, more than the socket
    // buffers of both ends hold.
    let srv = TestServer::start(Config {
        write_timeout: Duration::from_secs(1),
        max_response_keypoints: 20_000,
        ..small()
    });
    let plane: Vec<u8> = (0..64 * 64).map(|i| (i * 37 % 251) as u8).collect();
    let mut request = format!(
        "POST /predict_plane?height=64&width=64&max_keypoints=-1&keypoint_threshold=-1&nms_radius=0 HTTP/1.1\r\n\
         Host: x\r\nContent-Length: {}\r\n\r\n",
        plane.len()
    )
    .into_bytes();
    request.extend_from_slice(&plane);
    let mut lazy = connect(srv.addr);
    lazy.write_all(&request).expect("send");
    wait_for_metric(&srv.base, &rejected("write_timeout"), 1.0);
    wait_for_metric(
        &srv.base,
        "superpoint_memory_reserved_bytes{pool=\"requests\"}",
        0.0,
    );
    drop(lazy);
}

#[test]
fn responses_are_cut_at_the_keypoint_cap_and_say_so() {
    let srv = TestServer::start(Config {
        max_response_keypoints: 50,
        ..small()
    });
    let bytes = image("coffee.png");
    let all = "/predict_raw?max_keypoints=-1&keypoint_threshold=-1&nms_radius=0";
    let (status, response) = post_bytes(&srv.url(all), &bytes);
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["truncated"], true);
    // The best 50: what the library gives for max_keypoints = 50.
    let best = Options {
        frame: (320, 240),
        max_keypoints: 50,
        keypoint_threshold: -1.0,
        nms_radius: 0,
        ..Options::default()
    };
    assert_equals_library(
        &response,
        &model().detect(&bytes[..], &best).expect("library"),
    );
    let (status, response) = post_bytes(&srv.url("/predict_raw?max_keypoints=20"), &bytes);
    assert_eq!(status, 200, "{response}");
    assert_eq!(response["truncated"], false);
    assert_eq!(response["num_keypoints"], 20);
    let (_, info) = get_json(&srv.url("/info"));
    assert_eq!(info["limits"]["max_response_keypoints"], 50);
}

/// A PNG of `width`×`height` black RGB pixels (a few KB: it compresses to nothing).
fn black_png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    image::RgbImage::new(width, height)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .expect("encode");
    out
}

#[test]
fn decoded_images_share_a_memory_budget_and_one_too_large_for_it_gets_413() {
    let srv = TestServer::start(Config {
        request_memory: 64 << 20,
        ..small()
    });
    // 4000 x 3000: 36 MB of RGB and 48 MB more for the conversion and the plane.
    let (status, response) = post_bytes(&srv.url("/predict_raw"), &black_png(4000, 3000));
    assert_eq!(status, 413, "{response}");
    assert!(
        response["error"]
            .as_str()
            .expect("error")
            .contains("--request-memory"),
        "{response}"
    );
    assert_eq!(metric(&srv.base, &rejected("image_too_large")), Some(1.0));
    // 2000 x 1500 needs about 24 MB: six at once wait for each other and all succeed.
    let png = black_png(2000, 1500);
    let url = srv.url("/predict_raw?max_keypoints=10");
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let clients: Vec<_> = (0..6)
            .map(|_| s.spawn(|| post_bytes(&url, &png).0))
            .collect();
        clients
            .into_iter()
            .map(|c| c.join().expect("client"))
            .collect()
    });
    assert_eq!(statuses, vec![200; 6]);
    assert_eq!(
        metric(
            &srv.base,
            "superpoint_memory_reserved_bytes{pool=\"requests\"}"
        ),
        Some(0.0)
    );
}

#[test]
fn metrics_are_prometheus_text_with_requests_latency_queue_and_rejections() {
    let srv = TestServer::start(small());
    let (status, _) = post_bytes(
        &srv.url("/predict_raw?max_keypoints=5"),
        &image("rocket.jpg"),
    );
    assert_eq!(status, 200);
    assert_eq!(post_bytes(&srv.url("/predict_raw"), b"not an image").0, 422);
    assert_eq!(get_json(&srv.url("/no/such/route")).0, 404);
    let response = agent().get(&srv.url("/metrics")).call().expect("metrics");
    assert!(
        response.content_type().starts_with("text/plain"),
        "{}",
        response.content_type()
    );
    let first_id = response.header("x-request-id").map(str::to_string);
    let text = response.into_string().expect("text");
    // Every line is a comment or `name{labels} value` with a number.
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let (_, value) = line.rsplit_once(' ').expect("a value");
        value
            .parse::<f64>()
            .unwrap_or_else(|_| panic!("not a number in {line:?}"));
    }
    for (series, want) in [
        (
            "superpoint_http_requests_total{route=\"/predict_raw\",status=\"200\"}",
            1.0,
        ),
        (
            "superpoint_http_requests_total{route=\"/predict_raw\",status=\"422\"}",
            1.0,
        ),
        (
            "superpoint_http_requests_total{route=\"other\",status=\"404\"}",
            1.0,
        ),
        (
            "superpoint_http_request_duration_seconds_count{route=\"/predict_raw\"}",
            2.0,
        ),
        ("superpoint_queue_depth", 0.0),
        ("superpoint_requests_in_flight", 1.0),
        ("superpoint_rejected_total{reason=\"queue_full\"}", 0.0),
    ] {
        let got = text.lines().find_map(|l| {
            l.strip_prefix(series)?
                .strip_prefix(' ')?
                .parse::<f64>()
                .ok()
        });
        assert_eq!(got, Some(want), "{series} in\n{text}");
    }
    assert!(text.contains("# TYPE superpoint_http_request_duration_seconds histogram"));
    assert!(text.contains(
        "superpoint_http_request_duration_seconds_bucket{route=\"/predict_raw\",le=\"0.5\"}"
    ));
    // Request ids differ between requests.
    let second = agent().get(&srv.url("/health")).call().expect("health");
    assert!(first_id.is_some());
    assert_ne!(second.header("x-request-id").map(str::to_string), first_id);
}
