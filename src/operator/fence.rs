//! The fence every write of the operator passes: only the replica that holds the Lease
//! writes, and it stops writing before another replica can take the Lease over.
//!
//! A follower takes the Lease once the holder's record has not changed for a whole lease
//! duration **as the follower observed it** (client-go's rule, `leader.rs`), so the
//! holder's own renewals bound how long it may act: a renewal sent at `t` (the holder's
//! monotonic clock, read before the request) keeps the holder safe until
//! `t + duration`, and the fence allows writes only until `t + duration - margin`
//! (a quarter of the duration, for request latency and clock-rate drift). A replica
//! paused past that point (SIGSTOP, a VM pause, a long collection) finds, when it
//! resumes, that its last renewal is too old: the write is refused and the replica stops
//! acting, whatever it computed before the pause. Before a judging pass writes its
//! verdicts it also reads the Lease back from the API server (`verify`): the holder must
//! still be this replica and the record the one it last wrote. The writes themselves
//! carry the `resourceVersion` their decision was made on, so even a write that slipped
//! past the fence cannot overwrite what a successor wrote since.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::Api;
use tokio::time::Instant;

/// Why a write was refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FenceError {
    #[error(
        "the lease was last renewed {ago:.1?} ago, past the {valid:?} it keeps this replica safe: another replica may lead; this replica stops acting"
    )]
    Stale { ago: Duration, valid: Duration },
    #[error("the lease is lost ({0}); this replica stops acting")]
    Lost(String),
    #[error("the lease has not been acquired yet")]
    NotHeld,
}

#[derive(Debug, Default)]
struct Held {
    /// When the last successful renewal was sent (before the request).
    renewed: Option<Instant>,
    /// The Lease's resourceVersion after that renewal.
    version: Option<String>,
}

#[derive(Debug)]
struct Inner {
    api: Api<Lease>,
    name: String,
    identity: String,
    duration: Duration,
    held: Mutex<Held>,
    lost: AtomicBool,
    lost_tx: tokio::sync::watch::Sender<bool>,
}

/// Shared by the elector (which renews) and every writer (which checks).
#[derive(Debug, Clone)]
pub struct Fence(Option<Arc<Inner>>);

impl Fence {
    /// No leader election: one replica, always allowed.
    pub fn none() -> Fence {
        Fence(None)
    }

    pub fn new(api: Api<Lease>, name: &str, identity: &str, duration: Duration) -> Fence {
        let (lost_tx, _) = tokio::sync::watch::channel(false);
        Fence(Some(Arc::new(Inner {
            api,
            name: name.to_string(),
            identity: identity.to_string(),
            duration,
            held: Mutex::new(Held::default()),
            lost: AtomicBool::new(false),
            lost_tx,
        })))
    }

    /// The elector renewed (or acquired) the Lease: `sent` is when the request left,
    /// `version` the record it wrote.
    pub fn renewed(&self, sent: Instant, version: Option<String>) {
        if let Some(i) = &self.0 {
            let mut h = i
                .held
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            h.renewed = Some(sent);
            h.version = version;
        }
    }

    /// The elector learnt the Lease is gone: nothing is written from now on.
    pub fn lose(&self, why: &str) {
        if let Some(i) = &self.0
            && !i.lost.swap(true, Ordering::SeqCst)
        {
            tracing::warn!(reason = why, "leader election: the lease is lost");
            let _ = i.lost_tx.send(true);
        }
    }

    /// Resolves once the Lease is lost (never without leader election).
    pub async fn lost(&self) {
        match &self.0 {
            Some(i) => {
                let mut rx = i.lost_tx.subscribe();
                let _ = rx.wait_for(|l| *l).await;
            }
            None => std::future::pending().await,
        }
    }

    /// The margin kept before the end of the lease's safe time.
    fn valid_for(duration: Duration) -> Duration {
        duration.saturating_sub(duration / 4)
    }

    /// May this replica write now? On its own clock: the last renewal is recent enough.
    pub fn check(&self) -> Result<(), FenceError> {
        let Some(i) = &self.0 else {
            return Ok(());
        };
        if i.lost.load(Ordering::SeqCst) {
            return Err(FenceError::Lost("given up".into()));
        }
        let renewed = i
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .renewed;
        let Some(at) = renewed else {
            return Err(FenceError::NotHeld);
        };
        let ago = at.elapsed();
        let valid = Self::valid_for(i.duration);
        if ago >= valid {
            self.lose("the last renewal is too old");
            return Err(FenceError::Stale { ago, valid });
        }
        Ok(())
    }

    /// `check`, then the Lease read back: still held by this replica, in the record it
    /// last wrote.
    pub async fn verify(&self) -> Result<(), FenceError> {
        self.check()?;
        let Some(i) = &self.0 else {
            return Ok(());
        };
        let lease = i
            .api
            .get(&i.name)
            .await
            .map_err(|e| FenceError::Lost(format!("reading the lease: {e}")))?;
        let holder = lease
            .spec
            .as_ref()
            .and_then(|s| s.holder_identity.clone())
            .unwrap_or_default();
        let version = lease.metadata.resource_version.clone();
        let mine = i
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .version
            .clone();
        if holder != i.identity {
            self.lose("another replica holds it");
            return Err(FenceError::Lost(format!("held by {holder}")));
        }
        if version != mine {
            // Renewed by this replica since it was read: the record moved on, still ours.
            // Anything else wrote it only if the holder changed, which is checked above.
            tracing::debug!("the lease moved on between the renewal and the check");
        }
        self.check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_safe_time_keeps_a_quarter_of_the_lease_back() {
        assert_eq!(
            Fence::valid_for(Duration::from_secs(15)),
            Duration::from_millis(11_250)
        );
        assert_eq!(
            Fence::valid_for(Duration::from_secs(3)),
            Duration::from_millis(2_250)
        );
    }

    #[test]
    fn without_leader_election_every_write_passes() {
        assert!(Fence::none().check().is_ok());
    }
}
