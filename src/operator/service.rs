//! The operator as a long-running service: the two API clients (Rancher's cluster for the
//! requests, Harvester's for the fleet; one kubeconfig for both when they coincide, the
//! in-cluster config when none is given), `/metrics` and `/healthz`, leader election, and
//! the controller, which runs only while this replica holds the lease.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::context::{Context, OperatorError, Settings, Transition};
use super::controller;
use super::fence::Fence;
use super::leader::{Elector, LeaseSettings};
use super::metrics::Metrics;

/// How the service is started.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    pub settings: Settings,
    /// Rancher's cluster (requests, Rancher Clusters, events, the lease).
    pub rancher_kubeconfig: Option<PathBuf>,
    /// Harvester's cluster (the fleet); Rancher's when absent.
    pub harvester_kubeconfig: Option<PathBuf>,
    pub listen: SocketAddr,
    /// `None`: no leader election (one replica only, or a test).
    pub lease: Option<(String, Duration)>,
}

/// A kube client from a kubeconfig file, else the environment (`KUBECONFIG`, then the
/// in-cluster service account).
pub async fn client(kubeconfig: Option<&PathBuf>) -> Result<kube::Client, OperatorError> {
    let config = config(kubeconfig).await?;
    kube::Client::try_from(config).map_err(|e| OperatorError::Config {
        what: config_origin(kubeconfig),
        message: e.to_string(),
    })
}

fn config_origin(p: Option<&PathBuf>) -> String {
    match p {
        Some(p) => format!("kubeconfig {}", p.display()),
        None => "the in-cluster config or KUBECONFIG".to_string(),
    }
}

/// The client configuration of a kubeconfig file, else of the environment.
pub async fn config(kubeconfig: Option<&PathBuf>) -> Result<kube::Config, OperatorError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fail = |message: String| OperatorError::Config {
        what: config_origin(kubeconfig),
        message,
    };
    match kubeconfig {
        Some(p) => {
            let kc = kube::config::Kubeconfig::read_from(p).map_err(|e| fail(e.to_string()))?;
            kube::Config::from_custom_kubeconfig(kc, &kube::config::KubeConfigOptions::default())
                .await
                .map_err(|e| fail(e.to_string()))
        }
        None => kube::Config::infer().await.map_err(|e| fail(e.to_string())),
    }
}

/// Run until `shutdown` resolves. A replica that loses the lease stops acting at once
/// (the controller ends before its next write) and goes back to waiting for the lease,
/// with fresh caches when it leads again.
pub async fn serve(
    o: ServiceOptions,
    log: tokio::sync::mpsc::UnboundedSender<Transition>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), OperatorError> {
    let rancher = client(o.rancher_kubeconfig.as_ref()).await?;
    let harvester = match &o.harvester_kubeconfig {
        Some(p) if Some(p) != o.rancher_kubeconfig.as_ref() => client(Some(p)).await?,
        _ => rancher.clone(),
    };
    let metrics = Arc::new(Metrics::default());
    let listener =
        tokio::net::TcpListener::bind(o.listen)
            .await
            .map_err(|e| OperatorError::Config {
                what: format!("--listen {}", o.listen),
                message: e.to_string(),
            })?;
    tokio::spawn(super::metrics::serve(
        listener,
        metrics.clone(),
        super::metrics::Limits::default(),
    ));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let shutdown = async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    };
    tokio::spawn(shutdown);
    let stopped = || wait_stop(stop_rx.clone());
    loop {
        // A new term: a new elector (and fence) each time the lease is sought.
        let mut elector = o.lease.as_ref().map(|(name, duration)| {
            Elector::new(
                rancher.clone(),
                LeaseSettings {
                    namespace: o.settings.namespace.clone(),
                    name: name.clone(),
                    identity: o.settings.identity.clone(),
                    duration: *duration,
                    retry: (*duration / 3).max(Duration::from_millis(500)),
                },
            )
        });
        if let Some(e) = elector.as_mut() {
            tokio::select! {
                () = e.acquire() => {}
                () = stopped() => return Ok(()),
            }
        }
        metrics.set_leader(true);
        tracing::info!(identity = %o.settings.identity, "leading: the controller starts");
        let fence = elector.as_ref().map_or_else(Fence::none, Elector::fence);
        let ctx = Arc::new(Context::new(
            o.settings.clone(),
            rancher.clone(),
            harvester.clone(),
            metrics.clone(),
            fence.clone(),
            log.clone(),
        ));
        let (lost_tx, lost_rx) = tokio::sync::oneshot::channel::<()>();
        let stop_for_controller = stopped();
        let fence_lost = fence.clone();
        let stop = async move {
            tokio::select! {
                () = stop_for_controller => {}
                _ = lost_rx => {}
                () = fence_lost.lost() => {}
            }
        };
        let running = tokio::spawn(controller::run(ctx, stop));
        let lost = if let Some(e) = elector.as_mut() {
            tokio::select! {
                reason = e.hold() => reason,
                () = fence.lost() => {
                    "a write found the lease's safe time over".to_string()
                }
                () = stopped() => {
                    let _ = lost_tx.send(());
                    let _ = running.await;
                    e.release().await;
                    metrics.set_leader(false);
                    return Ok(());
                }
            }
        } else {
            stopped().await;
            let _ = lost_tx.send(());
            let _ = running.await;
            metrics.set_leader(false);
            return Ok(());
        };
        fence.lose(&lost);
        metrics.set_leader(false);
        let _ = lost_tx.send(());
        let _ = running.await;
        tracing::warn!(reason = %lost, "no longer leading: this replica stopped acting and waits for the lease");
    }
}

async fn wait_stop(mut rx: tokio::sync::watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await;
}
