//! `simulations/<scenario>.yaml`: the fleet, the platform settings, the tenant clusters
//! (inline shapes or Rancher `Cluster` + `HarvesterConfig` files), teams with quotas and
//! lifetimes, failure rates and what to analyse.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub(crate) name: String,
    /// The fleet: node classes or a site. Not needed with `--from-cluster`, whose dump's
    /// Nodes are the fleet.
    #[serde(default)]
    pub fleet: Fleet,
    #[serde(default)]
    pub(crate) network: Network,
    #[serde(default)]
    pub platform: Platform,
    #[serde(default)]
    pub(crate) failures: Failures,
    /// Cluster shapes by name.
    #[serde(default)]
    pub(crate) shapes: BTreeMap<String, ShapeSpec>,
    /// Clusters running now.
    #[serde(default)]
    pub(crate) clusters: Vec<ClusterCount>,
    #[serde(default)]
    pub(crate) teams: Vec<Team>,
    #[serde(default)]
    pub analysis: Analysis,
    /// Which failures decide the headroom verdict beyond every node and every rack.
    #[serde(default)]
    pub(crate) headroom: HeadroomSpec,
    /// The rebuild what-if: this node fails holding this much replica data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rebuild: Option<RebuildWhatIf>,
    /// The delivery promise and what the scenario knows of the golden image.
    #[serde(default)]
    pub(crate) delivery: crate::simulate::delivery::DeliverySpec,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HeadroomSpec {
    /// 1: every node, rack and power domain (N+1); 2: also every pair of nodes (N+2).
    pub(crate) failures: u32,
    /// With `failures: 2`, also every rack together with one node outside it.
    pub(crate) node_and_rack: bool,
    /// Named failure sets (a switch, a PDU, a maintenance window), each deciding the verdict.
    pub(crate) sets: Vec<FailureSet>,
}

impl Default for HeadroomSpec {
    fn default() -> Self {
        HeadroomSpec {
            failures: 1,
            node_and_rack: false,
            sets: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureSet {
    pub(crate) name: String,
    /// Host names that fail together.
    #[serde(default)]
    pub(crate) nodes: Vec<String>,
    /// Racks that fail together (all their hosts).
    #[serde(default)]
    pub(crate) racks: Vec<String>,
    /// And any one more node on top (a maintenance window plus one failure).
    #[serde(default)]
    pub(crate) plus_any_node: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RebuildWhatIf {
    /// The host that fails; the first host of the largest class if unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    /// Actual replica data on it, TiB, in the volume sizes of the scenario.
    pub(crate) data_tib: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Fleet {
    /// Node classes; nodes of a class are spread round-robin over its racks.
    #[serde(default)]
    pub classes: Vec<NodeClass>,
    /// Use a site's inventory instead (or as well): `site: ../inventory/example`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) site: Option<String>,
    /// Rack -> power domain.
    #[serde(default)]
    pub(crate) racks: BTreeMap<String, RackSpec>,
    /// Whether each rack is a Longhorn zone (its nodes labelled
    /// `topology.kubernetes.io/zone` with the rack's name), as the reference design does.
    /// `false`: the nodes carry no zone label, so Longhorn sees one zone and spreads a
    /// volume's replicas over nodes only. A site's fleet takes its zones from each node's
    /// `zone` annotation instead, and a dump's from the Nodes' labels.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub(crate) racks_are_zones: bool,
}

impl Default for Fleet {
    fn default() -> Self {
        Fleet {
            classes: Vec::new(),
            site: None,
            racks: BTreeMap::new(),
            racks_are_zones: true,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeClass {
    pub(crate) name: String,
    pub count: u32,
    /// Logical CPUs (hardware threads): what the kubelet offers.
    pub(crate) threads: u32,
    pub(crate) memory_gib: f64,
    /// Longhorn data disks and their size in TB (decimal).
    pub(crate) disks: u32,
    pub(crate) disk_tb: f64,
    pub(crate) racks: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RackSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) power: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum BondMode {
    #[serde(rename = "802.3ad")]
    Lacp,
    #[serde(rename = "active-backup")]
    ActiveBackup,
}

/// The storage network of every node.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Network {
    pub(crate) links: u32,
    pub(crate) speed_gbps: f64,
    pub(crate) bond: BondMode,
    pub mtu: u32,
}

impl Default for Network {
    fn default() -> Self {
        Network {
            links: 2,
            speed_gbps: 25.0,
            bond: BondMode::Lacp,
            mtu: 9000,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Platform {
    /// Harvester overcommit-config, percent.
    pub(crate) overcommit_cpu_pct: f64,
    pub(crate) overcommit_memory_pct: f64,
    pub(crate) overcommit_storage_pct: f64,
    /// Logical CPUs and GiB per node kept for the system, Longhorn and the kubelet.
    pub(crate) reserved_cpu: f64,
    pub(crate) reserved_memory_gib: f64,
    /// Memory added to every VM's request (virt-launcher overhead), GiB.
    pub vm_memory_overhead_gib: f64,
    pub replicas: u32,
    /// Longhorn `concurrent-replica-rebuild-per-node-limit`; unset: Longhorn's default, 5
    /// (`types/setting.go`). The reference design recommends 2 and its scenarios say so; a
    /// live fleet's own setting always wins.
    pub(crate) rebuild_limit: u32,
    pub(crate) replenishment_wait_s: f64,
    pub(crate) detection_s: f64,
    pub(crate) minimal_available_pct: f64,
    /// MB/s of one rebuild stream.
    pub(crate) stream_mbps: f64,
    pub(crate) disk_read_mbps: f64,
    pub(crate) disk_write_mbps: f64,
    /// Foreground writes per volume, MB/s; replicated to every replica.
    pub(crate) write_mbps_per_volume: f64,
    /// Actual data as a share of a volume's size.
    pub(crate) data_fill: f64,
    /// Harvester version: picks `vm-force-reset-policy`'s default, and the Longhorn it
    /// bundles when `longhorn_version` is unset. A site's `harvester.version` replaces it
    /// when the scenario leaves it unset.
    pub harvester_version: String,
    /// Longhorn version (`v1.10`, `v1.11.1`): picks how Longhorn chooses a disk for a new
    /// replica (most available space up to v1.10, the balance score from v1.11). Unset: the
    /// one `harvester_version` bundles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) longhorn_version: Option<String>,
    /// How Longhorn picks the disk of a new replica, over the version's own rule: to ask
    /// the other rule's answer of the same fleet (`most-available`: Longhorn up to v1.10,
    /// `getDiskWithMostUsableStorage`; `balance-score`: v1.11 on,
    /// `getDiskWithMostBalanceScore`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) replica_disk_choice: Option<DiskRule>,
    /// During a burst of new replicas, after how many the scheduler sees each disk's
    /// `storageScheduled` recomputed (each node's Longhorn manager recomputes its disks'
    /// when a replica is created there): 1, the default, after every one (a prompt
    /// refresh); N after every N; 0 never within the burst. The balance score (v1.11) and
    /// the over-provisioning rule read it; a lagging refresh piles the burst up.
    pub(crate) scheduled_refresh_every: u32,
    /// Longhorn `replica-soft-anti-affinity`: two replicas of a volume may share a node
    /// when no other node can take one.
    pub(crate) replica_soft_anti_affinity: bool,
    /// Longhorn `replica-zone-soft-anti-affinity`: a replica may go to a zone that already
    /// holds one when no other zone can take it (`false`: never).
    pub(crate) replica_zone_soft_anti_affinity: bool,
    /// Longhorn `replica-disk-soft-anti-affinity`: with soft node anti-affinity, two
    /// replicas may share a disk.
    pub(crate) replica_disk_soft_anti_affinity: bool,
    /// Harvester's `vm-force-reset-policy`; the version's default when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vm_force_reset_policy: Option<ForceResetPolicy>,
    /// Pod recreated and volumes attached on the new host, seconds.
    pub(crate) pod_start_s: f64,
    /// Guest boot to service, seconds.
    pub(crate) guest_boot_s: f64,
    /// Host down to VM running elsewhere, seconds: a measured figure that replaces the
    /// derivation from `vm-force-reset-policy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) vm_restart_s: Option<f64>,
    /// Longhorn aborts a single replica rebuild after this long (Long gRPC Timeout).
    pub(crate) rebuild_abort_h: f64,
    /// Longhorn `offline-replica-rebuilding`: rebuild detached volumes too.
    pub(crate) offline_replica_rebuilding: bool,
    /// The kubelet's max-pods (Harvester: 200) and the pods every node runs besides VMs.
    pub max_pods: u32,
    pub system_pods_per_node: u32,
    /// Seconds one node takes in a rolling upgrade once its VMs are gone: RKE2 and the OS
    /// upgraded, the reboot (firmware POST included) and the node Ready again.
    pub node_upgrade_s: f64,
    /// MB/s of memory a running guest dirties while it live-migrates.
    pub migration_dirty_mbps: f64,
    /// etcd's `quota-backend-bytes` on the management nodes, GiB (etcd's default, 2 GiB,
    /// when unset). A dump's etcd metrics or etcd Pod flag win.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub etcd_quota_gib: Option<f64>,
}

/// Harvester's `vm-force-reset-policy` setting, as its JSON value spells it.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ForceResetPolicy {
    pub(crate) enable: bool,
    /// Seconds of Ready=Unknown before the node is tainted (v1.7+) or its VMs force-deleted.
    pub(crate) period: u64,
    /// v1.7+: further seconds before the out-of-service taint restarts the VMs elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vm_migration_timeout: Option<u64>,
}

impl Default for Platform {
    fn default() -> Self {
        Platform {
            overcommit_cpu_pct: 1600.0,
            overcommit_memory_pct: 150.0,
            overcommit_storage_pct: 200.0,
            reserved_cpu: 2.0,
            reserved_memory_gib: 8.0,
            vm_memory_overhead_gib: 0.25,
            replicas: 3,
            rebuild_limit: 5,
            replenishment_wait_s: 600.0,
            detection_s: 45.0,
            minimal_available_pct: 25.0,
            stream_mbps: 100.0,
            disk_read_mbps: 2000.0,
            disk_write_mbps: 2000.0,
            write_mbps_per_volume: 0.5,
            data_fill: 0.6,
            harvester_version: "v1.7".into(),
            longhorn_version: None,
            replica_disk_choice: None,
            scheduled_refresh_every: 1,
            replica_soft_anti_affinity: false,
            replica_zone_soft_anti_affinity: true,
            replica_disk_soft_anti_affinity: true,
            vm_force_reset_policy: None,
            pod_start_s: 15.0,
            guest_boot_s: 60.0,
            vm_restart_s: None,
            rebuild_abort_h: 24.0,
            offline_replica_rebuilding: false,
            max_pods: 200,
            system_pods_per_node: 40,
            node_upgrade_s: 900.0,
            migration_dirty_mbps: 50.0,
            etcd_quota_gib: None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Failures {
    pub node_permanent_per_year: f64,
    pub node_transient_per_year: f64,
    pub transient_minutes: f64,
    pub rack_events_per_year: f64,
    pub rack_outage_hours: f64,
    /// Share of nodes that do not come back after a rack event.
    pub rack_event_permanent_share: f64,
    /// Probability that a node failure takes a second node of its rack with it (Ford et
    /// al.: 37 % of failures come in bursts).
    pub burst_fraction: f64,
    /// Hours from a permanent node failure to a replacement node serving again: how long
    /// replicas stay missing when Longhorn cannot restore redundancy by itself.
    pub node_replacement_hours: f64,
}

impl Default for Failures {
    fn default() -> Self {
        Failures {
            node_permanent_per_year: 0.05,
            node_transient_per_year: 3.0,
            transient_minutes: 10.0,
            rack_events_per_year: 0.05,
            rack_outage_hours: 2.0,
            rack_event_permanent_share: 0.01,
            burst_fraction: 0.37,
            node_replacement_hours: 72.0,
        }
    }
}

/// A cluster shape: machine pools, or a Rancher file to import.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShapeSpec {
    #[serde(default)]
    pub(crate) pools: Vec<Pool>,
    /// A Rancher `Cluster` plus its `HarvesterConfig` machine configs (multi-document YAML),
    /// relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) import: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    pub name: String,
    pub count: u32,
    pub vcpu: f64,
    pub memory_gib: f64,
    /// One Longhorn volume per entry, GiB.
    pub disks_gib: Vec<f64>,
    /// Required anti-affinity between the VMs of this pool (control planes).
    #[serde(default)]
    pub anti_affinity: bool,
    /// `false`: the VMs are stopped (no requests, volumes detached; Longhorn does not
    /// rebuild detached volumes unless offline replica rebuilding is on).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub(crate) running: bool,
}

fn yes() -> bool {
    true
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if takes a reference
fn is_true(b: &bool) -> bool {
    *b
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClusterCount {
    pub(crate) shape: String,
    pub(crate) count: u32,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Team {
    /// The team's name: a label value (`rackplan.io/team` on its namespace and clusters).
    pub(crate) name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) vcpu_quota: Option<f64>,
    #[serde(default)]
    pub(crate) requests: Vec<TeamRequest>,
    /// `rackplan operator`: the Rancher principals granted access to each cluster delivered
    /// to the team (`github_team://1234`, `okta_group://platform`, `local://u-abcde`); the
    /// team's namespace is bound to the same groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) principals: Vec<String>,
    /// `rackplan operator`: the role template granted: `cluster-member` (default) or
    /// `cluster-owner`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) role: Option<String>,
    /// `rackplan operator`: the team's longest cluster lifetime counted from admission,
    /// extensions included (`30d`); default: the operator's `--max-lifetime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_lifetime: Option<String>,
    /// `rackplan render`: the namespace where the team makes its ClusterRequests
    /// (default `team-<name>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) namespace: Option<String>,
}

/// `from`/`until` as `YYYY-MM`; `until` is the first month it is gone.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamRequest {
    pub(crate) shape: String,
    pub(crate) count: u32,
    pub(crate) from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) until: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Analysis {
    /// Shape for "how many more clusters fit".
    pub(crate) max_clusters_shape: Option<String>,
    /// How the risk model is estimated: `conditional` (conditional Monte Carlo, readable at
    /// 3 replicas, the default) or `monte-carlo` (a plain simulation of `risk_trials` x
    /// `risk_years` years, a cross-check that only sees events of about 1 in 1,000 a year).
    pub(crate) risk_method: RiskMethod,
    /// Years per trial of the plain Monte Carlo (`risk_method: monte-carlo`).
    pub(crate) risk_years: u32,
    /// Draws per stratum of the conditional Monte Carlo, or trials of the plain one.
    pub risk_trials: u32,
    pub(crate) seed: u64,
    /// Correlated outage what-if: this many nodes fail at once.
    pub(crate) correlated_failed_nodes: u32,
    /// Scatter width for the copyset-style placement compared with Longhorn's.
    pub(crate) copyset_scatter_width: u32,
    /// Which node to fail for the rebuild model: the one with most replica data if unset.
    pub(crate) rebuild_node: Option<usize>,
    /// Thresholds of the warnings.
    pub(crate) warn: WarnLimits,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WarnLimits {
    /// Share of a link or a disk that rebuild traffic may take.
    pub(crate) rebuild_share: f64,
}

impl Default for WarnLimits {
    fn default() -> Self {
        WarnLimits { rebuild_share: 0.5 }
    }
}

/// How the risk model is estimated.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum RiskMethod {
    /// Conditional Monte Carlo on the failure that completes a loss (rare-event method).
    #[default]
    Conditional,
    /// A plain simulation of trials x years.
    MonteCarlo,
}

impl Default for Analysis {
    fn default() -> Self {
        Analysis {
            max_clusters_shape: None,
            risk_method: RiskMethod::Conditional,
            risk_years: 10,
            risk_trials: 10_000,
            seed: 1,
            correlated_failed_nodes: 3,
            copyset_scatter_width: 4,
            rebuild_node: None,
            warn: WarnLimits::default(),
        }
    }
}

/// `2027-03` -> months since year 0.
pub(crate) fn month_index(m: &str) -> Option<i32> {
    let (y, mo) = m.split_once('-')?;
    let y: i32 = y.parse().ok()?;
    let mo: i32 = mo.parse().ok()?;
    ((1..=12).contains(&mo) && (1..=9999).contains(&y)).then_some(y * 12 + mo - 1)
}

pub(crate) fn month_name(i: i32) -> String {
    format!("{:04}-{:02}", i.div_euclid(12), i.rem_euclid(12) + 1)
}

/// `v1.7`, `1.6.1`, `v1.8.0-rc1` -> (1, 7).
pub(crate) fn version(v: &str) -> Option<(u32, u32)> {
    let v = v.strip_prefix('v').unwrap_or(v);
    let mut it = v.split(['.', '-']);
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The version's default policy.
pub(crate) fn default_policy(v: (u32, u32)) -> ForceResetPolicy {
    if v >= (1, 7) {
        ForceResetPolicy {
            enable: true,
            period: 15,
            vm_migration_timeout: Some(180),
        }
    } else {
        ForceResetPolicy {
            enable: true,
            period: 300,
            vm_migration_timeout: None,
        }
    }
}

/// The Longhorn a Harvester minor version bundles (harvester `deploy/charts/harvester/
/// Chart.yaml` at each release tag): v1.3 ships Longhorn v1.6, and each Harvester minor
/// after it the next Longhorn minor (v1.6 -> v1.9, v1.7 -> v1.10, v1.8 -> v1.11).
pub(crate) fn bundled_longhorn(harvester: (u32, u32)) -> (u32, u32) {
    match harvester {
        (1, m) if m >= 3 => (1, m + 3),
        (1, _) => (1, 6),
        (major, _) => (major, 0),
    }
}

/// The Longhorn version the analyses model, and where it comes from (`platform.longhorn_version`,
/// or the Harvester version's bundled one).
/// The disk rule a scenario may ask for (`platform.replica_disk_choice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DiskRule {
    MostAvailable,
    BalanceScore,
}

pub(crate) fn longhorn_of(p: &Platform) -> ((u32, u32), String) {
    if let Some(v) = p.longhorn_version.as_deref().and_then(version) {
        return (v, format!("Longhorn v{}.{}", v.0, v.1));
    }
    let h = version(&p.harvester_version).unwrap_or((1, 7));
    let l = bundled_longhorn(h);
    (
        l,
        format!(
            "Longhorn v{}.{}, the one Harvester {} bundles",
            l.0, l.1, p.harvester_version
        ),
    )
}
