//! `superpoint serve`: the HTTP API of `superpoint::server` on a port, until SIGINT or SIGTERM.
//!
//! Prints `superpoint serve: listening on http://ADDR` (flushed) once it accepts requests, then
//! warms the variants up (`--warmup`, `--precompile`) on every device, a log line each, while
//! `GET /health` answers 503; predictions are served once it is done. On a signal it stops
//! accepting, answers the requests in flight (dropping idle connections and incomplete requests
//! after the shutdown deadline) and exits with success; if warm-up fails it stops the same way
//! and exits with the error. Logs go to stderr at level info: a line per answered request and per
//! connection closed by a limit, each with the request's or the connection's id.

use std::io::Write;
use std::net::IpAddr;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use superpoint::decode::MAX_PIXELS;
use superpoint::server::{self, Config, Readiness, DEFAULT_BODY_LIMIT};
use superpoint::Warmup;

use super::{build, ModelArgs, WarmupArgs};

/// The documented defaults, for the flags' defaults.
fn defaults() -> Config {
    Config::default()
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The port; default: 20000, or the next free one up to 20099 (0 lets the system choose).
    #[arg(long)]
    port: Option<u16>,
    /// The address to listen on (0.0.0.0 for every interface).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    warmup: WarmupArgs,
    /// The largest accepted request body, in bytes (larger gets 413).
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT, value_name = "BYTES")]
    body_limit: usize,
    /// The largest accepted image, in pixels (larger gets 413; at most 100000000).
    #[arg(long, default_value_t = MAX_PIXELS, value_name = "N")]
    max_pixels: u64,
    /// The network frame every image is resized to, WIDTHxHEIGHT (multiples of 8).
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    frame: String,
    /// Prediction requests admitted at once, waiting or running; more get 503 with Retry-After.
    #[arg(long, default_value_t = defaults().max_queue, value_name = "N")]
    max_queue: usize,
    /// Open connections at once; more get 503 and are closed.
    #[arg(long, default_value_t = defaults().max_connections, value_name = "N")]
    max_connections: usize,
    /// Seconds for a request head to arrive, from its first byte.
    #[arg(long, default_value_t = defaults().header_timeout.as_secs_f64(), value_name = "SECS")]
    header_timeout: f64,
    /// Seconds for a request body to arrive (else 408).
    #[arg(long, default_value_t = defaults().body_timeout.as_secs_f64(), value_name = "SECS")]
    body_timeout: f64,
    /// Seconds a connection may stay open without a request.
    #[arg(long, default_value_t = defaults().idle_timeout.as_secs_f64(), value_name = "SECS")]
    idle_timeout: f64,
    /// Seconds for a client to take a whole response.
    #[arg(long, default_value_t = defaults().write_timeout.as_secs_f64(), value_name = "SECS")]
    write_timeout: f64,
    /// Seconds after SIGINT/SIGTERM before idle connections and incomplete requests are dropped.
    #[arg(long, default_value_t = defaults().shutdown_timeout.as_secs_f64(), value_name = "SECS")]
    shutdown_timeout: f64,
    /// The most keypoints in one response (the best are kept; the response says "truncated").
    #[arg(long, default_value_t = defaults().max_response_keypoints, value_name = "N")]
    max_response_keypoints: usize,
    /// Bytes of request bodies held at once (at least twice --body-limit).
    #[arg(long, default_value_t = defaults().body_memory, value_name = "BYTES")]
    body_memory: u64,
    /// Bytes of decoded images and responses held at once.
    #[arg(long, default_value_t = defaults().request_memory, value_name = "BYTES")]
    request_memory: u64,
}

fn seconds(flag: &str, value: f64) -> anyhow::Result<Duration> {
    Duration::try_from_secs_f64(value)
        .with_context(|| format!("{flag} {value}: give a number of seconds, 0 or more"))
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let config = Config {
        frame: superpoint::options::parse_frame(&args.frame)?,
        body_limit: args.body_limit,
        max_pixels: args.max_pixels,
        max_queue: args.max_queue,
        max_connections: args.max_connections,
        header_timeout: seconds("--header-timeout", args.header_timeout)?,
        body_timeout: seconds("--body-timeout", args.body_timeout)?,
        idle_timeout: seconds("--idle-timeout", args.idle_timeout)?,
        write_timeout: seconds("--write-timeout", args.write_timeout)?,
        shutdown_timeout: seconds("--shutdown-timeout", args.shutdown_timeout)?,
        max_response_keypoints: args.max_response_keypoints,
        body_memory: args.body_memory,
        request_memory: args.request_memory,
        ..Config::default()
    };
    config.validate()?;
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .init();
    let warmup = args
        .warmup
        .apply(args.model.builder()?, Warmup::Common, config.frame)?;
    let variants = warmup.warmup_variants();
    let model = build(warmup.warmup(Warmup::None).precompile_sizes([]))?;
    let weights = model.weights_source().to_string();
    let backend = model.backend().name();
    let devices = model
        .tensix()
        .map(|t| {
            let ids: Vec<String> = t.devices().iter().map(|d| d.stats.id.to_string()).collect();
            format!(", devices {}", ids.join(","))
        })
        .unwrap_or_default();
    let app = server::app_warming(std::sync::Arc::new(model), config, variants)?;
    let readiness = app.readiness();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let signal = shutdown_signal().context("cannot watch for SIGINT/SIGTERM")?;
        let listener = server::bind(args.host, args.port).await?;
        let addr = listener.local_addr()?;
        let (w, h) = config.frame;
        eprintln!("superpoint serve: weights {weights}, backend {backend}{devices}, frame {w}x{h}");
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "superpoint serve: listening on http://{addr}")?;
        stdout.flush()?;
        drop(stdout);
        let failed = warmup_failure(readiness.clone());
        let shutdown = async move {
            tokio::select! {
                _ = signal => {}
                _ = failed => {}
            }
        };
        server::serve(listener, app, shutdown).await?;
        if let Readiness::Failed { error } = &*readiness.borrow() {
            anyhow::bail!("warm-up failed: {error}");
        }
        eprintln!("superpoint serve: stopped");
        Ok(())
    })
}

/// Completes when warm-up fails (never when it succeeds).
async fn warmup_failure(mut readiness: tokio::sync::watch::Receiver<Readiness>) {
    let failed = readiness
        .wait_for(|r| matches!(r, Readiness::Failed { .. }))
        .await
        .is_ok();
    if !failed {
        std::future::pending::<()>().await;
    }
}

/// Completes on the first SIGINT or SIGTERM; the handlers are installed before it returns, so
/// a signal that arrives once the ready line is out is never missed.
#[cfg(unix)]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Completes on the first Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    })
}
