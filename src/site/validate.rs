//! Cross-field checks of `site.yaml`, each error pointing at the key to fix.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use super::model::Site;
use crate::files::yaml::{InputError, Seg, Source};
use crate::path;

fn overlaps(a: Ipv4Net, b: Ipv4Net) -> bool {
    a.contains(&b.network()) || b.contains(&a.network())
}

pub(crate) fn validate(site: &Site, src: &Source) -> Result<(), InputError> {
    let m = &site.management;
    let err = |p: Vec<Seg>, msg: String, hint: &str| Err(src.error_at(&p, msg, Some(hint.into())));

    if m.cidr.prefix_len() > 30 {
        return err(
            path!["management", "cidr"],
            format!("management network {} is too small", m.cidr),
            "use a prefix of /30 or wider",
        );
    }
    if m.cidr.network() != m.cidr.addr() {
        return err(
            path!["management", "cidr"],
            format!(
                "{} has host bits set; the network address is {}",
                m.cidr,
                m.cidr.trunc()
            ),
            "write the network address",
        );
    }
    let host =
        |a: &Ipv4Addr| m.cidr.contains(a) && *a != m.cidr.network() && *a != m.cidr.broadcast();
    if !host(&m.gateway) {
        return err(
            path!["management", "gateway"],
            format!("gateway {} is not a host address of {}", m.gateway, m.cidr),
            "the gateway must lie inside management.cidr",
        );
    }
    if !host(&m.vip) {
        return err(
            path!["management", "vip"],
            format!("VIP {} is outside the management subnet {}", m.vip, m.cidr),
            "the cluster VIP must be a host address of management.cidr",
        );
    }
    if m.vip == m.gateway {
        return err(
            path!["management", "vip"],
            format!("VIP {} is the gateway's address", m.vip),
            "pick a free address for the VIP",
        );
    }
    for (key, a) in [("start", m.pool.start), ("end", m.pool.end)] {
        if !host(&a) {
            return err(
                path!["management", "pool", key],
                format!("pool {key} {a} is not a host address of {}", m.cidr),
                "the address pool must lie inside management.cidr",
            );
        }
    }
    if m.pool.start > m.pool.end {
        return err(
            path!["management", "pool", "end"],
            format!(
                "pool ends at {} before it starts at {}",
                m.pool.end, m.pool.start
            ),
            "swap start and end",
        );
    }
    let in_pool = |a: Ipv4Addr| a >= m.pool.start && a <= m.pool.end;
    if in_pool(m.vip) {
        return err(
            path!["management", "vip"],
            format!(
                "VIP {} lies inside the node pool {}-{}",
                m.vip, m.pool.start, m.pool.end
            ),
            "move the VIP out of management.pool, or shrink the pool",
        );
    }
    if in_pool(m.gateway) {
        return err(
            path!["management", "gateway"],
            format!("gateway {} lies inside the node pool", m.gateway),
            "shrink management.pool so it excludes the gateway",
        );
    }
    if m.dns.is_empty() {
        return err(
            path!["management", "dns"],
            "no DNS server: Harvester requires at least one with a static address".into(),
            "list at least one DNS server",
        );
    }

    // No two site networks may overlap.
    let nets: Vec<(Vec<Seg>, Ipv4Net)> = vec![
        (path!["management", "cidr"], m.cidr),
        (path!["storage_network", "cidr"], site.storage_network.cidr),
        (path!["cluster", "pod_cidr"], site.cluster.pod_cidr),
        (path!["cluster", "service_cidr"], site.cluster.service_cidr),
    ];
    for i in 0..nets.len() {
        for j in i + 1..nets.len() {
            if overlaps(nets[i].1, nets[j].1) {
                return Err(src.error_at(
                    &nets[j].0,
                    format!(
                        "{} ({}) overlaps {} ({})",
                        crate::files::yaml::display_path(&nets[j].0),
                        nets[j].1,
                        crate::files::yaml::display_path(&nets[i].0),
                        nets[i].1
                    ),
                    Some("every site network needs its own address range".into()),
                ));
            }
        }
    }
    if !site
        .cluster
        .service_cidr
        .contains(&site.cluster.cluster_dns)
    {
        return err(
            path!["cluster", "cluster_dns"],
            format!(
                "cluster DNS {} is outside the service network {}",
                site.cluster.cluster_dns, site.cluster.service_cidr
            ),
            "cluster_dns must be an address of cluster.service_cidr",
        );
    }
    // Harvester's docs: the storage range must not overlap the RKE2 defaults either, even
    // when the site moved its own pod/service ranges.
    for reserved in [
        "10.42.0.0/16",
        "10.43.0.0/16",
        "10.52.0.0/16",
        "10.53.0.0/16",
    ] {
        let r: Ipv4Net = reserved.parse().expect("constant");
        if overlaps(r, site.storage_network.cidr) {
            return err(
                path!["storage_network", "cidr"],
                format!(
                    "storage range {} overlaps {reserved}, which RKE2/Harvester reserve",
                    site.storage_network.cidr
                ),
                "choose a range outside 10.42/16, 10.43/16, 10.52/16 and 10.53/16",
            );
        }
    }

    // Storage network rules of Harvester's setting webhook.
    let s = &site.storage_network;
    if s.cidr.network() != s.cidr.addr() {
        return err(
            path!["storage_network", "cidr"],
            format!(
                "{} is not a network address; Harvester wants {}",
                s.cidr,
                s.cidr.trunc()
            ),
            "write the range as its network address",
        );
    }
    if s.cidr.prefix_len() < 16 {
        return err(
            path!["storage_network", "cidr"],
            format!(
                "storage range {} is wider than /16, which Harvester rejects",
                s.cidr
            ),
            "use a prefix of /16 or narrower",
        );
    }
    for (k, ex) in s.exclude.iter().enumerate() {
        if ex.prefix_len() < 16 || !overlaps(*ex, s.cidr) || ex.prefix_len() <= s.cidr.prefix_len()
        {
            return err(
                path!["storage_network", "exclude", k],
                format!(
                    "exclude {ex} must lie inside and be narrower than the range {}",
                    s.cidr
                ),
                "list only sub-ranges of storage_network.cidr",
            );
        }
        if k > 0 && overlaps(*ex, s.exclude[k - 1]) {
            return err(
                path!["storage_network", "exclude", k],
                format!("exclude {ex} overlaps the previous one"),
                "merge overlapping excludes",
            );
        }
    }
    if site.vm_network.cluster_network == s.cluster_network {
        return err(
            path!["storage_network", "cluster_network"],
            format!(
                "the storage network shares cluster network `{}` with the VM network",
                s.cluster_network
            ),
            "the reference design gives Longhorn its own bond: name a separate cluster network",
        );
    }

    // Tenants: unique names per namespace, unique VLANs, and not the storage VLAN.
    let mut vlans: BTreeMap<u16, usize> = BTreeMap::new();
    let mut names: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (k, t) in site.vm_network.tenants.iter().enumerate() {
        if let Some(prev) = vlans.insert(t.vlan.0, k) {
            return err(
                path!["vm_network", "tenants", k, "vlan"],
                format!(
                    "VLAN {} is already used by tenant `{}`",
                    t.vlan, site.vm_network.tenants[prev].name
                ),
                "give each tenant its own VLAN",
            );
        }
        let key = (t.namespace().to_string(), t.name.0.clone());
        if names.insert(key, k).is_some() {
            return err(
                path!["vm_network", "tenants", k, "name"],
                format!(
                    "tenant `{}` is listed twice in namespace `{}`",
                    t.name,
                    t.namespace()
                ),
                "tenant names must be unique within a namespace",
            );
        }
        if Some(t.vlan) == m.vlan {
            return err(
                path!["vm_network", "tenants", k, "vlan"],
                format!("VLAN {} is the management VLAN", t.vlan),
                "tenant VLANs must differ from management.vlan",
            );
        }
    }
    if site.longhorn.replica_count == 0 || site.longhorn.replica_count > 3 {
        return err(
            path!["longhorn", "replica_count"],
            format!(
                "replica count {} is not supported by Harvester",
                site.longhorn.replica_count
            ),
            "use 1, 2 or 3 (Harvester clamps higher values to 3)",
        );
    }
    if site.longhorn.concurrent_replica_rebuild_per_node_limit == 0 {
        return err(
            path!["longhorn", "concurrent_replica_rebuild_per_node_limit"],
            "0 disables replica rebuilding entirely".into(),
            "use 1 or more (the reference design uses 2)",
        );
    }
    let sec = &site.secrets;
    if sec.password.is_some() && sec.password_hash.is_some() {
        return err(
            path!["secrets", "password_hash"],
            "both `password` and `password_hash` are set".into(),
            "keep one of them",
        );
    }
    if sec.password.is_none() && sec.password_hash.is_none() && sec.ssh_authorized_keys.is_none() {
        return err(
            path!["secrets"],
            "no password and no SSH keys: the installer refuses such a config".into(),
            "add `password`, `password_hash` or `ssh_authorized_keys`",
        );
    }
    for (k, r) in [
        ("token", Some(&sec.token)),
        ("password", sec.password.as_ref()),
        ("password_hash", sec.password_hash.as_ref()),
        ("ssh_authorized_keys", sec.ssh_authorized_keys.as_ref()),
    ] {
        if let Some(r) = r
            && let Err(msg) = r.check_shape()
        {
            return err(
                path!["secrets", k],
                msg.to_string(),
                "write `{env: VAR}` or `{file: path}`",
            );
        }
    }
    if let Some(why) = super::base_url::route_problem(&site.harvester.pxe_base_url) {
        return err(
            path!["harvester", "pxe_base_url"],
            format!("{}: {why}", site.harvester.pxe_base_url),
            "serve mounts its routes under this path, and nodes are sent there: use a literal path such as http://10.10.0.5/harvester/v1.6.1",
        );
    }
    images(site, src)?;
    catalogue(site, src)
}

/// `images:`: a URL Harvester can download, a SHA-512 Longhorn accepts, names unique per
/// namespace (Harvester refuses a second image of the same display name).
fn images(site: &Site, src: &Source) -> Result<(), InputError> {
    let err = |p: Vec<Seg>, msg: String, hint: &str| Err(src.error_at(&p, msg, Some(hint.into())));
    let mut names = BTreeMap::new();
    let mut shown = BTreeMap::new();
    for (i, img) in site.images.iter().enumerate() {
        match url::Url::parse(&img.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => {
                return err(
                    path!["images", i, "url"],
                    format!("`{}` is not an http(s) URL", img.url),
                    "Harvester downloads images over HTTP or HTTPS; give the full URL",
                );
            }
        }
        let Some(sum) = &img.checksum else {
            return err(
                path!["images", i],
                format!("image `{}` has a URL but no checksum", img.name),
                "add `checksum: sha512:<128 hex digits>` (from `sha512sum`); an unchecked download could boot anything",
            );
        };
        let hex = sum.strip_prefix("sha512:");
        if hex.is_none_or(|h| {
            h.len() != 128 || !h.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
        }) {
            let (algo, digits) = sum.split_once(':').unwrap_or(("", sum));
            let why = if !algo.is_empty() && algo != "sha512" {
                format!("a {algo} checksum; Longhorn accepts SHA-512 only")
            } else if digits.len() == 64 {
                "64 hex digits, a SHA-256; Longhorn accepts SHA-512 only".to_string()
            } else if algo.is_empty() {
                "no algorithm; write it as `sha512:<digits>`".to_string()
            } else {
                format!(
                    "{} characters; a SHA-512 is 128 lowercase hex digits",
                    digits.len()
                )
            };
            return err(
                path!["images", i, "checksum"],
                format!("checksum of image `{}` is {why}", img.name),
                "run `sha512sum` on the image and write `sha512:` followed by its 128 lowercase hex digits",
            );
        }
        if img.display_name.trim().is_empty() {
            return err(
                path!["images", i, "display_name"],
                "an image needs a display name".into(),
                "the name Harvester's UI shows, e.g. `RKE2 v1.33 golden image`",
            );
        }
        if let Some(j) = names.insert((img.namespace(), img.name.0.as_str()), i) {
            return err(
                path!["images", i, "name"],
                format!(
                    "image `{}` is also images[{j}] in namespace {}",
                    img.name,
                    img.namespace()
                ),
                "image names must be unique within a namespace",
            );
        }
        if let Some(j) = shown.insert((img.namespace(), img.display_name.as_str()), i) {
            return err(
                path!["images", i, "display_name"],
                format!(
                    "display name `{}` is also images[{j}]'s in namespace {}",
                    img.display_name,
                    img.namespace()
                ),
                "Harvester refuses two images with one display name in a namespace",
            );
        }
    }
    Ok(())
}

/// `catalogue:`: the image and network it names exist in this site.
fn catalogue(site: &Site, src: &Source) -> Result<(), InputError> {
    let Some(c) = &site.catalogue else {
        return Ok(());
    };
    let err = |p: Vec<Seg>, msg: String, hint: String| Err(src.error_at(&p, msg, Some(hint)));
    let images: Vec<&str> = site.images.iter().map(|i| i.name.0.as_str()).collect();
    match &c.image {
        None if images.is_empty() => {
            return err(
                path!["catalogue"],
                "the catalogue needs an image to boot its VMs from, and `images:` is empty".into(),
                "add the golden image under `images:`".into(),
            );
        }
        Some(i) if !images.contains(&i.as_str()) => {
            return err(
                path!["catalogue", "image"],
                format!("no image `{i}` under `images:`"),
                format!("one of: {}", images.join(", ")),
            );
        }
        _ => {}
    }
    let nets: Vec<&str> = site
        .vm_network
        .tenants
        .iter()
        .map(|t| t.name.0.as_str())
        .collect();
    match &c.network {
        None if nets.is_empty() => {
            return err(
                path!["catalogue"],
                "the catalogue needs a VM network, and `vm_network.tenants` is empty".into(),
                "add a tenant network under `vm_network.tenants`".into(),
            );
        }
        Some(n) if !nets.contains(&n.as_str()) => {
            return err(
                path!["catalogue", "network"],
                format!("no tenant network `{n}` under `vm_network.tenants`"),
                format!("one of: {}", nets.join(", ")),
            );
        }
        _ => {}
    }
    if c.cloud_credential
        .split_once(':')
        .is_none_or(|(a, b)| a.is_empty() || b.is_empty())
    {
        return err(
            path!["catalogue", "cloud_credential"],
            format!("`{}` is not `<namespace>:<name>`", c.cloud_credential),
            "Rancher names cloud credentials like `cattle-global-data:cc-abcde`".into(),
        );
    }
    Ok(())
}
