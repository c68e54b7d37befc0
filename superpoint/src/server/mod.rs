//! The HTTP service of `superpoint serve` (DESIGN §8), built on axum, hyper and tokio.
//!
//! Routes: `POST /predict` (JSON with a base64 image), `POST /predict_raw` (image file bytes),
//! `POST /predict_plane?height=H&width=W` (a raw 8-bit R plane), `GET /health`, `GET /info`,
//! `GET /metrics` (Prometheus), `GET /v1/models`. Responses carry the fields of the reference
//! port (see `routes`).
//!
//! One [`SuperPoint`] serves every request. Every limit is a [`Config`] field (and a flag of
//! `superpoint serve`; docs/serving.md gives the defaults), so that no client can hold the
//! server's memory, connections or time without bound:
//! * connections ([`conn`]): a maximum number open, header/body/idle/write timeouts, a shutdown
//!   deadline;
//! * requests ([`admission`], [`body`]): a bounded prediction queue (503 with `Retry-After`
//!   when full), a body limit checked from `Content-Length` before reading, memory budgets
//!   for bodies and for decoded images with their responses, a pixel limit checked from the
//!   image header, a cap on keypoints per response;
//! * the network runs one request per device at a time (one on the CPU; a Tensix pool sends
//!   each to its least-loaded device), in arrival order; decoding runs on blocking threads,
//!   [`Config::decode_workers`] at once; a panic in a request becomes a 500.
//!
//! [`app_warming`] serves while the model warms its variants up: `GET /health` answers 503
//! until warm-up is done ([`Readiness`]), and predictions get 503 with `Retry-After` meanwhile.
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

mod admission;
mod body;
mod conn;
mod error;
mod npz;
mod readiness;
mod routes;
mod telemetry;

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower_http::catch_panic::CatchPanicLayer;

use crate::backend::tensix::WarmupVariant;
use crate::decode::{MAX_FILE_BYTES, MAX_PIXELS};
use crate::model::SuperPoint;
use crate::options::Options;

use admission::{Budget, Queue};
use body::BodyLimits;
use conn::ConnLimits;
use telemetry::Telemetry;

pub use error::{ApiError, ServerError};
pub use npz::descriptors_npz;
pub use readiness::Readiness;

/// The first port tried when none is given.
pub const DEFAULT_PORT: u16 = 20000;
/// How many ports from [`DEFAULT_PORT`] on are tried before giving up.
pub const PORT_TRIES: u16 = 100;
/// The default request body limit: 32 MiB, the library's limit for image files.
pub const DEFAULT_BODY_LIMIT: usize = MAX_FILE_BYTES as usize;

/// Settings of the service; `Config::default()` gives the documented defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// The network frame every request is resized to, width × height.
    pub frame: (usize, usize),
    /// The largest accepted request body, in bytes (larger gets 413, at once when the
    /// `Content-Length` says so).
    pub body_limit: usize,
    /// The largest accepted image, in pixels (larger gets 413); at most the library's limit,
    /// [`MAX_PIXELS`].
    pub max_pixels: u64,
    /// How many requests may decode their images at once.
    pub decode_workers: usize,
    /// Prediction requests admitted at once, waiting or running (more get 503).
    pub max_queue: usize,
    /// Open connections at once (more get 503 and are closed).
    pub max_connections: usize,
    /// Time for a request head to arrive, from its first byte.
    pub header_timeout: Duration,
    /// Time for a request body to arrive, from when its route starts reading it (else 408).
    pub body_timeout: Duration,
    /// Time a connection may stay open without a request.
    pub idle_timeout: Duration,
    /// Time for a client to take a whole response.
    pub write_timeout: Duration,
    /// After a shutdown signal, time before connections idle or still receiving a request are
    /// dropped (requests being processed are still answered).
    pub shutdown_timeout: Duration,
    /// The most keypoints a response carries; more are cut (best kept) and the response says
    /// `"truncated": true`.
    pub max_response_keypoints: usize,
    /// Bytes of request bodies held at once (each body reserves its length, twice for the JSON
    /// route); at least twice `body_limit`.
    pub body_memory: u64,
    /// Bytes of decoded images, planes and responses held at once (each request reserves an
    /// upper bound from its image header and keypoint count).
    pub request_memory: u64,
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
            max_queue: 32,
            max_connections: 256,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(15),
            write_timeout: Duration::from_secs(30),
            shutdown_timeout: Duration::from_secs(10),
            max_response_keypoints: 8192,
            body_memory: 256 << 20,
            request_memory: 768 << 20,
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
        let counts = [
            ("decode_workers", self.decode_workers),
            ("max_queue", self.max_queue),
            ("max_connections", self.max_connections),
            ("max_response_keypoints", self.max_response_keypoints),
        ];
        for (name, value) in counts {
            if value == 0 {
                return bad(name, "0".into(), "must be at least 1");
            }
        }
        let timeouts = [
            ("header_timeout", self.header_timeout),
            ("body_timeout", self.body_timeout),
            ("idle_timeout", self.idle_timeout),
            ("write_timeout", self.write_timeout),
        ];
        for (name, value) in timeouts {
            if value.is_zero() {
                return bad(name, "0".into(), "must be longer than 0 s");
            }
        }
        if self.body_memory < 2 * self.body_limit as u64 {
            return bad(
                "body_memory",
                self.body_memory.to_string(),
                &format!(
                    "must be at least twice the body limit ({} bytes) so that the largest \
                     JSON body fits",
                    2 * self.body_limit as u64
                ),
            );
        }
        if self.request_memory < 64 << 20 {
            return bad(
                "request_memory",
                self.request_memory.to_string(),
                "must be at least 64 MiB",
            );
        }
        Ok(())
    }

    fn body_limits(&self) -> BodyLimits {
        BodyLimits {
            limit: self.body_limit,
            timeout: self.body_timeout,
        }
    }

    fn conn_limits(&self) -> ConnLimits {
        ConnLimits {
            max_connections: self.max_connections,
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
            write_timeout: self.write_timeout,
            shutdown_timeout: self.shutdown_timeout,
        }
    }
}

/// What every request shares: the model, the settings, the queue, the budgets and the metrics.
struct Shared {
    model: Arc<SuperPoint>,
    config: Config,
    queue: Queue,
    bodies: Budget,
    requests: Budget,
    /// `decode_workers` permits.
    decode: Arc<Semaphore>,
    /// One permit per device (the model's parallelism): the network runs that many requests at
    /// a time, in arrival order.
    device: Arc<Semaphore>,
    telemetry: Arc<Telemetry>,
    /// Whether predictions are served yet.
    ready: watch::Sender<Readiness>,
}

/// The service for one model: its routes and what [`serve`] needs to run them.
pub struct App {
    router: Router,
    config: Config,
    telemetry: Arc<Telemetry>,
    ready: watch::Receiver<Readiness>,
}

/// The service for `model` with `config`, ready at once (with whatever warm-up its builder did).
pub fn app(model: SuperPoint, config: Config) -> Result<App, ServerError> {
    Ok(new_app(Arc::new(model), config, Readiness::Ready)?.0)
}

/// The service for `model` with `config`, which warms `variants` up on every device of the model
/// on a thread of its own: until that is done, `GET /health` answers 503 and predictions 503
/// with `Retry-After` ([`App::readiness`] follows it). A model with nothing to warm up (the CPU
/// backend, or no variants) is ready at once. The caller may keep a handle on the model (e.g. to
/// watch its devices).
pub fn app_warming(
    model: Arc<SuperPoint>,
    config: Config,
    variants: Vec<WarmupVariant>,
) -> Result<App, ServerError> {
    if model.tensix().is_none() || variants.is_empty() {
        // Only checks the variants here.
        model
            .warmup_variants(&variants, None)
            .map_err(ServerError::Warmup)?;
        return Ok(new_app(model, config, Readiness::Ready)?.0);
    }
    let total = variants.len() * model.parallelism();
    let (app, shared) = new_app(model, config, Readiness::WarmingUp { done: 0, total })?;
    readiness::warm_up(shared, variants);
    Ok(app)
}

fn new_app(
    model: Arc<SuperPoint>,
    config: Config,
    readiness: Readiness,
) -> Result<(App, Arc<Shared>), ServerError> {
    config.validate()?;
    let telemetry = Arc::new(Telemetry::new().map_err(|e| ServerError::Metrics(e.to_string()))?);
    let devices = model.parallelism();
    let (ready, ready_rx) = watch::channel(readiness);
    let shared = Arc::new(Shared {
        model,
        config,
        queue: Queue::new(config.max_queue, telemetry.clone()),
        bodies: Budget::new(
            "bodies",
            "--body-memory",
            config.body_memory,
            telemetry.clone(),
        ),
        requests: Budget::new(
            "requests",
            "--request-memory",
            config.request_memory,
            telemetry.clone(),
        ),
        decode: Arc::new(Semaphore::new(config.decode_workers)),
        device: Arc::new(Semaphore::new(devices)),
        telemetry: telemetry.clone(),
        ready,
    });
    let router = with_layers(routes::routes(shared.clone()), &telemetry);
    Ok((
        App {
            router,
            config,
            telemetry,
            ready: ready_rx,
        },
        shared,
    ))
}

impl App {
    /// Follows the service's readiness (e.g. to stop when warm-up fails).
    pub fn readiness(&self) -> watch::Receiver<Readiness> {
        self.ready.clone()
    }

    /// Adds `routes` next to the service's, with the same middleware (request ids, metrics,
    /// panics answered 500).
    pub fn merge(self, routes: Router) -> Self {
        Self {
            router: self.router.merge(with_layers(routes, &self.telemetry)),
            ..self
        }
    }
}

/// The service's middleware: request ids, spans and metrics, and a panic in a handler
/// answered with a 500 JSON response.
fn with_layers(router: Router, telemetry: &Arc<Telemetry>) -> Router {
    router.layer(CatchPanicLayer::custom(panic_response)).layer(
        axum::middleware::from_fn_with_state(telemetry.clone(), telemetry::observe),
    )
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

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting connections,
/// answers the requests being processed, drops the rest after the shutdown deadline, and
/// returns when every connection is closed.
pub async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    conn::serve(
        listener,
        app.router,
        app.config.conn_limits(),
        app.telemetry,
        shutdown,
    )
    .await
}
