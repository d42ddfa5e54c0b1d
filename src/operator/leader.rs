//! Leader election on a `coordination.k8s.io/v1` Lease, so that of two replicas only one
//! acts. The rules are client-go's `leaderelection` package's (`tryAcquireOrRenew`): a
//! replica takes the lease when it is free or when its record has not changed for a whole
//! lease duration as this replica observed it (its own clock, never the holder's
//! timestamps, so clock skew between machines does not matter); every write carries the
//! `resourceVersion` it read, so two replicas racing for it cannot both win (the API
//! server refuses the second with a conflict). A leader that cannot renew for a lease
//! duration stops acting before another can take over; every renewal is reported to the
//! write fence (`fence.rs`), which refuses writes once the last one is too old.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::time::Instant;

use super::fence::Fence;

/// Where the lease lives and how long it lasts.
#[derive(Debug, Clone)]
pub struct LeaseSettings {
    pub namespace: String,
    pub name: String,
    /// This replica's name in `holderIdentity`.
    pub identity: String,
    pub duration: Duration,
    /// How often the leader renews and a follower retries.
    pub retry: Duration,
}

/// What one try found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Try {
    Held,
    Taken,
}

/// Observes the lease record between tries: the record last seen and when it changed.
pub struct Elector {
    api: Api<Lease>,
    s: LeaseSettings,
    seen: Option<(String, Instant)>,
    fence: Fence,
}

impl Elector {
    pub fn new(client: kube::Client, s: LeaseSettings) -> Self {
        let api: Api<Lease> = Api::namespaced(client, &s.namespace);
        let fence = Fence::new(api.clone(), &s.name, &s.identity, s.duration);
        Elector {
            api,
            s,
            seen: None,
            fence,
        }
    }

    /// The fence this elector keeps up to date.
    pub fn fence(&self) -> Fence {
        self.fence.clone()
    }

    /// Wait until this replica holds the lease.
    pub async fn acquire(&mut self) {
        loop {
            match self.try_once().await {
                Ok(Try::Held) => return,
                Ok(Try::Taken) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: cannot read or write the lease");
                }
            }
            tokio::time::sleep(self.s.retry).await;
        }
    }

    /// Renew until the lease is lost: returns when this replica could not renew for a
    /// whole lease duration, or another holds it.
    pub async fn hold(&mut self) -> String {
        let mut last_renewed = Instant::now();
        loop {
            tokio::time::sleep(self.s.retry).await;
            match self.try_once().await {
                Ok(Try::Held) => last_renewed = Instant::now(),
                Ok(Try::Taken) => {
                    self.fence.lose("another replica holds it");
                    return "another replica holds the lease".into();
                }
                Err(e) => {
                    tracing::warn!(error = %e, "leader election: renewal failed");
                    // Stop before a follower may take over (it waits a whole duration).
                    if last_renewed.elapsed() + self.s.retry >= self.s.duration {
                        self.fence.lose("renewals failed");
                        return format!(
                            "the lease could not be renewed for {:?}: {e}",
                            self.s.duration
                        );
                    }
                }
            }
        }
    }

    /// Give the lease up at shutdown so a follower takes over at once.
    pub async fn release(&mut self) {
        if let Ok(mut l) = self.api.get(&self.s.name).await {
            let spec = l.spec.get_or_insert_with(LeaseSpec::default);
            if spec.holder_identity.as_deref() == Some(self.s.identity.as_str()) {
                spec.holder_identity = None;
                let _ = self
                    .api
                    .replace(&self.s.name, &PostParams::default(), &l)
                    .await;
            }
        }
    }

    async fn try_once(&mut self) -> Result<Try, kube::Error> {
        let sent = Instant::now();
        let now = MicroTime(k8s_openapi::jiff::Timestamp::now());
        let secs = i32::try_from(self.s.duration.as_secs()).unwrap_or(i32::MAX);
        let Some(current) = self.api.get_opt(&self.s.name).await? else {
            let lease = Lease {
                metadata: ObjectMeta {
                    name: Some(self.s.name.clone()),
                    namespace: Some(self.s.namespace.clone()),
                    ..Default::default()
                },
                spec: Some(LeaseSpec {
                    holder_identity: Some(self.s.identity.clone()),
                    lease_duration_seconds: Some(secs),
                    acquire_time: Some(now.clone()),
                    renew_time: Some(now),
                    lease_transitions: Some(0),
                    ..Default::default()
                }),
            };
            return match self.api.create(&PostParams::default(), &lease).await {
                Ok(l) => {
                    self.fence.renewed(sent, l.metadata.resource_version);
                    Ok(Try::Held)
                }
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(Try::Taken),
                Err(e) => Err(e),
            };
        };
        let version = current
            .metadata
            .resource_version
            .clone()
            .unwrap_or_default();
        let spec = current.spec.clone().unwrap_or_default();
        let holder = spec.holder_identity.clone().unwrap_or_default();
        let mine = holder == self.s.identity;
        // When the record last changed, as this replica saw it.
        let changed = match &self.seen {
            Some((v, at)) if *v == version => *at,
            _ => {
                let at = Instant::now();
                self.seen = Some((version.clone(), at));
                at
            }
        };
        let held_for = spec.lease_duration_seconds.map_or(self.s.duration, |s| {
            Duration::from_secs(u64::try_from(s).unwrap_or(0))
        });
        let free = holder.is_empty() || changed.elapsed() >= held_for;
        if !mine && !free {
            return Ok(Try::Taken);
        }
        let mut next = current;
        let s = next.spec.get_or_insert_with(LeaseSpec::default);
        if !mine {
            s.acquire_time = Some(now.clone());
            s.lease_transitions = Some(s.lease_transitions.unwrap_or(0) + 1);
        }
        s.holder_identity = Some(self.s.identity.clone());
        s.lease_duration_seconds = Some(secs);
        s.renew_time = Some(now);
        match self
            .api
            .replace(&self.s.name, &PostParams::default(), &next)
            .await
        {
            Ok(l) => {
                self.fence
                    .renewed(sent, l.metadata.resource_version.clone());
                self.seen = l.metadata.resource_version.map(|v| (v, Instant::now()));
                Ok(Try::Held)
            }
            Err(kube::Error::Api(s)) if s.code == 409 => Ok(Try::Taken),
            Err(e) => Err(e),
        }
    }
}
