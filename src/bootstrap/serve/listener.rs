//! The accept loop of `serve`, built to stay up on a hostile install network: a bounded
//! number of connections, a deadline for a request's header, and, when the table is full,
//! the oldest connection that never sent a complete request is closed to make room, so
//! idle sockets (slowloris) cannot lock real nodes out.
//!
//! Stopping is graceful: when the shutdown future resolves, the listener is closed, every
//! connection finishes the request it is serving and is then closed (keep-alive ends), and
//! the loop returns once all are done or after [`ConnectionLimits::drain`], cutting what is
//! left. The caller then saves its state.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tower::ServiceExt;

/// How many connections, and how long a client may take to send a request header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ConnectionLimits {
    pub(crate) max_connections: usize,
    pub(crate) header_timeout: Duration,
    /// How long requests in flight may take to finish once the server is told to stop.
    pub(crate) drain: Duration,
}

impl ConnectionLimits {
    /// Defaults fitted to this process: at most half its open-file limit, at most 512.
    pub(crate) fn for_this_process() -> ConnectionLimits {
        let files = open_file_limit().unwrap_or(1024);
        ConnectionLimits {
            max_connections: (files / 2).clamp(16, 512) as usize,
            header_timeout: Duration::from_secs(5),
            drain: Duration::from_secs(10),
        }
    }
}

/// The soft `Max open files` of this process, from /proc (no unsafe code needed).
fn open_file_limit() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

struct Slot {
    id: u64,
    /// A complete request header arrived on this connection.
    spoke: Arc<AtomicBool>,
    close: Arc<Notify>,
}

/// How the server stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stopped {
    /// Connections still busy when the drain time ran out, closed mid-request.
    pub(crate) cut: usize,
}

/// Serve `app` on `listener` until `shutdown` resolves, then drain (see the module docs).
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    shutdown: impl std::future::Future<Output = ()>,
) -> Stopped {
    let slots: Arc<Mutex<VecDeque<Slot>>> = Arc::new(Mutex::new(VecDeque::new()));
    let next_id = AtomicU64::new(0);
    // Tells every connection to finish its request and close.
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // Woken each time a connection ends.
    let ended = Arc::new(Notify::new());
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            a = listener.accept() => a,
        };
        let Ok((sock, peer)) = accepted else {
            // Out of file descriptors (or a transient error): make room, then go on.
            evict_one_silent(&slots);
            tokio::time::sleep(Duration::from_millis(10)).await;
            continue;
        };
        {
            let s = slots.lock().expect("not poisoned");
            let full = s.len() >= limits.max_connections;
            drop(s);
            if full && !evict_one_silent(&slots) {
                // Every connection is busy with a real request: refuse this one.
                drop(sock);
                continue;
            }
        }
        let _ = sock.set_nodelay(true);
        let id = next_id.fetch_add(1, Ordering::Relaxed);
        let spoke = Arc::new(AtomicBool::new(false));
        let close = Arc::new(Notify::new());
        slots.lock().expect("not poisoned").push_back(Slot {
            id,
            spoke: spoke.clone(),
            close: close.clone(),
        });
        let app = app.clone();
        let slots = slots.clone();
        let mut stop = stop_rx.clone();
        let ended = ended.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                spoke.store(true, Ordering::Relaxed);
                req.extensions_mut().insert(ConnectInfo(peer));
                let app = app.clone();
                // The router's error type is Infallible: its result is always a response.
                async move { app.oneshot(req).await }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .serve_connection(TokioIo::new(sock), svc);
            tokio::pin!(conn);
            let stopping = tokio::select! {
                _ = conn.as_mut() => false,
                () = close.notified() => false,
                _ = stop.wait_for(|s| *s) => true,
            };
            if stopping {
                // Finish the request in flight (if any), then close.
                conn.as_mut().graceful_shutdown();
                tokio::select! {
                    _ = conn.as_mut() => {}
                    () = close.notified() => {}
                }
            }
            slots.lock().expect("not poisoned").retain(|s| s.id != id);
            ended.notify_one();
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let deadline = tokio::time::Instant::now() + limits.drain;
    loop {
        let left = slots.lock().expect("not poisoned").len();
        if left == 0 {
            return Stopped { cut: 0 };
        }
        tokio::select! {
            () = ended.notified() => {}
            () = tokio::time::sleep_until(deadline) => {
                let mut s = slots.lock().expect("not poisoned");
                let cut = s.len();
                for c in s.drain(..) {
                    c.close.notify_one();
                }
                return Stopped { cut };
            }
        }
    }
}

/// Close the oldest connection that has not sent a request; false when there is none.
fn evict_one_silent(slots: &Mutex<VecDeque<Slot>>) -> bool {
    let mut s = slots.lock().expect("not poisoned");
    if let Some(i) = s.iter().position(|c| !c.spoke.load(Ordering::Relaxed)) {
        if let Some(c) = s.remove(i) {
            c.close.notify_one();
        }
        return true;
    }
    false
}

/// The client address of a request, as the accept loop recorded it.
pub(crate) fn client(req_ext: &axum::http::Extensions) -> Option<SocketAddr> {
    req_ext
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(a)| *a)
}
