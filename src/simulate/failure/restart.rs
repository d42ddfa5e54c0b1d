//! How long a VM on a failed host stays down before it runs elsewhere, from Harvester's
//! `vm-force-reset-policy` (or a measured figure that replaces the derivation).
//!
//! v1.7 and later: the node is tainted `kubevirt.io/drain` after `period` seconds of
//! Ready=Unknown, and after a further `vmMigrationTimeout` seconds the out-of-service taint
//! force-deletes its pods, so the VMs restart elsewhere. Up to v1.6 the virt-launcher pods
//! were force-deleted once the node had been not Ready for `period` seconds. Defaults: v1.7+
//! `{"enable":true,"period":15,"vmMigrationTimeout":180}`, v1.3-v1.6 `{"enable":true,
//! "period":300}`. With `enable: false` nothing restarts the VMs: they wait for their host.

use serde::Serialize;

use crate::simulate::scenario::{ForceResetPolicy, Platform, default_policy, version};

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Restart {
    /// Seconds from host failure to the VM running elsewhere; `None`: VMs are not restarted
    /// elsewhere and stay down until their host is back.
    pub(crate) seconds: Option<f64>,
    pub(crate) policy: ForceResetPolicy,
    /// How the figure was obtained, in words.
    pub derivation: String,
}

pub(crate) fn derive(p: &Platform) -> Restart {
    let ver = version(&p.harvester_version).unwrap_or((1, 7));
    let (policy, which) = match p.vm_force_reset_policy {
        Some(pol) => (pol, "vm-force-reset-policy as set"),
        None => (
            default_policy(ver),
            "the version's default vm-force-reset-policy",
        ),
    };
    if let Some(s) = p.vm_restart_s {
        return Restart {
            seconds: Some(s),
            policy,
            derivation: format!("{s:.0} s as measured (platform.vm_restart_s)"),
        };
    }
    if !policy.enable {
        return Restart {
            seconds: None,
            policy,
            derivation: "vm-force-reset-policy is disabled: VMs of a failed host are not restarted elsewhere and stay down until it returns".into(),
        };
    }
    let migration = if ver >= (1, 7) {
        policy
            .vm_migration_timeout
            .map_or(180, |t| if t == 0 { 180 } else { t })
    } else {
        0
    };
    let total =
        p.detection_s + policy.period as f64 + migration as f64 + p.pod_start_s + p.guest_boot_s;
    let mig = if ver >= (1, 7) {
        format!(" + vmMigrationTimeout {migration} s")
    } else {
        String::new()
    };
    Restart {
        seconds: Some(total),
        policy,
        derivation: format!(
            "{total:.0} s = node not ready {:.0} s + period {} s{mig} + pod start and attach {:.0} s + guest boot {:.0} s (Harvester {}, {which})",
            p.detection_s, policy.period, p.pod_start_s, p.guest_boot_s, p.harvester_version
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_period_depends_on_the_version() {
        let mut p = Platform {
            harvester_version: "v1.6.1".into(),
            ..Platform::default()
        };
        let old = derive(&p);
        p.harvester_version = "v1.7.0".into();
        let new = derive(&p);
        // 45 + 300 + 15 + 60 and 45 + 15 + 180 + 15 + 60.
        assert_eq!(old.seconds, Some(420.0));
        assert_eq!(new.seconds, Some(315.0));
        p.vm_force_reset_policy = Some(ForceResetPolicy {
            enable: false,
            period: 15,
            vm_migration_timeout: None,
        });
        assert_eq!(derive(&p).seconds, None);
        p.vm_restart_s = Some(90.0);
        assert_eq!(derive(&p).seconds, Some(90.0), "a measured figure wins");
        assert_eq!(version("1.8"), Some((1, 8)));
        assert_eq!(version("x"), None);
    }
}
