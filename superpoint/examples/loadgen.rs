//! A load generator for `superpoint serve`: sends a bounded number of prediction requests for
//! one image (by default the 1600×900 JPEG fixture) from N concurrent clients to a server on
//! this machine (loopback addresses only), and reports throughput and client latency
//! percentiles next to the server's own `timing_ms`.
//!
//! With `--hostile-seconds S` it instead runs, for S seconds, the normal clients alongside
//! hostile ones (see [`hostile`]): slow-header clients, clients that never read their
//! response, oversized `Content-Length` declarations, bodies that never finish, decompression
//! bombs, idle connections and floods of connections past the server's limit. Normal clients
//! retry a 503 after its `Retry-After` until answered; the run fails unless every normal
//! request ends in a 200 and no response is a 5xx other than 503.
//! `--server-pid` adds the server's peak RSS (VmHWM) to the report.
//!
//! ```text
//! cargo run --release -p superpoint -- serve --weights tests/fixtures/weights/random-seed1.safetensors &
//! cargo run --release -p superpoint --example loadgen -- --requests 200 --concurrency 1
//! cargo run --release -p superpoint --example loadgen -- --hostile-seconds 60 --concurrency 4 --server-pid $!
//! ```

use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use clap::{Parser, ValueEnum};
use serde_json::Value;

/// The most requests one run may send.
const MAX_REQUESTS: usize = 100_000;
/// The most concurrent clients.
const MAX_CLIENTS: usize = 256;
/// The longest hostile run, in seconds.
const MAX_HOSTILE_SECONDS: u64 = 600;

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Route {
    /// `POST /predict`: JSON with the base64 image (as the reference port's figure).
    Predict,
    /// `POST /predict_raw`: the image file bytes.
    Raw,
}

/// Load generator for `superpoint serve` (loopback only).
#[derive(Debug, Parser)]
struct Args {
    /// The server's base URL; its host must be a loopback address.
    #[arg(long, default_value = "http://127.0.0.1:20000")]
    url: String,
    /// The image sent with every request.
    #[arg(long, default_value_os_t = default_image())]
    image: PathBuf,
    #[arg(long, value_enum, default_value = "predict")]
    route: Route,
    /// Measured requests, in total over all clients.
    #[arg(long, default_value_t = 100)]
    requests: usize,
    /// Concurrent clients (each one request at a time).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// Unmeasured requests sent first, one at a time.
    #[arg(long, default_value_t = 5)]
    warmup: usize,
    /// Run the hostile mix for this many seconds (normal clients = --concurrency).
    #[arg(long, value_name = "S")]
    hostile_seconds: Option<u64>,
    /// The server's process id: its peak RSS is reported.
    #[arg(long, value_name = "PID")]
    server_pid: Option<u32>,
}

fn default_image() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/images/hubble_1600x900.jpg")
}

/// One answered request: client wall time and the server's `timing_ms`.
struct Sample {
    latency: Duration,
    server: Value,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("loadgen: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    if args.requests == 0 || args.requests > MAX_REQUESTS {
        bail!("--requests must be between 1 and {MAX_REQUESTS}");
    }
    if args.concurrency == 0 || args.concurrency > MAX_CLIENTS {
        bail!("--concurrency must be between 1 and {MAX_CLIENTS}");
    }
    let base = args.url.trim_end_matches('/').to_string();
    check_loopback(&base)?;
    let bytes = std::fs::read(&args.image)
        .with_context(|| format!("cannot read {}", args.image.display()))?;
    let (path, body, content_type) = match args.route {
        Route::Predict => {
            let json = serde_json::json!({ "image": STANDARD.encode(&bytes) });
            ("/predict", serde_json::to_vec(&json)?, "application/json")
        }
        Route::Raw => ("/predict_raw", bytes.clone(), "application/octet-stream"),
    };
    let url = format!("{base}{path}");
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(120))
        .build();
    for _ in 0..args.warmup {
        send(&agent, &url, &body, content_type)?;
    }
    if let Some(seconds) = args.hostile_seconds {
        if seconds == 0 || seconds > MAX_HOSTILE_SECONDS {
            bail!("--hostile-seconds must be between 1 and {MAX_HOSTILE_SECONDS}");
        }
        let normal = hostile::Normal {
            url: &url,
            body: &body,
            content_type,
            clients: args.concurrency,
        };
        let report = hostile::run(&base, &normal, Duration::from_secs(seconds))?;
        println!("{report}");
        if let Some(pid) = args.server_pid {
            println!("server peak RSS (VmHWM): {}", peak_rss(pid)?);
        }
        return report.verdict();
    }

    let next = AtomicUsize::new(0);
    let samples = Mutex::new(Vec::with_capacity(args.requests));
    let failures = Mutex::new(Vec::new());
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..args.concurrency {
            s.spawn(|| {
                let agent = ureq::AgentBuilder::new()
                    .timeout(Duration::from_secs(120))
                    .build();
                while next.fetch_add(1, Ordering::Relaxed) < args.requests {
                    match send(&agent, &url, &body, content_type) {
                        Ok(sample) => samples.lock().map(|mut v| v.push(sample)).ok(),
                        Err(e) => failures.lock().map(|mut v| v.push(format!("{e:#}"))).ok(),
                    };
                }
            });
        }
    });
    let wall = start.elapsed();
    let samples = samples.into_inner().unwrap_or_default();
    let failures = failures.into_inner().unwrap_or_default();

    let name = args.image.file_name().map_or_else(
        || args.image.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    println!(
        "loadgen: {} requests, {} client(s), POST {path}, {name} ({} bytes), {} warm-up",
        args.requests,
        args.concurrency,
        bytes.len(),
        args.warmup
    );
    println!(
        "ok {}, failed {}, wall {:.2} s, throughput {:.2} req/s",
        samples.len(),
        failures.len(),
        wall.as_secs_f64(),
        samples.len() as f64 / wall.as_secs_f64()
    );
    let mut latency: Vec<f64> = samples
        .iter()
        .map(|s| s.latency.as_secs_f64() * 1e3)
        .collect();
    if !latency.is_empty() {
        latency.sort_by(f64::total_cmp);
        let mean = latency.iter().sum::<f64>() / latency.len() as f64;
        println!(
            "client latency ms: p50 {:.1}  p99 {:.1}  min {:.1}  mean {:.1}  max {:.1}",
            percentile(&latency, 50.0),
            percentile(&latency, 99.0),
            latency[0],
            mean,
            latency[latency.len() - 1]
        );
        let stages = [
            "total",
            "preprocess",
            "device_forward",
            "postprocess",
            "queue",
        ];
        let medians: Vec<String> = stages
            .iter()
            .map(|stage| {
                let mut v: Vec<f64> = samples
                    .iter()
                    .filter_map(|s| s.server[stage].as_f64())
                    .collect();
                v.sort_by(f64::total_cmp);
                format!("{stage} {:.1}", percentile(&v, 50.0))
            })
            .collect();
        println!("server timing_ms, median: {}", medians.join("  "));
    }
    if let Some(first) = failures.first() {
        bail!("{} requests failed; the first: {first}", failures.len());
    }
    Ok(())
}

/// Refuses any host that is not a loopback address.
fn check_loopback(base: &str) -> anyhow::Result<()> {
    let rest = base
        .strip_prefix("http://")
        .context("the URL must start with http://")?;
    let authority = rest.split('/').next().unwrap_or(rest);
    let with_port = if authority.ends_with(']') || !authority.contains(':') {
        format!("{authority}:80")
    } else {
        authority.to_string()
    };
    let addrs: Vec<_> = with_port
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve {authority}"))?
        .collect();
    if addrs.is_empty() || addrs.iter().any(|a| !a.ip().is_loopback()) {
        bail!(
            "{authority} is not a loopback address: this load generator only targets this machine"
        );
    }
    Ok(())
}

fn send(agent: &ureq::Agent, url: &str, body: &[u8], content_type: &str) -> anyhow::Result<Sample> {
    let start = Instant::now();
    let response = agent
        .post(url)
        .set("Content-Type", content_type)
        .send_bytes(body);
    let response = match response {
        Ok(r) => r,
        Err(ureq::Error::Status(code, r)) => {
            let text = r.into_string().unwrap_or_default();
            bail!("HTTP {code}: {text}");
        }
        Err(e) => return Err(e.into()),
    };
    let json: Value = response.into_json().context("the response is not JSON")?;
    let latency = start.elapsed();
    Ok(Sample {
        latency,
        server: json["timing_ms"].clone(),
    })
}

/// The peak resident set size of a process, as /proc reports it.
fn peak_rss(pid: u32) -> anyhow::Result<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("cannot read /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_string())
        .context("no VmHWM line")
}

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

mod hostile {
    //! The hostile mix: every kind of bad client, each in a loop until the deadline, next to
    //! normal clients; what each got back is counted.

    use std::collections::BTreeMap;
    use std::fmt;
    use std::io::{Read, Write};
    use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use anyhow::{bail, Context};

    /// How long a never-reading client holds its connection: longer than the server's default
    /// write timeout (30 s).
    const NEVER_READ_HOLD: Duration = Duration::from_secs(45);
    /// How long past the deadline a normal request refused with 503 is still retried.
    const RETRY_GRACE: Duration = Duration::from_secs(60);
    /// Connections a flood opens at once: more than the server's default limit of 256.
    const FLOOD: usize = 300;

    /// The normal traffic: `clients` clients each sending `body` to `url` in a loop.
    pub struct Normal<'a> {
        pub url: &'a str,
        pub body: &'a [u8],
        pub content_type: &'a str,
        pub clients: usize,
    }

    /// Outcomes by actor kind, e.g. "normal" → {"200": 40, "503 retried": 3}.
    #[derive(Default)]
    pub struct Report {
        outcomes: Mutex<BTreeMap<&'static str, BTreeMap<String, usize>>>,
        seconds: f64,
    }

    impl Report {
        fn count(&self, actor: &'static str, outcome: impl Into<String>) {
            if let Ok(mut o) = self.outcomes.lock() {
                *o.entry(actor)
                    .or_default()
                    .entry(outcome.into())
                    .or_default() += 1;
            }
        }

        fn get(&self, actor: &str, outcome: &str) -> usize {
            self.outcomes
                .lock()
                .ok()
                .and_then(|o| o.get(actor).and_then(|m| m.get(outcome)).copied())
                .unwrap_or(0)
        }

        /// Fails unless every normal request got a 200 and nothing got a 5xx but 503.
        pub fn verdict(&self) -> anyhow::Result<()> {
            if self.get("normal", "200") == 0 {
                bail!("no normal request was answered");
            }
            let outcomes = self
                .outcomes
                .lock()
                .map_err(|_| anyhow::anyhow!("poisoned"))?;
            for (actor, counts) in outcomes.iter() {
                for (outcome, n) in counts {
                    if outcome.starts_with('5') && !outcome.starts_with("503") {
                        bail!("{actor}: {n} × {outcome}");
                    }
                    if *actor == "normal" && !outcome.starts_with("200") {
                        bail!("normal requests: {n} × {outcome}");
                    }
                }
            }
            Ok(())
        }
    }

    impl fmt::Display for Report {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            writeln!(
                f,
                "hostile mix for {:.0} s, outcomes by client kind:",
                self.seconds
            )?;
            if let Ok(outcomes) = self.outcomes.lock() {
                for (actor, counts) in outcomes.iter() {
                    let list: Vec<String> =
                        counts.iter().map(|(o, n)| format!("{o}: {n}")).collect();
                    writeln!(f, "  {actor:<16} {}", list.join(", "))?;
                }
            }
            Ok(())
        }
    }

    /// Runs the mix against `base` (http://host:port) for `duration`.
    pub fn run(base: &str, normal: &Normal<'_>, duration: Duration) -> anyhow::Result<Report> {
        let authority = base.strip_prefix("http://").unwrap_or(base);
        let addr: SocketAddr = authority
            .to_socket_addrs()
            .context("resolve the server")?
            .next()
            .context("no address")?;
        let deadline = Instant::now() + duration;
        let report = Report {
            seconds: duration.as_secs_f64(),
            ..Report::default()
        };
        let bomb = black_png(16384, 6100)?;
        let huge_header = black_png_header(30000, 30000)?;
        type Act<'a> = Box<dyn Fn() -> String + Sync + 'a>;
        let actors: [(&'static str, usize, Act<'_>); 7] = [
            ("slow_header", 8, Box::new(|| slow_header(addr, deadline))),
            ("never_reads", 4, Box::new(|| never_reads(addr, deadline))),
            ("oversized", 2, Box::new(|| oversized(addr))),
            ("slow_body", 4, Box::new(|| slow_body(addr, deadline))),
            (
                "bomb_16384x6100",
                2,
                Box::new(|| raw_post(addr, "/predict_raw", &bomb)),
            ),
            (
                "huge_header",
                1,
                Box::new(|| raw_post(addr, "/predict_raw", &huge_header)),
            ),
            ("idle", 20, Box::new(|| idle(addr, deadline))),
        ];
        std::thread::scope(|s| {
            for _ in 0..normal.clients {
                s.spawn(|| normal_client(normal, deadline, &report));
            }
            s.spawn(|| {
                while Instant::now() < deadline {
                    flood(addr, deadline, &report);
                }
            });
            for (name, count, act) in &actors {
                for _ in 0..*count {
                    let report = &report;
                    s.spawn(move || {
                        while Instant::now() < deadline {
                            report.count(name, act());
                        }
                    });
                }
            }
        });
        Ok(report)
    }

    /// Sends normal requests until the deadline; each is retried after a 503's `Retry-After`
    /// until it is answered (or, past the deadline and [`RETRY_GRACE`], given up).
    fn normal_client(normal: &Normal<'_>, deadline: Instant, report: &Report) {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(120))
            .build();
        while Instant::now() < deadline {
            let mut refused = 0;
            let outcome = loop {
                let response = agent
                    .post(normal.url)
                    .set("Content-Type", normal.content_type)
                    .send_bytes(normal.body);
                match response {
                    Ok(r) => break r.status().to_string(),
                    Err(ureq::Error::Status(503, r)) => {
                        refused += 1;
                        if Instant::now() > deadline + RETRY_GRACE {
                            break "503, given up".to_string();
                        }
                        let wait: u64 = r
                            .header("retry-after")
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(1);
                        std::thread::sleep(Duration::from_secs(wait));
                    }
                    Err(ureq::Error::Status(code, _)) => break code.to_string(),
                    Err(e) => break format!("transport error: {e}"),
                }
            };
            if refused > 0 {
                report.count("normal", format!("{outcome} after 503s"));
            }
            report.count("normal", outcome);
        }
    }

    fn connect(addr: SocketAddr) -> Option<TcpStream> {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(90)))
            .ok()?;
        stream
            .set_write_timeout(Some(Duration::from_secs(90)))
            .ok()?;
        Some(stream)
    }

    /// The status of the response on `stream`, or how the connection ended.
    fn status(stream: &mut TcpStream) -> String {
        let mut head = [0u8; 12];
        match stream.read_exact(&mut head) {
            Ok(()) => String::from_utf8_lossy(&head[9..12]).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => "closed".to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => "reset".to_string(),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                "still open at the deadline".to_string()
            }
            Err(e) => format!("error: {}", e.kind()),
        }
    }

    /// Sends a request head a byte every 500 ms until the server closes the connection.
    fn slow_header(addr: SocketAddr, deadline: Instant) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let head = b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nX-Slow: ";
        for byte in head.iter().chain(std::iter::repeat(&b'a')) {
            if Instant::now() > deadline {
                return "stopped at the deadline".into();
            }
            if stream.write_all(&[*byte]).is_err() {
                return "closed by the server".into();
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        unreachable!("the head is endless")
    }

    /// Asks for the largest response (every pixel a keypoint) and never reads it.
    fn never_reads(addr: SocketAddr, deadline: Instant) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let plane: Vec<u8> = (0..64 * 64).map(|i| (i * 37 % 251) as u8).collect();
        let head = format!(
            "POST /predict_plane?height=64&width=64&max_keypoints=-1&keypoint_threshold=-1&nms_radius=0 HTTP/1.1\r\n\
             Host: x\r\nContent-Length: {}\r\n\r\n",
            plane.len()
        );
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(&plane).is_err() {
            return "closed while sending".into();
        }
        // Hold the unread response well past the server's write timeout, then see how much
        // of it there is: the server cuts it off when it drops the connection.
        let until = deadline.min(Instant::now() + NEVER_READ_HOLD);
        std::thread::sleep(until.saturating_duration_since(Instant::now()));
        let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
        let mut response = Vec::new();
        let _ = stream.read_to_end(&mut response);
        let text = String::from_utf8_lossy(&response);
        let declared = text.split("\r\n").find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length: ")?
                .parse()
                .ok()
        });
        let body = text.find("\r\n\r\n").map_or(0, |i| response.len() - i - 4);
        match declared {
            Some(length) if body < length => "response cut off by the server".into(),
            Some(_) => "response complete".into(),
            None => "no response".into(),
        }
    }

    /// Declares a gigabyte of body and sends none of it.
    fn oversized(addr: SocketAddr) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let head = b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n";
        if stream.write_all(head).is_err() {
            return "closed while sending".into();
        }
        status(&mut stream)
    }

    /// Declares 1 MB of body and sends 100 bytes a second.
    fn slow_body(addr: SocketAddr, deadline: Instant) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let head = b"POST /predict_raw HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n";
        if stream.write_all(head).is_err() {
            return "closed while sending".into();
        }
        let _ = stream.set_nonblocking(true);
        loop {
            if Instant::now() > deadline {
                return "stopped at the deadline".into();
            }
            let mut probe = [0u8; 1];
            match stream.peek(&mut probe) {
                Ok(0) => return "closed".into(),
                Ok(_) => {
                    let _ = stream.set_nonblocking(false);
                    return status(&mut stream);
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return "reset".into(),
            }
            if stream.write_all(&[b'x'; 100]).is_err() {
                return "closed while sending".into();
            }
            std::thread::sleep(Duration::from_secs(1));
        }
    }

    /// Posts `body` and returns the status.
    fn raw_post(addr: SocketAddr, path: &str, body: &[u8]) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if stream.write_all(head.as_bytes()).is_err() || stream.write_all(body).is_err() {
            return "closed while sending".into();
        }
        status(&mut stream)
    }

    /// Opens [`FLOOD`] connections at once, more than the server's default connection limit,
    /// and holds each until the server answers or closes it.
    fn flood(addr: SocketAddr, deadline: Instant, report: &Report) {
        let streams: Vec<TcpStream> = (0..FLOOD).filter_map(|_| connect(addr)).collect();
        for mut stream in streams {
            let _ =
                stream.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now())));
            let outcome = status(&mut stream);
            report.count("flood", outcome);
        }
    }

    /// Connects and sends nothing until the server closes the connection.
    fn idle(addr: SocketAddr, deadline: Instant) -> String {
        let Some(mut stream) = connect(addr) else {
            return "connect failed".into();
        };
        let _ = stream.set_read_timeout(Some(deadline.saturating_duration_since(Instant::now())));
        status(&mut stream)
    }

    /// A PNG of black RGB pixels: a few hundred KB that decode to width × height × 3 bytes.
    fn black_png(width: u32, height: u32) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        let encoder = image::codecs::png::PngEncoder::new_with_quality(
            &mut out,
            image::codecs::png::CompressionType::Best,
            image::codecs::png::FilterType::NoFilter,
        );
        let row = vec![0u8; width as usize * 3];
        let mut pixels = Vec::with_capacity(row.len() * height as usize);
        for _ in 0..height {
            pixels.extend_from_slice(&row);
        }
        image::ImageEncoder::write_image(
            encoder,
            &pixels,
            width,
            height,
            image::ExtendedColorType::Rgb8,
        )?;
        Ok(out)
    }

    /// A PNG whose header says width × height and whose data is that of an 8×8 image.
    fn black_png_header(width: u32, height: u32) -> anyhow::Result<Vec<u8>> {
        let mut png = black_png(8, 8)?;
        // IHDR's width and height sit at bytes 16..24; its CRC at 29..33.
        png[16..20].copy_from_slice(&width.to_be_bytes());
        png[20..24].copy_from_slice(&height.to_be_bytes());
        let crc = crc32fast::hash(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        Ok(png)
    }
}
