//! Connections: the accept loop with its connection limit, the timeouts of each connection, and
//! the shutdown deadline.
//!
//! Each connection runs hyper's HTTP/1.1 server and tracks which [`Stage`] it is in; a watchdog
//! closes it when a stage outlives its timeout:
//! * `Idle` (new, or after a response): `idle_timeout` for the first byte of a request;
//! * `Head` (bytes arrived): `header_timeout` for the whole request head, counted from the first
//!   byte, so a client trickling header bytes cannot hold the connection;
//! * `Body`: the route reads the body under `body_timeout` (408) and its memory budget;
//! * `Processing` (body in, the request queued or running): no timeout, the work is bounded;
//! * `Writing` (response produced): `write_timeout` for the client to take all of it.
//!
//! A connection hyper is done with is closed gracefully ([`linger`]): a client answered before
//! it finished sending its body reads the answer, not a reset.
//!
//! Past `max_connections` open connections a new one gets a 503 and is closed. On shutdown the
//! listener closes, idle connections are dropped at once, the others finish their request;
//! after `shutdown_timeout`, connections still idle or receiving a request are dropped, and
//! those processing or writing a response finish it (under `write_timeout`).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::Router;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tower::ServiceExt;
use tracing::Instrument;

use super::admission::RETRY_AFTER_SECS;
use super::telemetry::{Rejection, Telemetry};

/// The connection-level settings (see [`super::Config`] for their meaning).
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub idle_timeout: Duration,
    pub write_timeout: Duration,
    pub shutdown_timeout: Duration,
}

/// hyper's read buffer per connection: a request head must fit (larger ones get 431).
const MAX_BUF: usize = 64 << 10;
/// The longest a closing connection waits for its client to stop sending (see [`linger`]).
const LINGER: Duration = Duration::from_secs(5);

/// Where a connection is in its current exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Idle,
    Head,
    Body,
    Processing,
    Writing,
}

/// A connection's stage and the instant it expires, shared by the socket wrapper, the service,
/// the routes (through a request extension) and the watchdog.
#[derive(Clone)]
pub struct Phase {
    state: Arc<watch::Sender<(Stage, Option<Instant>)>>,
    limits: ConnLimits,
}

impl Phase {
    fn new(limits: ConnLimits) -> Self {
        let deadline = Some(Instant::now() + limits.idle_timeout);
        Self {
            state: Arc::new(watch::Sender::new((Stage::Idle, deadline))),
            limits,
        }
    }

    fn set(&self, stage: Stage, timeout: Option<Duration>) {
        self.state
            .send_replace((stage, timeout.map(|t| Instant::now() + t)));
    }

    pub fn stage(&self) -> Stage {
        self.state.borrow().0
    }

    /// Bytes arrived: an idle connection starts receiving a request head.
    fn bytes_arrived(&self) {
        let deadline = Instant::now() + self.limits.header_timeout;
        self.state.send_if_modified(|state| {
            let idle = state.0 == Stage::Idle;
            if idle {
                *state = (Stage::Head, Some(deadline));
            }
            idle
        });
    }

    /// The request head is in; its route reads the body (under its own timeout).
    fn request(&self) {
        self.set(Stage::Body, None);
    }

    /// The body is in: the request is being processed.
    pub fn processing(&self) {
        self.set(Stage::Processing, None);
    }

    fn responding(&self) {
        self.set(Stage::Writing, Some(self.limits.write_timeout));
    }

    fn idle(&self) {
        self.set(Stage::Idle, Some(self.limits.idle_timeout));
    }

    /// Completes with the stage whose deadline passed.
    async fn expired(&self) -> Stage {
        let mut changes = self.state.subscribe();
        loop {
            let (stage, deadline) = *changes.borrow_and_update();
            match deadline {
                Some(deadline) => tokio::select! {
                    _ = tokio::time::sleep_until(deadline) => return stage,
                    _ = changes.changed() => {}
                },
                None => {
                    if changes.changed().await.is_err() {
                        return std::future::pending().await;
                    }
                }
            }
        }
    }
}

/// The socket, noting when bytes arrive on an idle connection.
struct Watched {
    stream: TcpStream,
    phase: Phase,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let result = Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.phase.bytes_arrived();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A response body that marks the connection idle once hyper is done with it.
struct PhaseBody {
    inner: Body,
    phase: Phase,
}

impl HttpBody for PhaseBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for PhaseBody {
    fn drop(&mut self) {
        self.phase.idle();
    }
}

/// What the accept loop tells its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Run,
    /// Shutting down: finish the current request, then close; idle ones close now.
    Graceful,
    /// The shutdown deadline: drop unless processing or writing a response.
    Deadline,
}

/// Serves `router` on `listener` until `shutdown` completes, then shuts down as the module doc
/// says and returns when every connection is closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    telemetry: Arc<Telemetry>,
    shutdown: impl Future<Output = ()> + Send,
) -> io::Result<()> {
    let (stop, stopped) = watch::channel(Stop::Run);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait for connections to close.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        while connections.try_join_next().is_some() {}
        if connections.len() >= limits.max_connections {
            telemetry.reject(Rejection::ConnectionLimit);
            tracing::warn!(%peer, "refused a connection: {} are open (--max-connections)", limits.max_connections);
            tokio::spawn(refuse(stream));
            continue;
        }
        let id = telemetry.connection_id();
        let span = tracing::info_span!("connection", id = %format_args!("c{id}"), %peer);
        connections.spawn(
            connection(
                stream,
                router.clone(),
                limits,
                telemetry.clone(),
                stopped.clone(),
            )
            .instrument(span),
        );
    }
    drop(listener);
    while connections.try_join_next().is_some() {}
    tracing::info!(
        "shutting down: {} requests in flight, {} connections open; connections idle or \
         receiving a request are dropped after {} s",
        telemetry.in_flight.get(),
        connections.len(),
        limits.shutdown_timeout.as_secs_f64()
    );
    stop.send_replace(Stop::Graceful);
    let deadline = tokio::time::sleep(limits.shutdown_timeout);
    tokio::pin!(deadline);
    let mut past_deadline = false;
    loop {
        tokio::select! {
            next = connections.join_next() => if next.is_none() { break },
            _ = &mut deadline, if !past_deadline => {
                past_deadline = true;
                tracing::info!(
                    "shutdown deadline: dropping idle and incomplete connections; {} left",
                    connections.len()
                );
                stop.send_replace(Stop::Deadline);
            }
        }
    }
    Ok(())
}

/// Answers a connection over the limit with a 503 and closes it (within a few seconds).
async fn refuse(mut stream: TcpStream) {
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nretry-after: {RETRY_AFTER_SECS}\r\n\
         content-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{}",
        REFUSED.len(),
        REFUSED
    );
    let written = tokio::time::timeout(LINGER, stream.write_all(response.as_bytes())).await;
    if matches!(written, Ok(Ok(()))) {
        linger(stream).await;
    }
}

/// Closes a connection the server is done with gracefully: its write side first, then what
/// the client still sends is read and dropped until it closes (for at most [`LINGER`]), so that
/// a client answered before it finished sending a body (413, 503, a bad query) reads the answer
/// instead of a connection reset.
async fn linger(mut stream: TcpStream) {
    let _ = tokio::time::timeout(LINGER, async {
        stream.shutdown().await?;
        let mut sink = [0u8; 8192];
        while stream.read(&mut sink).await? > 0 {}
        io::Result::Ok(())
    })
    .await;
}

/// What the service gives hyper for a request (boxed, so that the connection is `Unpin` and
/// can be taken apart at its end).
type Answer = Pin<
    Box<dyn Future<Output = Result<axum::response::Response, std::convert::Infallible>> + Send>,
>;

const REFUSED: &str =
    r#"{"error":"the server has too many open connections (--max-connections); retry later"}"#;

async fn connection(
    stream: TcpStream,
    router: Router,
    limits: ConnLimits,
    telemetry: Arc<Telemetry>,
    mut stop: watch::Receiver<Stop>,
) {
    telemetry.connections.inc();
    let phase = Phase::new(limits);
    let io = TokioIo::new(Watched {
        stream,
        phase: phase.clone(),
    });
    let service = hyper::service::service_fn({
        let phase = phase.clone();
        move |request: hyper::Request<Incoming>| -> Answer {
            let (router, phase) = (router.clone(), phase.clone());
            Box::pin(async move {
                phase.request();
                let mut request: Request = request.map(Body::new);
                request.extensions_mut().insert(phase.clone());
                let response = router.oneshot(request).await;
                phase.responding();
                response.map(|r| r.map(|inner| Body::new(PhaseBody { inner, phase })))
            })
        }
    });
    let mut builder = http1::Builder::new();
    builder.max_buf_size(MAX_BUF).header_read_timeout(None);
    let mut conn = builder.serve_connection(io, service);
    let mut listening = true;
    loop {
        tokio::select! {
            result = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => {
                match result {
                    Ok(()) => linger(conn.into_parts().io.into_inner().stream).await,
                    Err(e) => tracing::debug!("connection ended: {e}"),
                }
                break;
            }
            stage = phase.expired() => {
                let reason = match stage {
                    Stage::Idle => Rejection::IdleTimeout,
                    Stage::Head => Rejection::HeaderTimeout,
                    _ => Rejection::WriteTimeout,
                };
                telemetry.reject(reason);
                tracing::info!("closed: {}", reason.label());
                break;
            }
            changed = stop.changed(), if listening => {
                if changed.is_err() {
                    listening = false;
                    continue;
                }
                let order = *stop.borrow_and_update();
                let stage = phase.stage();
                match order {
                    Stop::Run => {}
                    Stop::Graceful if stage == Stage::Idle => break,
                    Stop::Graceful => Pin::new(&mut conn).graceful_shutdown(),
                    Stop::Deadline => {
                        if matches!(stage, Stage::Idle | Stage::Head | Stage::Body) {
                            telemetry.reject(Rejection::ShutdownDeadline);
                            tracing::info!("dropped at the shutdown deadline ({stage:?})");
                            break;
                        }
                    }
                }
            }
        }
    }
    telemetry.connections.dec();
}
