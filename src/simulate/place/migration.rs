//! KubeVirt live migration: the limits a drain's evacuation runs under and how long one
//! migration takes.
//!
//! Limits (kubevirt/kubevirt `pkg/virt-config/virt-config.go`, the `*Default` constants
//! `ParallelMigrationsPerClusterDefault` 5, `ParallelOutboundMigrationsPerNodeDefault` 2,
//! `BandwidthPerMigrationDefault` "0Mi" (unlimited), `MigrationCompletionTimeoutPerGiB`
//! 150 s (800 s in older releases) and `MigrationProgressTimeout` 150 s, applied in
//! `pkg/virt-config/configuration.go` `defaultClusterConfig`; read at v1.7.4, the KubeVirt
//! Harvester v1.7 and v1.8 bundle). The evacuation controller starts no more than the cluster and
//! per-node limits allow (`pkg/virt-controller/watch/drain/evacuation/evacuation.go`
//! `sync`). Harvester copies its `kubevirt-migration` setting (v1.7+) into
//! `KubeVirt.spec.configuration.migrations` (harvester/harvester
//! `pkg/controller/master/setting/kubevirt_migration.go` `syncKubeVirtMigration`), so the
//! same JSON keys are read here.
//!
//! Time: pre-copy sends the guest memory, then what the guest dirtied meanwhile, round after
//! round; at a copy rate `r` and a dirty rate `w < r` the rounds sum to `m / (r - w)`. With
//! `w >= r` it never converges, and with post-copy off (the default) KubeVirt aborts it at
//! the completion timeout: `completionTimeoutPerGiB` times the data in decimal GB rounded
//! up (`pkg/virt-launcher/virtwrap/live-migration-source.go` `processInflightMigration`,
//! data size from `pkg/virt-launcher/virtwrap/manager.go` `getVMIMigrationDataSize`).
//! Each migration also waits for its target pod to start (`pod_start_s`). The copy rate is
//! `bandwidthPerMigration` when set, else one TCP flow (one bond member) shared by the
//! migrations leaving the node at once.

use serde::Serialize;

/// The migration settings KubeVirt runs under.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct MigrationConfig {
    pub parallel_per_cluster: u32,
    pub parallel_outbound_per_node: u32,
    /// Bytes/s; 0: unlimited.
    pub bandwidth_per_migration: f64,
    pub completion_timeout_per_gib: f64,
    pub progress_timeout_s: f64,
}

impl Default for MigrationConfig {
    /// KubeVirt's defaults (the same in Harvester's `kubevirt-migration` setting).
    fn default() -> Self {
        MigrationConfig {
            parallel_per_cluster: 5,
            parallel_outbound_per_node: 2,
            bandwidth_per_migration: 0.0,
            completion_timeout_per_gib: 150.0,
            progress_timeout_s: 150.0,
        }
    }
}

impl MigrationConfig {
    /// Harvester's `kubevirt-migration` setting over KubeVirt's defaults: the keys it sets
    /// win; a value that cannot be read keeps the default and is named in the notes.
    pub fn from_setting(json: &str, notes: &mut Vec<String>) -> MigrationConfig {
        let mut c = MigrationConfig::default();
        let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else {
            if !json.trim().is_empty() {
                notes.push(
                    "kubevirt-migration setting is not JSON: KubeVirt's defaults are used".into(),
                );
            }
            return c;
        };
        let count = |k: &str, d: u32, notes: &mut Vec<String>| match &v[k] {
            serde_json::Value::Null => d,
            x => {
                if let Some(n) = x.as_u64().filter(|n| (1..=10_000).contains(n)) {
                    u32::try_from(n).unwrap_or(d)
                } else {
                    notes.push(format!(
                        "kubevirt-migration {k}: `{x}` is not a count from 1; {d} used"
                    ));
                    d
                }
            }
        };
        c.parallel_per_cluster = count(
            "parallelMigrationsPerCluster",
            c.parallel_per_cluster,
            notes,
        );
        c.parallel_outbound_per_node = count(
            "parallelOutboundMigrationsPerNode",
            c.parallel_outbound_per_node,
            notes,
        );
        if !v["bandwidthPerMigration"].is_null() {
            match crate::live::bytes(&v["bandwidthPerMigration"]) {
                Some(b) => c.bandwidth_per_migration = b,
                None => notes.push(format!(
                    "kubevirt-migration bandwidthPerMigration: `{}` is not a quantity; unlimited used",
                    v["bandwidthPerMigration"]
                )),
            }
        }
        for (k, slot) in [
            ("completionTimeoutPerGiB", &mut c.completion_timeout_per_gib),
            ("progressTimeout", &mut c.progress_timeout_s),
        ] {
            if let Some(s) = v[k].as_f64().filter(|s| *s > 0.0 && s.is_finite()) {
                *slot = s;
            }
        }
        c
    }

    /// Migrations one draining node runs at once.
    pub fn slots(&self) -> usize {
        self.parallel_per_cluster
            .min(self.parallel_outbound_per_node)
            .max(1) as usize
    }

    /// The completion timeout for a guest of `bytes` memory: per GiB setting times the
    /// data in decimal GB, rounded up.
    pub fn completion_timeout_s(&self, bytes: f64) -> f64 {
        (bytes / 1e9).ceil().max(1.0) * self.completion_timeout_per_gib
    }
}

/// The network a node migrates over.
#[derive(Debug, Clone, Copy)]
pub struct MigrationLink {
    /// Payload bytes/s the node can send in all (every bond member).
    pub egress: f64,
    /// Payload bytes/s of one flow (one bond member).
    pub flow_cap: f64,
    /// Bytes/s each guest dirties while it is copied.
    pub dirty: f64,
    /// Seconds for the target pod to start before the copy.
    pub pod_start_s: f64,
}

/// One migration's fate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Outcome {
    /// Seconds from start to the VM running on the target.
    Done(f64),
    /// KubeVirt aborts it after this many seconds.
    Aborted(f64),
}

/// The copy rate of one migration when `concurrent` leave the node at once.
pub fn copy_rate(c: &MigrationConfig, link: &MigrationLink, concurrent: usize) -> f64 {
    let share = link.egress / concurrent.max(1) as f64;
    let mut r = share.min(link.flow_cap);
    if c.bandwidth_per_migration > 0.0 {
        r = r.min(c.bandwidth_per_migration);
    }
    r
}

/// One migration of a guest with `bytes` of memory at copy rate `rate`.
pub fn migrate(c: &MigrationConfig, link: &MigrationLink, bytes: f64, rate: f64) -> Outcome {
    let limit = c.completion_timeout_s(bytes);
    if rate <= link.dirty || rate <= 0.0 {
        // No round shrinks what is left: aborted when no progress is seen, at the latest
        // at the completion timeout.
        return Outcome::Aborted(link.pod_start_s + c.progress_timeout_s.min(limit));
    }
    let copy = bytes / (rate - link.dirty);
    if copy > limit {
        Outcome::Aborted(link.pod_start_s + limit)
    } else {
        Outcome::Done(link.pod_start_s + copy)
    }
}

/// Migrations leaving one node, in the order the evacuation starts them: each one's
/// outcome and start, and when the last ends. At most `slots()` run at once, each at the
/// rate its share of the node's egress gives while that many run.
pub fn evacuate(
    c: &MigrationConfig,
    link: &MigrationLink,
    bytes: &[f64],
) -> (Vec<(f64, Outcome)>, f64) {
    let slots = c.slots().min(bytes.len()).max(1);
    let rate = copy_rate(c, link, slots);
    let mut free_at = vec![0.0f64; slots];
    let mut out = Vec::with_capacity(bytes.len());
    let mut end = 0.0f64;
    for &b in bytes {
        let (i, start) = free_at
            .iter()
            .copied()
            .enumerate()
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .unwrap_or((0, 0.0));
        let o = migrate(c, link, b, rate);
        let d = match o {
            Outcome::Done(s) | Outcome::Aborted(s) => s,
        };
        if let Some(f) = free_at.get_mut(i) {
            *f = start + d;
        }
        end = end.max(start + d);
        out.push((start, o));
    }
    (out, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

    fn link(gbps: f64) -> MigrationLink {
        MigrationLink {
            egress: 2.0 * gbps * 1e9 / 8.0,
            flow_cap: gbps * 1e9 / 8.0,
            dirty: 0.0,
            pod_start_s: 15.0,
        }
    }

    #[test]
    fn kubevirts_defaults_from_its_source() {
        // pkg/virt-config/virt-config.go: ParallelMigrationsPerClusterDefault = 5,
        // ParallelOutboundMigrationsPerNodeDefault = 2, BandwidthPerMigrationDefault "0Mi",
        // MigrationCompletionTimeoutPerGiB = 150, MigrationProgressTimeout = 150.
        let c = MigrationConfig::default();
        assert_eq!(c.parallel_per_cluster, 5);
        assert_eq!(c.parallel_outbound_per_node, 2);
        assert!(c.bandwidth_per_migration.abs() < f64::EPSILON);
        assert!((c.completion_timeout_per_gib - 150.0).abs() < 1e-9);
        assert!((c.progress_timeout_s - 150.0).abs() < 1e-9);
        // One draining node: the per-node limit binds.
        assert_eq!(c.slots(), 2);
        // 8 GiB is 8.59 GB, rounded up to 9: 1350 s.
        assert!((c.completion_timeout_s(8.0 * GIB) - 1350.0).abs() < 1e-9);
    }

    #[test]
    fn four_guests_two_at_a_time_on_a_shared_link() {
        let c = MigrationConfig::default();
        let l = link(10.0);
        // Two at once on 2 x 10 Gb/s: each gets one member, 1.25 GB/s.
        let rate = copy_rate(&c, &l, 2);
        assert!((rate - 1.25e9).abs() < 1.0);
        let (each, end) = evacuate(&c, &l, &[10e9; 4]);
        let one = 15.0 + 10e9 / 1.25e9; // 23 s
        assert_eq!(each[0].1, Outcome::Done(one));
        assert!((each[2].0 - one).abs() < 1e-9, "the third waits for a slot");
        assert!((end - 2.0 * one).abs() < 1e-9);
    }

    #[test]
    fn a_guest_dirtying_faster_than_the_copy_is_aborted() {
        let c = MigrationConfig::default();
        let mut l = link(1.0);
        l.dirty = 200e6; // 200 MB/s against 125 MB/s
        assert_eq!(
            migrate(&c, &l, 4.0 * GIB, copy_rate(&c, &l, 1)),
            Outcome::Aborted(15.0 + 150.0)
        );
        // A 1 MB/s cap: 64 GiB cannot finish within 69 GB x 150 s.
        let capped = MigrationConfig {
            bandwidth_per_migration: 1e6,
            ..c
        };
        let l = link(10.0);
        assert!(matches!(
            migrate(&capped, &l, 64.0 * GIB, copy_rate(&capped, &l, 1)),
            Outcome::Aborted(_)
        ));
    }

    #[test]
    fn harvesters_setting_overrides_the_defaults() {
        let mut notes = Vec::new();
        let c = MigrationConfig::from_setting(
            r#"{"parallelMigrationsPerCluster":1,"bandwidthPerMigration":"64Mi","completionTimeoutPerGiB":800}"#,
            &mut notes,
        );
        assert_eq!(c.slots(), 1);
        assert!((c.bandwidth_per_migration - 64.0 * 1024.0 * 1024.0).abs() < 1.0);
        assert!((c.completion_timeout_per_gib - 800.0).abs() < 1e-9);
        assert!(notes.is_empty(), "{notes:?}");
        let c = MigrationConfig::from_setting(r#"{"parallelMigrationsPerCluster":-3}"#, &mut notes);
        assert_eq!(c.parallel_per_cluster, 5);
        assert_eq!(notes.len(), 1);
    }
}
