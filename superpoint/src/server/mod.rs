//! The HTTP service of `superpoint serve` (DESIGN §8), built on axum and tokio.
//!
//! Routes: `POST /predict` (JSON with a base64 image), `POST /predict_raw` (image file bytes),
//! `POST /predict_plane?height=H&width=W` (a raw 8-bit R plane), `GET /health`, `GET /info`,
//! `GET /v1/models`. Responses carry the fields of the reference port (see `routes`).
//!
//! One [`SuperPoint`] serves every request. Decoding runs on tokio's blocking threads, at most
//! [`Config::decode_workers`] at once; the network runs one request at a time (the CPU backend
//! already uses every core), queued in arrival order behind a semaphore, so requests wait
//! rather than being dropped. Bodies are size-limited, images pixel-limited, and a panic in a
//! request becomes a 500 response instead of stopping the server.
//!
//! ```no_run
//! # async fn run() -> Result<(), superpoint::server::ServerError> {
//! use superpoint::{server, SuperPoint};
//! let model = SuperPoint::from_weights("weights.safetensors").expect("weights");
//! let app = server::app(model, server::Config::default())?;
//! let listener = server::bind("127.0.0.1".parse().expect("address"), None).await?;
//! server::serve(listener, app, std::future::pending()).await?;
//! # Ok(())
//! # }
//! ```

mod error;
mod npz;
mod routes;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::catch_panic::CatchPanicLayer;

use crate::decode::MAX_PIXELS;
use crate::model::SuperPoint;
use crate::options::Options;

pub use error::{ApiError, ServerError};
pub use npz::descriptors_npz;

/// The first port tried when none is given.
pub const DEFAULT_PORT: u16 = 20000;
/// How many ports from [`DEFAULT_PORT`] on are tried before giving up.
pub const PORT_TRIES: u16 = 100;
/// The default request body limit: 32 MiB.
pub const DEFAULT_BODY_LIMIT: usize = 32 << 20;

/// Settings of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The network frame every request is resized to, width × height.
    pub frame: (usize, usize),
    /// The largest accepted request body, in bytes (larger gets 413).
    pub body_limit: usize,
    /// The largest accepted image, in pixels (larger gets 413); at most the library's limit,
    /// [`MAX_PIXELS`].
    pub max_pixels: u64,
    /// How many requests may decode their images at once.
    pub decode_workers: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            frame: Options::default().frame,
            body_limit: DEFAULT_BODY_LIMIT,
            max_pixels: MAX_PIXELS,
            decode_workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2),
        }
    }
}

impl Config {
    /// Checks every setting, naming the first that is out of range.
    pub fn validate(&self) -> Result<(), ServerError> {
        let bad = |name, value: String, why: &str| {
            Err(ServerError::Config {
                name,
                value,
                why: why.to_string(),
            })
        };
        let frame = Options {
            frame: self.frame,
            ..Options::default()
        };
        if let Err(e) = frame.validate() {
            let (w, h) = self.frame;
            return bad("frame", format!("{w}x{h}"), &e.to_string());
        }
        if self.body_limit == 0 {
            return bad("body_limit", "0".into(), "must be at least 1 byte");
        }
        if self.max_pixels == 0 || self.max_pixels > MAX_PIXELS {
            return bad(
                "max_pixels",
                self.max_pixels.to_string(),
                &format!("must be between 1 and the library's limit of {MAX_PIXELS}"),
            );
        }
        if self.decode_workers == 0 {
            return bad("decode_workers", "0".into(), "must be at least 1");
        }
        Ok(())
    }
}

/// What every request shares: the model, the settings and the two queues.
struct Shared {
    model: SuperPoint,
    config: Config,
    /// One permit: the network runs one request at a time, in arrival order.
    device: Arc<Semaphore>,
    /// `decode_workers` permits.
    decode: Arc<Semaphore>,
}

/// The service's router (all routes, with [`with_layers`] applied) for `model`.
pub fn app(model: SuperPoint, config: Config) -> Result<Router, ServerError> {
    config.validate()?;
    let shared = Arc::new(Shared {
        model,
        config,
        device: Arc::new(Semaphore::new(1)),
        decode: Arc::new(Semaphore::new(config.decode_workers)),
    });
    Ok(with_layers(routes::routes(shared), &config))
}

/// Applies the service's middleware to `router`: the body limit and the conversion of a
/// panic in a handler into a 500 JSON response. Use it for routes added next to [`app`]'s.
pub fn with_layers(router: Router, config: &Config) -> Router {
    router
        .layer(DefaultBodyLimit::max(config.body_limit))
        .layer(CatchPanicLayer::custom(panic_response))
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal error: the request handler panicked; the server keeps running",
    )
    .into_response()
}

/// A listener on `host`: on `port` when given (0 lets the system choose), else on
/// [`DEFAULT_PORT`] or the next free one of the [`PORT_TRIES`] after it.
pub async fn bind(host: IpAddr, port: Option<u16>) -> Result<TcpListener, ServerError> {
    if let Some(port) = port {
        return TcpListener::bind(SocketAddr::new(host, port))
            .await
            .map_err(|source| ServerError::Bind { host, port, source });
    }
    let last = DEFAULT_PORT + (PORT_TRIES - 1);
    for port in DEFAULT_PORT..=last {
        match TcpListener::bind(SocketAddr::new(host, port)).await {
            Ok(listener) => return Ok(listener),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => continue,
            Err(source) => return Err(ServerError::Bind { host, port, source }),
        }
    }
    Err(ServerError::NoFreePort {
        host,
        first: DEFAULT_PORT,
        last,
    })
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting connections
/// and returns once the requests in flight have been answered.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await
}
