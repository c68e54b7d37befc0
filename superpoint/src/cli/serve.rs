//! `superpoint serve`: the HTTP API of `superpoint::server` on a port, until SIGINT or SIGTERM.
//!
//! Prints `superpoint serve: listening on http://ADDR` (flushed) once it accepts requests; on a
//! signal it stops accepting, answers the requests in flight and exits with success.

use std::io::Write;
use std::net::IpAddr;

use anyhow::Context;
use clap::Args;
use superpoint::decode::MAX_PIXELS;
use superpoint::server::{self, Config, DEFAULT_BODY_LIMIT};

use super::ModelArgs;

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
    /// The largest accepted request body, in bytes (larger gets 413).
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT, value_name = "BYTES")]
    body_limit: usize,
    /// The largest accepted image, in pixels (larger gets 413; at most 100000000).
    #[arg(long, default_value_t = MAX_PIXELS, value_name = "N")]
    max_pixels: u64,
    /// The network frame every image is resized to, WIDTHxHEIGHT (multiples of 8).
    #[arg(long, default_value = "640x480", value_name = "WxH")]
    frame: String,
}

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    let config = Config {
        frame: superpoint::options::parse_frame(&args.frame)?,
        body_limit: args.body_limit,
        max_pixels: args.max_pixels,
        ..Config::default()
    };
    config.validate()?;
    let model = args.model.load()?;
    let weights = model.weights_source().to_string();
    let backend = model.backend().name();
    let app = server::app(model, config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let shutdown = shutdown_signal().context("cannot watch for SIGINT/SIGTERM")?;
        let listener = server::bind(args.host, args.port).await?;
        let addr = listener.local_addr()?;
        let (w, h) = config.frame;
        eprintln!("superpoint serve: weights {weights}, backend {backend}, frame {w}x{h}");
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "superpoint serve: listening on http://{addr}")?;
        stdout.flush()?;
        drop(stdout);
        server::serve(listener, app, shutdown).await?;
        eprintln!("superpoint serve: stopped");
        Ok(())
    })
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
        eprintln!("superpoint serve: shutting down after the requests in flight");
    })
}

/// Completes on the first Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("superpoint serve: shutting down after the requests in flight");
        } else {
            std::future::pending::<()>().await;
        }
    })
}
