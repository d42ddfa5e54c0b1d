//! The fleet after `n` more clusters of one shape, as every limit and every piece of
//! advice reads it: object counts and etcd's database, the steady writes and the storms,
//! and what the management nodes serve.

use super::figures::{CAL_DB_PER_BYTE, COMPACTION_S, ETCD_SUGGESTED_MAX};
use super::fleet::{Counts, Snapshot, requests};
use super::model::EtcdSize;
use super::objects::Objects;
use super::serve::{Capacity, capacity};
use super::writes::{self, Storm, steady, steady_bytes};
use crate::simulate::scenario::Pool;
use crate::simulate::study::Study;

/// The fleet with `n` more clusters of one shape, as every limit needs it.
pub(crate) struct State {
    pub(crate) counts: Counts,
    pub(crate) objects_total: f64,
    pub(crate) db_peak: f64,
    pub(crate) db: EtcdSize,
    pub(crate) largest: (String, f64),
    pub(crate) steady: f64,
    pub(crate) storms: Vec<Storm>,
    pub(crate) peak: (String, f64),
    pub(crate) capacity: Capacity,
}

/// Everything the states are computed from.
pub(crate) struct Model<'a> {
    pub(crate) l: &'a Study,
    pub(crate) snap: Snapshot,
    pub(crate) objects: Objects,
    pub(crate) quota: (f64, String),
    pub(crate) im_cpu: f64,
    /// Live migrations at once and seconds each (the rolling upgrade).
    pub(crate) migrations: (f64, f64),
    /// Clusters delivered at once (the busiest month's requests, at least one).
    pub(crate) burst: f64,
}

impl Model<'_> {
    /// The fleet after `n` more clusters of `pools` (named `shape`).
    pub(crate) fn state(&self, shape: &str, pools: &[Pool], n: f64) -> State {
        let p = &self.l.scenario.platform;
        let d = Counts::of_shape(pools, p);
        let counts = self.snap.now.plus(&d, n);
        let replicas = f64::from(p.replicas);
        let (node, rack) = self.snap.losses_at(&d, n);
        let limit = f64::from(p.rebuild_limit);
        let mut storms = vec![
            writes::loss("node loss", &node, limit, &self.objects),
            writes::loss("rack loss", &rack, limit, &self.objects),
            writes::upgrade(
                counts.running,
                self.migrations.0,
                self.migrations.1,
                self.snap.volumes_per_vm,
                &self.objects,
            ),
            writes::delivery(self.burst, shape, &d, replicas, &self.objects),
        ];
        // A storm with nothing to do (no VM to restart, no shape to deliver) is left out.
        storms.retain(|s| s.writes > 0.0);
        let written = p.write_mbps_per_volume > 0.0;
        let steady_rate: f64 = steady(&counts, written).iter().map(|x| x.per_s).sum();
        let kinds = self.objects.counts_at(&d, n);
        let stored = self.objects.stored(&kinds);
        let live = stored * CAL_DB_PER_BYTE;
        let steady_history =
            steady_bytes(&counts, &self.objects, written) * COMPACTION_S * CAL_DB_PER_BYTE;
        let storm_history =
            storms.iter().map(|s| s.history_bytes).fold(0.0, f64::max) * CAL_DB_PER_BYTE;
        let db_peak = live + steady_history + storm_history;
        let worst = storms
            .iter()
            .max_by(|a, b| a.peak_per_s.total_cmp(&b.peak_per_s))
            .map_or(("no storm".to_string(), 0.0), |s| {
                (s.name.clone(), s.peak_per_s)
            });
        let managers = self.snap.managers_at(requests(pools, p), d.replicas, n);
        State {
            counts,
            objects_total: kinds.iter().sum(),
            db_peak,
            db: EtcdSize {
                live_bytes: live,
                steady_history_bytes: steady_history,
                storm_history_bytes: storm_history,
                peak_bytes: db_peak,
                quota_bytes: self.quota.0,
                quota_from: self.quota.1.clone(),
                suggested_max_bytes: ETCD_SUGGESTED_MAX,
            },
            largest: self.objects.largest(&kinds),
            steady: steady_rate,
            peak: (worst.0, steady_rate + worst.1),
            storms,
            capacity: capacity(
                &managers,
                &self.snap.managers_from,
                self.im_cpu,
                (p.reserved_cpu, p.reserved_memory_gib),
            ),
        }
    }
}
