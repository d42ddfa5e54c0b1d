//! The installer's own validation (harvester-installer `commonCheck` + `ConfigValidator`),
//! run on every node config before anything is written. Messages quote the installer's
//! wording where it has one, so a failure here reads like the failure the node would show.

use std::net::Ipv4Addr;

use super::installer::HarvesterConfig;
use crate::site::types::is_dns_label;

fn is_ipv4(s: &str) -> bool {
    s.parse::<Ipv4Addr>().is_ok()
}

/// RFC 1123 subdomain, as Kubernetes' `IsDNS1123Subdomain`.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(|l| is_dns_label(l, 63))
}

fn is_qualified_label_name(k: &str) -> bool {
    let (prefix, name) = match k.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    name_ok && prefix.is_none_or(is_dns_subdomain)
}

fn is_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric()))
}

/// A `server_url` the installer would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ServerUrlError {
    #[error("server_url {0}: a path is not allowed")]
    Path(String),
    #[error("server_url {0}: only port 443 is allowed")]
    Port(String),
    #[error("server_url {0}: host must be an IPv4 address or a DNS name")]
    Host(String),
}

/// `server_url` rules of `getFormattedServerURL`: https, host only, port 443.
fn check_server_url(url: &str) -> Result<(), ServerUrlError> {
    let rest = url.strip_prefix("https://").unwrap_or(url);
    if rest.contains('/') {
        return Err(ServerUrlError::Path(url.to_string()));
    }
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    if let Some(p) = port
        && p != "443"
    {
        return Err(ServerUrlError::Port(url.to_string()));
    }
    if !(is_ipv4(host) || is_dns_subdomain(host)) {
        return Err(ServerUrlError::Host(url.to_string()));
    }
    Ok(())
}

/// A path the installer can open as a block device: absolute, under /dev/, no `..`.
fn is_dev_path(p: &str) -> bool {
    p.starts_with("/dev/")
        && p.len() > 5
        && !p.split('/').any(|c| c == "..")
        && !p.chars().any(char::is_whitespace)
}

/// All rule violations of one config; empty means the installer would accept it.
pub fn installer_check(cfg: &HarvesterConfig, automatic: bool) -> Vec<String> {
    let mut errs = Vec::new();
    let install = cfg.install.clone().unwrap_or_default();
    let os = cfg.os.clone().unwrap_or_default();
    let mode = install.mode.as_deref().unwrap_or("");
    if !["create", "join", "install", "upgrade"].contains(&mode) {
        errs.push("unknown mode".to_string());
    }
    let server_url = cfg.server_url.as_deref().unwrap_or("");
    if mode == "create" && !server_url.is_empty() {
        errs.push("ServerURL need to be empty in create mode".to_string());
    }
    if mode == "join" {
        if server_url.is_empty() {
            errs.push("ServerURL can't empty in join mode".to_string());
        } else if let Err(e) = check_server_url(server_url) {
            errs.push(e.to_string());
        }
    }
    if automatic && mode != "install" && install.iso_url.as_deref().unwrap_or("").is_empty() {
        errs.push("iso_url is required in automatic installation".to_string());
    }
    let token = cfg.token.as_deref().unwrap_or("");
    if token.is_empty() {
        errs.push("token not specified".to_string());
    } else if !token.chars().all(|c| (' '..='~').contains(&c)) {
        errs.push("Invalid token: only printable ASCII characters are allowed".to_string());
    }
    let has_keys = os
        .ssh_authorized_keys
        .as_ref()
        .is_some_and(|k| !k.is_empty());
    if os.password.as_deref().unwrap_or("").is_empty() && !has_keys {
        errs.push("no SSH authorized keys or passwords are set".to_string());
    }
    for p in os.persistent_state_paths.iter().flatten() {
        if !p.starts_with('/') || p == "/tmp" || p.starts_with("/tmp/") {
            errs.push(format!(
                "persistent state path {p} must be absolute and outside /tmp"
            ));
        }
    }
    if cfg.scheme_version != Some(1) {
        errs.push(format!(
            "Unsupported Harvester Scheme Version {}",
            cfg.scheme_version.unwrap_or(0)
        ));
    }
    if let Some(h) = &os.hostname
        && !is_dns_subdomain(h)
    {
        errs.push(format!("hostname {h} is not a valid RFC 1123 name"));
    }
    match install.device.as_deref().unwrap_or("") {
        "" => errs.push("install device is not specified".to_string()),
        d if !is_dev_path(d) => errs.push(format!(
            "install device {d}: lstat: no such file or directory (not an absolute /dev/ path)"
        )),
        _ => {}
    }
    if let Some(d) = install.data_disk.as_deref()
        && !is_dev_path(d)
    {
        errs.push(format!(
            "data disk {d}: not an absolute /dev/ path, which the installer cannot format"
        ));
    }
    match &install.management_interface {
        None if mode != "install" => errs.push(
            "networks is deprecated, please use management_interface to configure management network"
                .to_string(),
        ),
        None => {}
        Some(net) => {
            let method = net.method.as_deref().unwrap_or("").to_ascii_lowercase();
            if method != "static" && method != "dhcp" {
                errs.push("management network must configure with either static or DHCP method".to_string());
            }
            if net.interfaces.is_empty() {
                errs.push("no interface specified for management network".to_string());
            }
            for i in &net.interfaces {
                if i.name.is_none() && i.hw_addr.is_none() {
                    errs.push("an interface needs a name or hwAddr".to_string());
                }
            }
            if net.vlan_id.is_some_and(|v| v > 4094) {
                errs.push("VLAN ID should be a number 1 ~ 4094.".to_string());
            }
            if method == "static" {
                if os.dns_nameservers.as_ref().is_none_or(Vec::is_empty) {
                    errs.push("DNS servers are required for static IP address".to_string());
                }
                for (what, v) in [("ip", &net.ip), ("subnet_mask", &net.subnet_mask), ("gateway", &net.gateway)] {
                    if !v.as_deref().is_some_and(is_ipv4) {
                        errs.push(format!("management_interface.{what} must be an IPv4 address"));
                    }
                }
                if let Some(mtu) = net.mtu
                    && mtu != 0 && !(576..=9000).contains(&mtu) {
                        errs.push(format!("{mtu} is not a valid MTU value"));
                    }
            }
        }
    }
    if mode == "create" {
        let vip_mode = install
            .vip_mode
            .as_deref()
            .unwrap_or("")
            .to_ascii_lowercase();
        if !["static", "dhcp", "none"].contains(&vip_mode.as_str()) {
            errs.push("unknown vip mode".to_string());
        }
        if vip_mode == "static" && !install.vip.as_deref().is_some_and(is_ipv4) {
            errs.push("vip must be an IPv4 address".to_string());
        }
        for k in cfg.system_settings.iter().flat_map(|m| m.keys()) {
            if !SYSTEM_SETTINGS.contains(&k.as_str()) {
                errs.push(format!("unknown system settings: {k}"));
            }
        }
    }
    if let Some(role) = &install.role
        && !["default", "management", "worker", "witness"].contains(&role.as_str())
    {
        errs.push(format!("unknown role {role}"));
    }
    for (k, v) in os.labels.iter().flatten() {
        if !is_qualified_label_name(k) {
            errs.push(format!("invalid node label name {k}"));
        }
        if !is_label_value(v) {
            errs.push(format!("invalid value of node label {k}: {v}"));
        }
    }
    errs
}

/// The installer's allow-list of settings at create time (v1.4 to v1.7 common set).
const SYSTEM_SETTINGS: &[&str] = &[
    "additional-ca",
    "api-ui-version",
    "cluster-registration-url",
    "server-version",
    "ui-index",
    "ui-path",
    "ui-source",
    "volume-snapshot-class",
    "backup-target",
    "upgradable-versions",
    "upgrade-checker-enabled",
    "upgrade-checker-url",
    "release-download-url",
    "log-level",
    "ssl-certificates",
    "ssl-parameters",
    "support-bundle-image",
    "support-bundle-namespaces",
    "support-bundle-timeout",
    "default-storage-class",
    "http-proxy",
    "vm-force-reset-policy",
    "overcommit-config",
    "vip-pools",
    "auto-disk-provision-paths",
    "containerd-registry",
    "ntp-servers",
    "ui-plugin-index",
    "support-bundle-expiration",
    "support-bundle-node-collection-timeout",
    "csi-driver-config",
    "storage-network",
    "default-vm-termination-grace-period-seconds",
    "auto-rotate-rke2-certs",
    "kubeconfig-default-token-ttl-minutes",
    "harvester-csi-ccm-versions",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_url_rules() {
        assert!(check_server_url("https://10.0.0.1:443").is_ok());
        assert!(check_server_url("https://vip.example.com").is_ok());
        assert!(check_server_url("https://10.0.0.1:6443").is_err());
        assert!(check_server_url("https://10.0.0.1/x").is_err());
    }

    #[test]
    fn label_rules() {
        assert!(is_qualified_label_name("topology.kubernetes.io/zone"));
        assert!(!is_qualified_label_name("bad key"));
        assert!(is_label_value("rack-a"));
        assert!(!is_label_value("-x"));
    }
}
