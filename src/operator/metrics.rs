//! What the operator exposes for Prometheus (`/metrics`, text format 0.0.4) and for a
//! liveness probe (`/healthz`): requests by phase, how long a judgement takes, how long
//! reading the fleet takes, reconcile errors, and whether this replica leads.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::resource::Phase;

/// Upper bounds of the time-to-ready histogram, seconds (1 to 60 minutes).
const READY_BUCKETS: [f64; 10] = [
    60.0, 180.0, 300.0, 480.0, 600.0, 720.0, 900.0, 1200.0, 1800.0, 3600.0,
];

/// Upper bounds of the per-phase delivery histogram, seconds (10 s to 30 minutes).
const PHASE_BUCKETS: [f64; 10] = [
    10.0, 30.0, 60.0, 120.0, 180.0, 300.0, 480.0, 600.0, 900.0, 1800.0,
];

/// Upper bounds of the judgement-time histogram, seconds.
const BUCKETS: [f64; 10] = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

#[derive(Debug, Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

impl Histogram {
    fn observe(&mut self, bounds: &[f64], v: f64) {
        for (i, b) in bounds.iter().enumerate() {
            if v <= *b {
                self.counts[i] += 1;
            }
        }
        self.count += 1;
        self.sum += v;
    }

    fn write(&self, s: &mut String, name: &str, labels: &str, bounds: &[f64]) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (b, n) in bounds.iter().zip(self.counts) {
            let _ = writeln!(s, "{name}_bucket{{{labels}{sep}le=\"{b}\"}} {n}");
        }
        let _ = writeln!(
            s,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(s, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(s, "{name}_count{braces} {}", self.count);
    }
}

/// Deliveries measured: time to Ready per shape, each phase's length per shape, and how
/// many kept the target.
#[derive(Debug, Default)]
struct Deliveries {
    ready: std::collections::BTreeMap<String, Histogram>,
    phases: std::collections::BTreeMap<(String, String), Histogram>,
    within: u64,
    past: u64,
}

/// The operator's counters, shared by the controller and the HTTP endpoint.
#[derive(Debug, Default)]
pub struct Metrics {
    admission: Mutex<Histogram>,
    deliveries: Mutex<Deliveries>,
    fleet_read_ms: AtomicU64,
    reconcile_errors: AtomicU64,
    reconciles: AtomicU64,
    passes: AtomicU64,
    list_pages: AtomicU64,
    leader: AtomicBool,
    late: AtomicU64,
    phases: Mutex<[u64; Phase::ALL.len()]>,
}

impl Metrics {
    pub fn observe_admission(&self, seconds: f64) {
        self.admission
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .observe(&BUCKETS, seconds);
    }

    /// A delivery of `shape` spent `seconds` in `phase` (named by the milestone that ends
    /// it).
    pub fn observe_phase(&self, shape: &str, phase: &str, seconds: f64) {
        self.deliveries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .phases
            .entry((shape.to_string(), phase.to_string()))
            .or_default()
            .observe(&PHASE_BUCKETS, seconds);
    }

    /// A delivery of `shape` was done (Rancher's cluster ready and the team's access
    /// granted) `seconds` after admission, within its target or not.
    pub fn observe_ready(&self, shape: &str, seconds: f64, within: bool) {
        let mut d = self
            .deliveries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        d.ready
            .entry(shape.to_string())
            .or_default()
            .observe(&READY_BUCKETS, seconds);
        if within {
            d.within += 1;
        } else {
            d.past += 1;
        }
    }

    pub fn observe_fleet_read(&self, seconds: f64) {
        self.fleet_read_ms
            .store((seconds * 1000.0).round() as u64, Ordering::Relaxed);
    }

    pub fn reconcile_error(&self) {
        self.reconcile_errors.fetch_add(1, Ordering::Relaxed);
    }

    /// A judging pass ran, listing `pages` pages of requests.
    pub fn pass(&self, pages: u64) {
        self.passes.fetch_add(1, Ordering::Relaxed);
        self.list_pages.fetch_add(pages, Ordering::Relaxed);
    }

    pub fn reconciled(&self) {
        self.reconciles.fetch_add(1, Ordering::Relaxed);
    }

    pub fn set_leader(&self, yes: bool) {
        self.leader.store(yes, Ordering::Relaxed);
    }

    pub fn is_leader(&self) -> bool {
        self.leader.load(Ordering::Relaxed)
    }

    /// Deliveries under way past their target (`DeliveryLate`, not yet Ready).
    pub fn set_late(&self, n: u64) {
        self.late.store(n, Ordering::Relaxed);
    }

    /// Requests per phase, counted from the watched requests (no status reads Pending).
    pub fn set_phases(&self, phases: impl IntoIterator<Item = Option<Phase>>) {
        let mut counts = [0u64; Phase::ALL.len()];
        for p in phases {
            let p = p.unwrap_or(Phase::Pending);
            if let Some(i) = Phase::ALL.iter().position(|x| *x == p) {
                counts[i] += 1;
            }
        }
        *self
            .phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = counts;
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let phases = *self
            .phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.push_str("# HELP rackplan_operator_requests ClusterRequests by phase.\n");
        s.push_str("# TYPE rackplan_operator_requests gauge\n");
        for (p, n) in Phase::ALL.iter().zip(phases) {
            let _ = writeln!(
                s,
                "rackplan_operator_requests{{phase=\"{}\"}} {n}",
                p.as_str()
            );
        }
        let h = self
            .admission
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.push_str("# HELP rackplan_operator_admission_seconds Time to judge one request (quota, then every node and rack failure with and without it).\n");
        s.push_str("# TYPE rackplan_operator_admission_seconds histogram\n");
        h.write(&mut s, "rackplan_operator_admission_seconds", "", &BUCKETS);
        drop(h);
        let d = self
            .deliveries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        s.push_str("# HELP rackplan_operator_time_to_ready_seconds Time from admission to a Ready request (Rancher's cluster ready and the team's access granted), per catalogue shape.\n");
        s.push_str("# TYPE rackplan_operator_time_to_ready_seconds histogram\n");
        for (shape, h) in &d.ready {
            h.write(
                &mut s,
                "rackplan_operator_time_to_ready_seconds",
                &format!("shape=\"{}\"", label(shape)),
                &READY_BUCKETS,
            );
        }
        s.push_str("# HELP rackplan_operator_delivery_phase_seconds Time a delivery spent in each phase, named by the milestone that ends it (from the one before it, or admission), per catalogue shape.\n");
        s.push_str("# TYPE rackplan_operator_delivery_phase_seconds histogram\n");
        for ((shape, phase), h) in &d.phases {
            h.write(
                &mut s,
                "rackplan_operator_delivery_phase_seconds",
                &format!("shape=\"{}\",phase=\"{}\"", label(shape), label(phase)),
                &PHASE_BUCKETS,
            );
        }
        s.push_str("# HELP rackplan_operator_deliveries_total Deliveries done (Ready, with the team's access), within the delivery target or past it.\n");
        s.push_str("# TYPE rackplan_operator_deliveries_total counter\n");
        let _ = writeln!(
            s,
            "rackplan_operator_deliveries_total{{target=\"within\"}} {}",
            d.within
        );
        let _ = writeln!(
            s,
            "rackplan_operator_deliveries_total{{target=\"past\"}} {}",
            d.past
        );
        drop(d);
        s.push_str("# HELP rackplan_operator_deliveries_late Deliveries under way past their target (DeliveryLate, not yet Ready with the team's access).\n");
        s.push_str("# TYPE rackplan_operator_deliveries_late gauge\n");
        let _ = writeln!(
            s,
            "rackplan_operator_deliveries_late {}",
            self.late.load(Ordering::Relaxed)
        );
        s.push_str("# HELP rackplan_operator_fleet_read_seconds Time the last read of the Harvester fleet took.\n");
        s.push_str("# TYPE rackplan_operator_fleet_read_seconds gauge\n");
        let _ = writeln!(
            s,
            "rackplan_operator_fleet_read_seconds {}",
            self.fleet_read_ms.load(Ordering::Relaxed) as f64 / 1000.0
        );
        s.push_str("# HELP rackplan_operator_reconciles_total Reconciles run.\n");
        s.push_str("# TYPE rackplan_operator_reconciles_total counter\n");
        let _ = writeln!(
            s,
            "rackplan_operator_reconciles_total {}",
            self.reconciles.load(Ordering::Relaxed)
        );
        s.push_str("# HELP rackplan_operator_judging_passes_total Judging passes run (each lists the requests once).\n");
        s.push_str("# TYPE rackplan_operator_judging_passes_total counter\n");
        let _ = writeln!(
            s,
            "rackplan_operator_judging_passes_total {}",
            self.passes.load(Ordering::Relaxed)
        );
        s.push_str("# HELP rackplan_operator_request_list_pages_total Pages of ClusterRequests listed by the judging passes.\n");
        s.push_str("# TYPE rackplan_operator_request_list_pages_total counter\n");
        let _ = writeln!(
            s,
            "rackplan_operator_request_list_pages_total {}",
            self.list_pages.load(Ordering::Relaxed)
        );
        s.push_str(
            "# HELP rackplan_operator_reconcile_errors_total Reconciles that failed (retried).\n",
        );
        s.push_str("# TYPE rackplan_operator_reconcile_errors_total counter\n");
        let _ = writeln!(
            s,
            "rackplan_operator_reconcile_errors_total {}",
            self.reconcile_errors.load(Ordering::Relaxed)
        );
        s.push_str("# HELP rackplan_operator_leader Whether this replica holds the lease (1) or waits for it (0).\n");
        s.push_str("# TYPE rackplan_operator_leader gauge\n");
        let _ = writeln!(s, "rackplan_operator_leader {}", u8::from(self.is_leader()));
        s
    }
}

/// A label value with nothing that could break the exposition.
fn label(v: &str) -> String {
    v.replace(['\\', '"', '\n'], "_")
}

/// What one client may cost the listener: it serves Prometheus and a kubelet, never a
/// crowd, so a client that holds connections open, sends slowly or sends much is cut off
/// before it can take the descriptors or the memory the controller needs.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; more are closed as soon as they are accepted.
    pub max_connections: usize,
    /// Time for a request's header to arrive.
    pub header_timeout: std::time::Duration,
    /// Time for a whole connection (one request: no keep-alive).
    pub connection_timeout: std::time::Duration,
    /// Bytes read for one request (header and body).
    pub max_request_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 32,
            header_timeout: std::time::Duration::from_secs(5),
            connection_timeout: std::time::Duration::from_secs(15),
            max_request_bytes: 16 * 1024,
        }
    }
}

fn router(metrics: std::sync::Arc<Metrics>) -> axum::Router {
    use axum::routing::get;
    axum::Router::new()
        .route(
            "/metrics",
            get(move || {
                let m = metrics.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4",
                        )],
                        m.render(),
                    )
                }
            }),
        )
        .route("/healthz", get(|| async { "ok\n" }))
}

/// Serve `/metrics` and `/healthz` on `listener` until the process ends, within `limits`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: std::sync::Arc<Metrics>,
    limits: Limits,
) -> std::io::Result<()> {
    let app = router(metrics).layer(tower_http::limit::RequestBodyLimitLayer::new(
        limits.max_request_bytes,
    ));
    let slots = std::sync::Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    loop {
        let stream = match listener.accept().await {
            Ok((s, _)) => s,
            Err(e) => {
                // Out of descriptors, say: wait rather than spin.
                tracing::warn!(error = %e, "metrics listener: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(limits.header_timeout)
                .keep_alive(false)
                .max_buf_size(limits.max_request_bytes.max(8192))
                .serve_connection(io, service);
            let _ = tokio::time::timeout(limits.connection_timeout, conn).await;
            drop(slot);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exposition_counts_phases_buckets_and_errors() {
        let m = Metrics::default();
        m.set_phases([
            None,
            Some(Phase::Ready),
            Some(Phase::Ready),
            Some(Phase::Refused),
        ]);
        m.observe_admission(0.03);
        m.observe_admission(0.7);
        m.reconcile_error();
        m.observe_phase("standard", "infrastructure-ready", 200.0);
        m.observe_phase("standard", "infrastructure-ready", 20.0);
        m.observe_ready("standard", 1000.0, false);
        let t = m.render();
        assert!(
            t.contains("rackplan_operator_delivery_phase_seconds_bucket{shape=\"standard\",phase=\"infrastructure-ready\",le=\"30\"} 1\n")
                && t.contains("rackplan_operator_delivery_phase_seconds_bucket{shape=\"standard\",phase=\"infrastructure-ready\",le=\"300\"} 2\n")
                && t.contains("rackplan_operator_delivery_phase_seconds_sum{shape=\"standard\",phase=\"infrastructure-ready\"} 220\n")
                && t.contains("rackplan_operator_deliveries_total{target=\"past\"} 1\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_requests{phase=\"Pending\"} 1\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_requests{phase=\"Ready\"} 2\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_requests{phase=\"Expired\"} 0\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_admission_seconds_bucket{le=\"0.025\"} 0\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_admission_seconds_bucket{le=\"0.05\"} 1\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_admission_seconds_bucket{le=\"1\"} 2\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_admission_seconds_count 2\n"),
            "{t}"
        );
        assert!(
            t.contains("rackplan_operator_reconcile_errors_total 1\n"),
            "{t}"
        );
        assert!(t.contains("rackplan_operator_leader 0\n"), "{t}");
    }
}
