//! A load generator for `superpoint serve`: sends a bounded number of prediction requests for
//! one image (by default the 1600×900 JPEG fixture) from N concurrent clients to a server on
//! this machine (loopback addresses only), and reports throughput and client latency
//! percentiles next to the server's own `timing_ms`.
//!
//! ```text
//! cargo run --release -p superpoint -- serve --weights tests/fixtures/weights/random-seed1.safetensors &
//! cargo run --release -p superpoint --example loadgen -- --requests 200 --concurrency 1
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

/// The nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}
