//! Harvester's install configuration (`config.yaml`), as the installer's `HarvesterConfig`
//! Go struct reads it.
//!
//! The installer silently ignores keys it does not know, so a misspelt key is a silent bug.
//! This model lists every key the installer reads (v1.3 to v1.8), rejects any other, and
//! accepts the alias spellings the installer's fuzzy key mapper accepts where the official
//! examples use them (`sysctl`, `poweroff`, `hwAddr`/`hw_addr`, camelCase tags). We always
//! emit one spelling: snake_case, except `hwAddr` and the camelCase-only subtrees, as the
//! official documentation does.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};

/// A `map[string]string` value: the installer stringifies YAML scalars (`miimon: 100`).
fn string_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Scalar {
        S(String),
        I(i64),
        F(f64),
        B(bool),
    }
    let raw: Option<BTreeMap<String, Scalar>> = Option::deserialize(d)?;
    Ok(raw.map(|m| {
        m.into_iter()
            .map(|(k, v)| {
                let s = match v {
                    Scalar::S(s) => s,
                    Scalar::I(i) => i.to_string(),
                    Scalar::F(f) => f.to_string(),
                    Scalar::B(b) => b.to_string(),
                };
                (k, s)
            })
            .collect()
    }))
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HarvesterConfig {
    #[serde(
        alias = "schemeVersion",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub scheme_version: Option<u32>,
    #[serde(alias = "serverUrl", skip_serializing_if = "Option::is_none", default)]
    pub server_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) token: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) sans: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub os: Option<Os>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub install: Option<Install>,
    #[serde(
        alias = "systemSettings",
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_map"
    )]
    pub(crate) system_settings: Option<BTreeMap<String, String>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Os {
    #[serde(
        alias = "sshAuthorizedKeys",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) ssh_authorized_keys: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub password: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub hostname: Option<String>,
    #[serde(alias = "writeFiles", skip_serializing_if = "Option::is_none", default)]
    pub(crate) write_files: Option<Vec<WriteFile>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) modules: Option<Vec<String>>,
    #[serde(
        alias = "sysctl",
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_map"
    )]
    pub sysctls: Option<BTreeMap<String, String>>,
    #[serde(alias = "ntpServers", skip_serializing_if = "Option::is_none", default)]
    pub(crate) ntp_servers: Option<Vec<String>>,
    #[serde(
        alias = "dnsNameservers",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) dns_nameservers: Option<Vec<String>>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_map"
    )]
    pub(crate) environment: Option<BTreeMap<String, String>>,
    #[serde(
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_map"
    )]
    pub(crate) labels: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) sshd: Option<Sshd>,
    #[serde(
        alias = "persistentStatePaths",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) persistent_state_paths: Option<Vec<String>>,
    #[serde(
        alias = "afterInstallChrootCommands",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) after_install_chroot_commands: Option<Vec<String>>,
    /// v1.4+; shape differs by version, so it is kept as data.
    #[serde(
        rename = "externalStorageConfig",
        alias = "external_storage_config",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) external_storage_config: Option<serde_json::Value>,
    #[serde(
        rename = "additionalKernelArguments",
        alias = "additional_kernel_arguments",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) additional_kernel_arguments: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) encoding: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) owner: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) permissions: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sshd {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) sftp: Option<bool>,
    #[serde(
        alias = "disablePasswordAuth",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) disable_password_auth: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Install {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) automatic: Option<bool>,
    #[serde(alias = "skipcheck", skip_serializing_if = "Option::is_none", default)]
    pub(crate) skipchecks: Option<bool>,
    #[serde(
        alias = "managementInterface",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub management_interface: Option<Network>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub vip: Option<String>,
    #[serde(alias = "vipMode", skip_serializing_if = "Option::is_none", default)]
    pub(crate) vip_mode: Option<String>,
    #[serde(alias = "vipHwAddr", skip_serializing_if = "Option::is_none", default)]
    pub(crate) vip_hw_addr: Option<String>,
    #[serde(
        alias = "clusterPodCidr",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) cluster_pod_cidr: Option<String>,
    #[serde(
        alias = "clusterServiceCidr",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) cluster_service_cidr: Option<String>,
    #[serde(alias = "clusterDns", skip_serializing_if = "Option::is_none", default)]
    pub(crate) cluster_dns: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub device: Option<String>,
    #[serde(alias = "dataDisk", skip_serializing_if = "Option::is_none", default)]
    pub data_disk: Option<String>,
    #[serde(
        alias = "persistentPartitionSize",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) persistent_partition_size: Option<String>,
    #[serde(alias = "isoUrl", skip_serializing_if = "Option::is_none", default)]
    pub(crate) iso_url: Option<String>,
    #[serde(alias = "configUrl", skip_serializing_if = "Option::is_none", default)]
    pub(crate) config_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) tty: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub role: Option<String>,
    #[serde(alias = "forceEfi", skip_serializing_if = "Option::is_none", default)]
    pub(crate) force_efi: Option<bool>,
    #[serde(alias = "forceMbr", skip_serializing_if = "Option::is_none", default)]
    pub(crate) force_mbr: Option<bool>,
    #[serde(alias = "noFormat", skip_serializing_if = "Option::is_none", default)]
    pub(crate) no_format: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) silent: Option<bool>,
    #[serde(
        alias = "power_off",
        alias = "powerOff",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub poweroff: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) debug: Option<bool>,
    #[serde(
        alias = "withNetImages",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) with_net_images: Option<bool>,
    #[serde(
        alias = "wipeAllDisks",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) wipe_all_disks: Option<bool>,
    #[serde(
        alias = "wipeDisksList",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) wipe_disks_list: Option<Vec<String>>,
    #[serde(
        alias = "rawdiskimagepath",
        alias = "rawDiskImagePath",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) raw_disk_image_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub webhooks: Option<Vec<Webhook>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) addons: Option<BTreeMap<String, Addon>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) harvester: Option<HarvesterChartValues>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Network {
    #[serde(default)]
    pub interfaces: Vec<NetworkInterface>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ip: Option<String>,
    #[serde(alias = "subnetMask", skip_serializing_if = "Option::is_none", default)]
    pub(crate) subnet_mask: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) gateway: Option<String>,
    #[serde(
        alias = "bondOptions",
        skip_serializing_if = "Option::is_none",
        default,
        deserialize_with = "string_map"
    )]
    pub bond_options: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub mtu: Option<u32>,
    #[serde(alias = "vlanId", skip_serializing_if = "Option::is_none", default)]
    pub(crate) vlan_id: Option<u32>,
    /// Present in the official examples, but the installer ignores it (`json:"-"`); we read
    /// it and never write it.
    #[serde(skip_serializing, default)]
    pub default_route: Option<bool>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NetworkInterface {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) name: Option<String>,
    #[serde(
        rename = "hwAddr",
        alias = "hw_addr",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) hw_addr: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Webhook {
    pub event: String,
    pub method: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub headers: Option<BTreeMap<String, Vec<String>>>,
    pub url: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) payload: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) insecure: Option<bool>,
    #[serde(
        rename = "basicAuth",
        alias = "basic_auth",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) basic_auth: Option<BasicAuth>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BasicAuth {
    pub(crate) user: String,
    pub(crate) password: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Addon {
    #[serde(default)]
    pub(crate) enabled: bool,
    #[serde(alias = "valuesContent", default)]
    pub(crate) values_content: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HarvesterChartValues {
    #[serde(
        alias = "storageClass",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) storage_class: Option<StorageClassValues>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub(crate) longhorn: Option<LonghornValues>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StorageClassValues {
    #[serde(
        alias = "replicaCount",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) replica_count: Option<u32>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LonghornValues {
    #[serde(
        alias = "defaultSettings",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) default_settings: Option<LonghornDefaultSettings>,
}

/// These keys are camelCase only: the installer's snake_case mapping would turn `CPU` into
/// `c_p_u`, so the docs write them in camelCase and so do we.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LonghornDefaultSettings {
    #[serde(
        rename = "guaranteedInstanceManagerCPU",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) guaranteed_instance_manager_cpu: Option<u32>,
    #[serde(
        rename = "guaranteedEngineManagerCPU",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) guaranteed_engine_manager_cpu: Option<u32>,
    #[serde(
        rename = "guaranteedReplicaManagerCPU",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) guaranteed_replica_manager_cpu: Option<u32>,
    #[serde(
        rename = "storageReservedPercentageForDefaultDisk",
        skip_serializing_if = "Option::is_none",
        default
    )]
    pub(crate) storage_reserved_percentage_for_default_disk: Option<u32>,
}
