//! The platform a dump's settings describe: Harvester's and Longhorn's settings read from
//! the dump win over the scenario's, and every input is listed with where it came from.

use crate::live::LiveState;
use crate::simulate::scenario::Platform;

/// One input of an analysis, its value and where it came from, for the assumptions table.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Assumption {
    pub input: String,
    pub value: String,
    /// `dump`, `scenario` or `default`.
    pub source: &'static str,
    /// Set when the dump and the scenario disagree, or the value was read with care.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Why a setting of the dump is not used: its value does not read as the setting's type.
/// The review names it beside the value used instead.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum SettingError {
    #[error("`{0}` is not a number")]
    NotANumber(String),
    #[error("`{value}` is not a whole number from {lo} to {hi}")]
    OutOfRange { value: String, lo: u32, hi: u32 },
    #[error("`{0}` is not true or false")]
    NotABool(String),
    #[error("`{raw}`: {why}")]
    NotJson { raw: String, why: String },
    #[error("`{0}` has no cpu and memory percentages")]
    NoPercentages(String),
}

/// A Longhorn setting's value for the v1 data engine: plain (`"3"`) or, from Longhorn 1.10,
/// per engine (`{"v1":"3","v2":"3"}`).
fn engine_value(raw: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(m)) => m
            .get("v1")
            .and_then(|v| {
                v.as_str()
                    .map(str::to_string)
                    .or_else(|| Some(v.to_string()))
            })
            .unwrap_or_default(),
        _ => raw.trim().to_string(),
    }
}

/// The platform the analyses run with on a dump: each setting the dump holds replaces the
/// scenario's (or the default's) value; the table says which won and where they disagreed.
#[allow(clippy::too_many_lines)] // one block per setting, in the order the table lists them
pub(crate) fn platform(
    state: &LiveState,
    given: &Platform,
    scenario_given: bool,
) -> (Platform, Vec<Assumption>) {
    let d = Platform::default();
    let mut p = given.clone();
    let mut out = Vec::new();
    let lh = |k: &str| state.settings.longhorn.get(k).map(|v| engine_value(v));
    let hv = |k: &str| state.settings.harvester.get(k).cloned();
    // Where a value not in the dump came from.
    let origin = |differs: bool| {
        if scenario_given && differs {
            "scenario"
        } else {
            "default"
        }
    };
    let mut record = |input: &str,
                      from_dump: Option<Result<String, SettingError>>,
                      scenario_value: String,
                      differs_from_default: bool,
                      used: String| {
        match from_dump {
            Some(Ok(dump)) => {
                let note = (scenario_given && differs_from_default && scenario_value != dump)
                    .then(|| format!("the scenario says {scenario_value}; the dump wins"));
                out.push(Assumption {
                    input: input.into(),
                    value: dump,
                    source: "dump",
                    note,
                });
            }
            Some(Err(why)) => out.push(Assumption {
                input: input.into(),
                value: used,
                source: origin(differs_from_default),
                note: Some(format!("the dump's value is unreadable ({why}); not used")),
            }),
            None => out.push(Assumption {
                input: input.into(),
                value: used,
                source: origin(differs_from_default),
                note: None,
            }),
        }
    };
    let num = |s: &str| -> Result<f64, SettingError> {
        s.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x >= 0.0)
            .ok_or_else(|| SettingError::NotANumber(s.to_string()))
    };

    // Harvester overcommit-config: {"cpu":1600,"memory":150,"storage":200}.
    let oc = hv("overcommit-config").map(|raw| {
        serde_json::from_str::<serde_json::Value>(&raw)
            .map_err(|e| SettingError::NotJson {
                raw: raw.clone(),
                why: e.to_string(),
            })
            .and_then(|v| {
                let f = |k: &str| v[k].as_f64().filter(|x| *x > 0.0);
                match (f("cpu"), f("memory")) {
                    (Some(c), Some(m)) => Ok((c, m, f("storage"))),
                    _ => Err(SettingError::NoPercentages(raw.clone())),
                }
            })
    });
    let show = |x: f64| format!("{x}%");
    if let Some(Ok((c, m, _))) = &oc {
        p.overcommit_cpu_pct = *c;
        p.overcommit_memory_pct = *m;
    }
    record(
        "overcommit-config cpu (harvesterhci.io Setting)",
        oc.clone().map(|r| r.map(|(c, _, _)| show(c))),
        show(given.overcommit_cpu_pct),
        (given.overcommit_cpu_pct - d.overcommit_cpu_pct).abs() > 1e-9,
        show(p.overcommit_cpu_pct),
    );
    record(
        "overcommit-config memory (harvesterhci.io Setting)",
        oc.map(|r| r.map(|(_, m, _)| show(m))),
        show(given.overcommit_memory_pct),
        (given.overcommit_memory_pct - d.overcommit_memory_pct).abs() > 1e-9,
        show(p.overcommit_memory_pct),
    );
    // Longhorn's own over-provisioning is what scheduling uses (Harvester pushes its
    // storage percentage into it).
    let over = lh("storage-over-provisioning-percentage").map(|v| num(&v));
    if let Some(Ok(x)) = &over {
        p.overcommit_storage_pct = *x;
    }
    record(
        "storage-over-provisioning-percentage (longhorn.io Setting)",
        over.map(|r| r.map(show)),
        show(given.overcommit_storage_pct),
        (given.overcommit_storage_pct - d.overcommit_storage_pct).abs() > 1e-9,
        show(p.overcommit_storage_pct),
    );
    let min = lh("storage-minimal-available-percentage").map(|v| num(&v));
    if let Some(Ok(x)) = &min {
        p.minimal_available_pct = *x;
    }
    record(
        "storage-minimal-available-percentage (longhorn.io Setting)",
        min.map(|r| r.map(show)),
        show(given.minimal_available_pct),
        (given.minimal_available_pct - d.minimal_available_pct).abs() > 1e-9,
        show(p.minimal_available_pct),
    );
    let int = |s: &str, lo: u32, hi: u32| -> Result<u32, SettingError> {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|x| (lo..=hi).contains(x))
            .ok_or_else(|| SettingError::OutOfRange {
                value: s.to_string(),
                lo,
                hi,
            })
    };
    let rep = lh("default-replica-count").map(|v| int(&v, 1, 20));
    if let Some(Ok(x)) = &rep {
        p.replicas = *x;
    }
    record(
        "default-replica-count (longhorn.io Setting; each volume keeps its own count)",
        rep.map(|r| r.map(|x| x.to_string())),
        given.replicas.to_string(),
        given.replicas != d.replicas,
        p.replicas.to_string(),
    );
    let lim = lh("concurrent-replica-rebuild-per-node-limit").map(|v| int(&v, 0, 1000));
    if let Some(Ok(x)) = &lim {
        p.rebuild_limit = *x;
    }
    record(
        "concurrent-replica-rebuild-per-node-limit (longhorn.io Setting)",
        lim.map(|r| r.map(|x| x.to_string())),
        given.rebuild_limit.to_string(),
        given.rebuild_limit != d.rebuild_limit,
        p.rebuild_limit.to_string(),
    );
    let wait = lh("replica-replenishment-wait-interval").map(|v| num(&v));
    if let Some(Ok(x)) = &wait {
        p.replenishment_wait_s = *x;
    }
    let secs = |x: f64| format!("{x} s");
    record(
        "replica-replenishment-wait-interval (longhorn.io Setting)",
        wait.map(|r| r.map(secs)),
        secs(given.replenishment_wait_s),
        (given.replenishment_wait_s - d.replenishment_wait_s).abs() > 1e-9,
        secs(p.replenishment_wait_s),
    );
    let offline = lh("offline-replica-rebuilding").map(|v| match v.as_str() {
        "true" | "enabled" => Ok(true),
        "false" | "disabled" | "" => Ok(false),
        other => Err(SettingError::NotABool(other.to_string())),
    });
    if let Some(Ok(x)) = &offline {
        p.offline_replica_rebuilding = *x;
    }
    record(
        "offline-replica-rebuilding (longhorn.io Setting)",
        offline.map(|r| r.map(|x| x.to_string())),
        given.offline_replica_rebuilding.to_string(),
        given.offline_replica_rebuilding != d.offline_replica_rebuilding,
        p.offline_replica_rebuilding.to_string(),
    );
    if let Some(v) =
        hv("server-version").filter(|v| crate::simulate::scenario::version(v).is_some())
    {
        p.harvester_version = v;
    }
    let policy = hv("vm-force-reset-policy").map(|raw| {
        serde_json::from_str::<crate::simulate::scenario::ForceResetPolicy>(&raw).map_err(|e| {
            SettingError::NotJson {
                raw: raw.clone(),
                why: e.to_string(),
            }
        })
    });
    if let Some(Ok(x)) = &policy {
        p.vm_force_reset_policy = Some(*x);
    }
    let describe = |x: Option<crate::simulate::scenario::ForceResetPolicy>, version: &str| match x {
        Some(x) => format!(
            "enable {}, period {} s{}",
            x.enable,
            x.period,
            x.vm_migration_timeout
                .map_or_else(String::new, |t| format!(", vmMigrationTimeout {t} s"))
        ),
        None => format!("the default of Harvester {version}"),
    };
    record(
        "vm-force-reset-policy (harvesterhci.io Setting)",
        policy.map(|r| r.map(|x| describe(Some(x), &p.harvester_version))),
        describe(given.vm_force_reset_policy, &given.harvester_version),
        given.vm_force_reset_policy.is_some(),
        describe(p.vm_force_reset_policy, &p.harvester_version),
    );
    // Longhorn's scheduling settings: the anti-affinity tiers and, through the version,
    // how a disk is chosen among the candidates.
    let boolean = |v: String| match v.trim() {
        "true" => Ok(true),
        "false" => Ok(false),
        other => Err(SettingError::NotABool(other.to_string())),
    };
    for (name, given_v, default_v) in [
        (
            "replica-zone-soft-anti-affinity",
            given.replica_zone_soft_anti_affinity,
            d.replica_zone_soft_anti_affinity,
        ),
        (
            "replica-soft-anti-affinity",
            given.replica_soft_anti_affinity,
            d.replica_soft_anti_affinity,
        ),
        (
            "replica-disk-soft-anti-affinity",
            given.replica_disk_soft_anti_affinity,
            d.replica_disk_soft_anti_affinity,
        ),
    ] {
        let from = lh(name).map(boolean);
        let used = match &from {
            Some(Ok(x)) => *x,
            _ => given_v,
        };
        match name {
            "replica-zone-soft-anti-affinity" => p.replica_zone_soft_anti_affinity = used,
            "replica-soft-anti-affinity" => p.replica_soft_anti_affinity = used,
            _ => p.replica_disk_soft_anti_affinity = used,
        }
        record(
            &format!("{name} (longhorn.io Setting)"),
            from.map(|r| r.map(|x| x.to_string())),
            given_v.to_string(),
            given_v != default_v,
            used.to_string(),
        );
    }
    if let Some(v) = lh("current-longhorn-version")
        .filter(|v| crate::simulate::scenario::version(v).is_some_and(|x| x >= (1, 0)))
    {
        p.longhorn_version = Some(v);
    }
    // What no dump holds.
    for (input, value, differs) in [
        (
            "data written per volume (when status.actualSize is missing)",
            format!("{:.0}% of its size", given.data_fill * 100.0),
            (given.data_fill - d.data_fill).abs() > 1e-9,
        ),
        (
            "rebuild stream rate",
            format!("{} MB/s", given.stream_mbps),
            (given.stream_mbps - d.stream_mbps).abs() > 1e-9,
        ),
        (
            "foreground writes per attached volume",
            format!("{} MB/s", given.write_mbps_per_volume),
            (given.write_mbps_per_volume - d.write_mbps_per_volume).abs() > 1e-9,
        ),
        (
            "virt-launcher memory overhead added to each VM's request",
            format!("{} GiB", given.vm_memory_overhead_gib),
            (given.vm_memory_overhead_gib - d.vm_memory_overhead_gib).abs() > 1e-9,
        ),
    ] {
        out.push(Assumption {
            input: input.into(),
            value,
            source: origin(differs),
            note: None,
        });
    }
    (p, out)
}
