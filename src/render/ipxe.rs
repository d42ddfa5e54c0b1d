//! iPXE scripts: boot the Harvester installer with the node's own config URL.

use crate::plan::Allocation;
use crate::site::Site;

/// URL of a node's config under the site's PXE base URL.
pub(crate) fn config_url(site: &Site, hostname: &str) -> String {
    format!(
        "{}/nodes/{hostname}/config.yaml",
        site.harvester.pxe_base_url.trim_end_matches('/')
    )
}

/// The kernel command line (harvester-facts §3).
pub(crate) fn kernel_args(site: &Site, alloc: &Allocation) -> Vec<String> {
    let h = &site.harvester;
    let base = h.pxe_base_url.trim_end_matches('/');
    let v = &h.version;
    let mut args = vec![
        format!("initrd=harvester-{v}-initrd-amd64"),
        "ip=dhcp".to_string(),
        "rd.net.dhcp.retry=3".to_string(),
        "net.ifnames=1".to_string(),
        "rd.cos.disable".to_string(),
    ];
    if h.insecure_live_fetch {
        args.push("rd.noverifyssl".to_string());
    }
    args.push("console=tty1".to_string());
    if let Some(c) = &h.console {
        args.push(format!("console={c}"));
    }
    args.push(format!(
        "root=live:{base}/harvester-{v}-rootfs-amd64.squashfs"
    ));
    args.push("harvester.install.automatic=true".to_string());
    if h.skip_preflight_checks {
        args.push("harvester.install.skipchecks=true".to_string());
    }
    args.push(format!(
        "harvester.install.config_url={}",
        config_url(site, &alloc.hostname)
    ));
    args
}

pub(crate) fn script(site: &Site, alloc: &Allocation, create: bool) -> String {
    let h = &site.harvester;
    let base = h.pxe_base_url.trim_end_matches('/');
    let v = &h.version;
    let mut out = String::from("#!ipxe\n");
    out.push_str(&format!(
        "# rackplan: {} (node {}), {} node, {} the cluster\n",
        alloc.hostname,
        alloc.id,
        alloc.role,
        if create { "creates" } else { "joins" }
    ));
    out.push_str("# Generated from site.yaml; re-render instead of editing.\n");
    if h.insecure_live_fetch {
        out.push_str("# WARNING: site.yaml sets insecure_live_fetch: the live root is fetched without TLS verification.\n");
    }
    out.push_str(&format!(
        "kernel {base}/harvester-{v}-vmlinuz-amd64 {}\n",
        kernel_args(site, alloc).join(" ")
    ));
    out.push_str(&format!("initrd {base}/harvester-{v}-initrd-amd64\n"));
    out.push_str("boot\n");
    out
}
