//! What the service tells its operator: Prometheus metrics (`GET /metrics`, text format) and a
//! `tracing` span per request whose id is in every log line of the request and in the
//! response's `x-request-id` header.
//!
//! Metrics: `superpoint_http_requests_total{route,status}`,
//! `superpoint_http_request_duration_seconds{route}` (a histogram), `superpoint_queue_depth`
//! (prediction requests admitted and not yet answered), `superpoint_requests_in_flight` (HTTP
//! requests being handled, any route), `superpoint_rejected_total{reason}` (requests and
//! connections refused or cut by a limit: see [`Rejection`]), `superpoint_connections_open`,
//! `superpoint_memory_reserved_bytes{pool}` (the memory budgets in use), `superpoint_ready` (1
//! once warm-up is done and a device is left), and per Tensix device of the pool
//! (`device` label: its id): `superpoint_device_up` (0 once it failed and left the pool),
//! `superpoint_device_queue` (requests assigned to it, waiting or running),
//! `superpoint_device_busy_seconds_total` (frames, warm-up, compiling),
//! `superpoint_device_frames_total`, `superpoint_device_compiles_total` and
//! `superpoint_device_compile_seconds_total` (frames that compiled or loaded programs no warm-up
//! had prepared, and the time they spent doing it). The device figures are the pool's own,
//! read at each scrape.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use prometheus::{
    CounterVec, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};
use tracing::Instrument;

use crate::backend::tensix::PoolDevice;

/// Why a request or a connection was refused or cut short (the `reason` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// 503: the prediction queue was full.
    QueueFull,
    /// 503 on a new connection: `max_connections` were open.
    ConnectionLimit,
    /// 413: the declared or received body was over the body limit.
    BodyTooLarge,
    /// 413: the image has more pixels than allowed, or needs more memory than the budget.
    ImageTooLarge,
    /// 408: the body did not arrive within the body timeout.
    BodyTimeout,
    /// Connection closed: the request head did not arrive within the header timeout.
    HeaderTimeout,
    /// Connection closed: the response was not taken within the write timeout.
    WriteTimeout,
    /// Connection closed: no new request within the idle timeout.
    IdleTimeout,
    /// Connection dropped at the shutdown deadline, idle or with an incomplete request.
    ShutdownDeadline,
    /// 503: a prediction arrived while the server was warming up.
    WarmingUp,
}

impl Rejection {
    pub const ALL: [Rejection; 10] = [
        Rejection::QueueFull,
        Rejection::ConnectionLimit,
        Rejection::BodyTooLarge,
        Rejection::ImageTooLarge,
        Rejection::BodyTimeout,
        Rejection::HeaderTimeout,
        Rejection::WriteTimeout,
        Rejection::IdleTimeout,
        Rejection::ShutdownDeadline,
        Rejection::WarmingUp,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Rejection::QueueFull => "queue_full",
            Rejection::ConnectionLimit => "connection_limit",
            Rejection::BodyTooLarge => "body_too_large",
            Rejection::ImageTooLarge => "image_too_large",
            Rejection::BodyTimeout => "body_timeout",
            Rejection::HeaderTimeout => "header_timeout",
            Rejection::WriteTimeout => "write_timeout",
            Rejection::IdleTimeout => "idle_timeout",
            Rejection::ShutdownDeadline => "shutdown_deadline",
            Rejection::WarmingUp => "warming_up",
        }
    }
}

/// The memory pools whose use is reported (the `pool` label).
pub const POOLS: [&str; 2] = ["bodies", "requests"];

/// The service's metrics, registered in a registry of their own (one per server, so that
/// servers in one process do not mix their counts).
pub struct Telemetry {
    registry: Registry,
    requests: IntCounterVec,
    duration: HistogramVec,
    pub queue_depth: IntGauge,
    pub in_flight: IntGauge,
    rejected: IntCounterVec,
    pub connections: IntGauge,
    pub memory: IntGaugeVec,
    ready: IntGauge,
    devices: DeviceMetrics,
    next_request: AtomicU64,
    next_connection: AtomicU64,
}

/// The per-device metrics of a Tensix pool, brought up to the pool's figures at each scrape.
struct DeviceMetrics {
    up: IntGaugeVec,
    queue: IntGaugeVec,
    busy: CounterVec,
    frames: IntCounterVec,
    compiles: IntCounterVec,
    compile: CounterVec,
    /// One scrape at a time brings the counters up (each adds what the pool counted since).
    syncing: Mutex<()>,
}

impl DeviceMetrics {
    fn new(registry: &Registry) -> prometheus::Result<Self> {
        let opts = |name: &str, help: &str| Opts::new(name, help);
        let label = &["device"];
        let metrics = Self {
            up: IntGaugeVec::new(
                opts(
                    "superpoint_device_up",
                    "1 while the device is in the pool, 0 once it failed",
                ),
                label,
            )?,
            queue: IntGaugeVec::new(
                opts(
                    "superpoint_device_queue",
                    "Requests assigned to the device, waiting for it or running",
                ),
                label,
            )?,
            busy: CounterVec::new(
                opts(
                    "superpoint_device_busy_seconds_total",
                    "Seconds the device was held: frames, warm-up, compiling and loading",
                ),
                label,
            )?,
            frames: IntCounterVec::new(
                opts(
                    "superpoint_device_frames_total",
                    "Frames the device ran for requests",
                ),
                label,
            )?,
            compiles: IntCounterVec::new(
                opts(
                    "superpoint_device_compiles_total",
                    "Frames that compiled or loaded programs no warm-up had prepared",
                ),
                label,
            )?,
            compile: CounterVec::new(
                opts(
                    "superpoint_device_compile_seconds_total",
                    "Seconds frames spent compiling and loading programs no warm-up had prepared",
                ),
                label,
            )?,
            syncing: Mutex::new(()),
        };
        registry.register(Box::new(metrics.up.clone()))?;
        registry.register(Box::new(metrics.queue.clone()))?;
        registry.register(Box::new(metrics.busy.clone()))?;
        registry.register(Box::new(metrics.frames.clone()))?;
        registry.register(Box::new(metrics.compiles.clone()))?;
        registry.register(Box::new(metrics.compile.clone()))?;
        Ok(metrics)
    }

    fn observe(&self, devices: &[PoolDevice]) {
        let _one_at_a_time = self.syncing.lock().unwrap_or_else(|p| p.into_inner());
        for d in devices {
            let s = &d.stats;
            let id = s.id.to_string();
            let label = [id.as_str()];
            self.up
                .with_label_values(&label)
                .set(i64::from(s.failed.is_none()));
            self.queue
                .with_label_values(&label)
                .set(i64::try_from(s.queue).unwrap_or(i64::MAX));
            let up_to = |counter: &prometheus::Counter, value: f64| {
                let behind = value - counter.get();
                if behind > 0.0 {
                    counter.inc_by(behind);
                }
            };
            up_to(&self.busy.with_label_values(&label), s.busy_seconds);
            up_to(&self.compile.with_label_values(&label), s.compile_seconds);
            let up_to_count = |counter: &prometheus::IntCounter, value: u64| {
                counter.inc_by(value.saturating_sub(counter.get()));
            };
            up_to_count(&self.frames.with_label_values(&label), s.frames);
            up_to_count(&self.compiles.with_label_values(&label), s.compiles);
        }
    }
}

/// Latency buckets, in seconds: from a cached health check to a long queue on the CPU.
const BUCKETS: [f64; 14] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

impl Telemetry {
    pub fn new() -> prometheus::Result<Self> {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "superpoint_http_requests_total",
                "HTTP requests answered, by route and status",
            ),
            &["route", "status"],
        )?;
        let duration = HistogramVec::new(
            HistogramOpts::new(
                "superpoint_http_request_duration_seconds",
                "Time from the request head to the response head, by route",
            )
            .buckets(BUCKETS.to_vec()),
            &["route"],
        )?;
        let queue_depth = IntGauge::new(
            "superpoint_queue_depth",
            "Prediction requests admitted and not yet answered (waiting or running)",
        )?;
        let in_flight = IntGauge::new(
            "superpoint_requests_in_flight",
            "HTTP requests being handled, any route",
        )?;
        let rejected = IntCounterVec::new(
            Opts::new(
                "superpoint_rejected_total",
                "Requests and connections refused or cut short by a limit, by reason",
            ),
            &["reason"],
        )?;
        let connections = IntGauge::new("superpoint_connections_open", "Open connections")?;
        let memory = IntGaugeVec::new(
            Opts::new(
                "superpoint_memory_reserved_bytes",
                "Bytes reserved in the memory budgets: request bodies, and decoded images \
                 with their responses",
            ),
            &["pool"],
        )?;
        registry.register(Box::new(requests.clone()))?;
        registry.register(Box::new(duration.clone()))?;
        registry.register(Box::new(queue_depth.clone()))?;
        registry.register(Box::new(in_flight.clone()))?;
        registry.register(Box::new(rejected.clone()))?;
        registry.register(Box::new(connections.clone()))?;
        registry.register(Box::new(memory.clone()))?;
        let ready = IntGauge::new(
            "superpoint_ready",
            "1 when predictions are served: warm-up done and a device left",
        )?;
        registry.register(Box::new(ready.clone()))?;
        let devices = DeviceMetrics::new(&registry)?;
        // Every reason and pool from the start, so that a scrape shows zeros, not nothing.
        for reason in Rejection::ALL {
            rejected.with_label_values(&[reason.label()]);
        }
        for pool in POOLS {
            memory.with_label_values(&[pool]);
        }
        Ok(Self {
            registry,
            requests,
            duration,
            queue_depth,
            in_flight,
            rejected,
            connections,
            memory,
            ready,
            devices,
            next_request: AtomicU64::new(1),
            next_connection: AtomicU64::new(1),
        })
    }

    /// Brings the readiness and the per-device metrics up to date.
    pub fn observe_devices(&self, devices: &[PoolDevice], ready: bool) {
        self.ready.set(i64::from(ready));
        self.devices.observe(devices);
    }

    pub fn reject(&self, reason: Rejection) {
        self.rejected.with_label_values(&[reason.label()]).inc();
    }

    /// A new connection's id, for its log lines.
    pub fn connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }

    /// The metrics in Prometheus' text exposition format.
    pub fn render(&self) -> Result<String, prometheus::Error> {
        TextEncoder::new().encode_to_string(&self.registry.gather())
    }
}

/// The route label: the matched route, or `other` (unknown paths are not labels of their own).
fn route_label(request: &Request) -> String {
    request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "other".to_string(), |p| p.as_str().to_string())
}

/// Middleware around every route: a request id and span, the in-flight gauge, the request
/// counter and the latency histogram, and a log line per answer.
pub async fn observe(
    State(telemetry): State<Arc<Telemetry>>,
    request: Request,
    next: Next,
) -> Response {
    let id = telemetry.next_request.fetch_add(1, Ordering::Relaxed);
    let route = route_label(&request);
    let span = tracing::info_span!(
        "request",
        id = %format_args!("r{id}"),
        method = %request.method(),
        route = %route,
    );
    async move {
        let started = Instant::now();
        // Counted down on drop: a request whose connection goes away is cancelled mid-way.
        let in_flight = InFlight::enter(&telemetry);
        let mut response = next.run(request).await;
        drop(in_flight);
        let status = response.status();
        telemetry
            .requests
            .with_label_values(&[route.as_str(), status.as_str()])
            .inc();
        let seconds = started.elapsed().as_secs_f64();
        telemetry
            .duration
            .with_label_values(&[route.as_str()])
            .observe(seconds);
        if let Ok(value) = HeaderValue::from_str(&format!("r{id}")) {
            response.headers_mut().insert("x-request-id", value);
        }
        if status.is_server_error() {
            tracing::warn!(status = status.as_u16(), ms = seconds * 1e3, "answered");
        } else {
            tracing::info!(status = status.as_u16(), ms = seconds * 1e3, "answered");
        }
        response
    }
    .instrument(span)
    .await
}

/// One request counted in `superpoint_requests_in_flight` while this lives.
struct InFlight<'a>(&'a Telemetry);

impl<'a> InFlight<'a> {
    fn enter(telemetry: &'a Telemetry) -> Self {
        telemetry.in_flight.inc();
        Self(telemetry)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

/// The answer to `GET /metrics`.
pub fn metrics_response(telemetry: &Telemetry) -> Response {
    match telemetry.render() {
        Ok(text) => ([(header::CONTENT_TYPE, prometheus::TEXT_FORMAT)], text).into_response(),
        Err(e) => super::ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot render the metrics: {e}"),
        )
        .into_response(),
    }
}
