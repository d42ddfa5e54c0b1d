//! `rackplan render`: the committed example output, determinism, file modes, what the
//! installer will read, and refusal on bad state.

use std::collections::BTreeMap;
use std::path::Path;

use rackplan::render::installer::HarvesterConfig;
use rackplan::render::validate::installer_check;

use crate::support::{Site, id_of, repo};

fn tree(root: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

#[test]
fn committed_example_output_matches_what_the_code_renders() {
    let site = Site::example();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let fresh = tree(&site.out());
    let committed = tree(&repo().join("iso-config/example"));
    assert_eq!(
        fresh.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>(),
        "file set drifted: re-run `rackplan render --site inventory/example` and commit"
    );
    for (path, bytes) in &fresh {
        assert!(
            committed[path] == *bytes,
            "{path} drifted from iso-config/example: re-render the example and commit the result"
        );
    }
}

#[test]
fn rendering_twice_is_byte_identical_and_modes_are_right() {
    let site = Site::example();
    site.run(&["render", "--site", "{site}"]);
    let first = tree(&site.out());
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0);
    assert_eq!(first, tree(&site.out()));
    assert_eq!(mode(&site.out().join("nodes/hv-m01/config.yaml")), 0o600);
    assert_eq!(mode(&site.out().join("nodes/hv-m01/boot.ipxe")), 0o644);
    assert_eq!(
        mode(&site.out().join("manifests/networks/20-vlanconfigs.yaml")),
        0o644
    );
}

#[test]
fn every_config_is_what_the_installer_reads_and_accepts() {
    let site = Site::example();
    site.run(&["render", "--site", "{site}"]);
    let (lock, _) = rackplan::plan::Lock::load(&site.file("allocations.yaml")).unwrap();
    let password = site.read("secrets/password.example");
    let mut creates = 0;
    for a in &lock.nodes {
        let path = site.out().join(format!("nodes/{}/config.yaml", a.hostname));
        let text = std::fs::read_to_string(&path).unwrap();
        // Strict model: any key the installer does not know fails here.
        let (cfg, _): (HarvesterConfig, _) = rackplan::files::yaml::parse(&path, &text).unwrap();
        assert_eq!(
            installer_check(&cfg, true),
            Vec::<String>::new(),
            "{}",
            a.hostname
        );
        let install = cfg.install.clone().unwrap();
        let net = install.management_interface.clone().unwrap();
        let bond = net.bond_options.clone().unwrap();
        assert_eq!(bond["mode"], "802.3ad");
        assert_eq!(bond["miimon"], "100");
        assert_eq!(bond["xmit_hash_policy"], "layer3+4");
        assert_eq!(net.mtu, Some(9000));
        assert_eq!(net.interfaces.len(), 2);
        assert_eq!(
            net.ip.as_deref(),
            Some(a.management_ip.to_string().as_str())
        );
        assert!(install.device.unwrap().starts_with("/dev/disk/by-id/"));
        assert!(
            install
                .data_disk
                .unwrap()
                .starts_with("/dev/disk/by-id/nvme-")
        );
        match install.mode.as_deref() {
            Some("create") => {
                creates += 1;
                assert_eq!(cfg.server_url, None);
                assert_eq!(install.vip.as_deref(), Some("10.10.0.10"));
            }
            Some("join") => assert_eq!(cfg.server_url.as_deref(), Some("https://10.10.0.10:443")),
            other => panic!("mode {other:?}"),
        }
        let os = cfg.os.unwrap();
        let hash = os.password.unwrap();
        assert!(
            hash.starts_with(&format!("$6${}$", a.password_salt)),
            "{hash}"
        );
        assert_eq!(a.password_salt.len(), 16);
        assert_eq!(
            hash,
            rackplan::files::secrets::sha512_crypt(password.trim_end(), &a.password_salt)
        );
        assert_eq!(os.hostname.as_deref(), Some(a.hostname.as_str()));
        // Install progress goes to `rackplan serve`'s webhook route, under pxe_base_url.
        let hooks: Vec<(String, String, String)> = install
            .webhooks
            .clone()
            .unwrap()
            .into_iter()
            .map(|w| (w.event, w.method, w.url))
            .collect();
        let hook = |ev: &str| {
            (
                ev.to_string(),
                "POST".to_string(),
                format!(
                    "http://10.10.0.5/harvester/v1.6.1/webhook/{}/{ev}",
                    a.hostname
                ),
            )
        };
        assert_eq!(
            hooks,
            vec![hook("STARTED"), hook("SUCCEEDED"), hook("FAILED")]
        );
        let role = install.role.unwrap();
        assert_eq!(
            role,
            if a.role == rackplan::profile::Role::Management {
                "management"
            } else {
                "worker"
            }
        );
    }
    assert_eq!(creates, 1);
}

#[test]
fn ipxe_points_at_the_node_config() {
    let site = Site::example();
    site.run(&["render", "--site", "{site}"]);
    let s = std::fs::read_to_string(site.out().join("nodes/hv-c02/boot.ipxe")).unwrap();
    assert!(s.starts_with("#!ipxe\n"));
    assert!(s.contains(
        "harvester.install.config_url=http://10.10.0.5/harvester/v1.6.1/nodes/hv-c02/config.yaml"
    ));
    assert!(s.contains("harvester.install.automatic=true"));
    assert!(s.contains("initrd=harvester-v1.6.1-initrd-amd64"));
    assert!(s.contains(
        "root=live:http://10.10.0.5/harvester/v1.6.1/harvester-v1.6.1-rootfs-amd64.squashfs"
    ));
    assert_eq!(s.matches(" ip=").count(), 1, "only one ip= is allowed");
    assert!(
        !s.contains("rd.noverifyssl"),
        "TLS checks stay on unless the site opts out"
    );
}

#[test]
fn secrets_never_reach_the_terminal() {
    let site = Site::example();
    let token = site.read("secrets/token.example");
    let password = site.read("secrets/password.example");
    for args in [
        vec!["--output", "json", "render", "--site", "{site}"],
        vec!["render", "--site", "{site}"],
        vec!["--output", "json", "plan", "--site", "{site}"],
    ] {
        let r = site.run(&args);
        for s in [&token, &password] {
            assert!(
                !r.stdout.contains(s.trim()) && !r.stderr.contains(s.trim()),
                "{args:?}"
            );
        }
    }
}

#[test]
fn render_refuses_on_error_findings_and_writes_nothing() {
    let site = Site::example();
    let id = id_of(&site, "hv-c03");
    site.edit_inventory(|inv| {
        inv.nodes
            .iter_mut()
            .find(|n| n.id == id)
            .unwrap()
            .memory_gib = Some(100.0);
    });
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr
            .contains("1 node(s) have error findings; nothing was rendered"),
        "{}",
        r.stderr
    );
    assert!(!site.out().exists());
}

#[test]
fn render_refuses_an_out_of_date_plan() {
    let site = Site::example();
    std::fs::remove_file(site.file("allocations.yaml")).unwrap();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("has no allocation; run `rackplan plan`"),
        "{}",
        r.stderr
    );
}

#[test]
fn files_of_a_released_node_are_removed_and_nothing_else() {
    let site = Site::example();
    site.run(&["render", "--site", "{site}"]);
    std::fs::write(site.out().join("notes-by-a-person.txt"), "keep me").unwrap();
    let gone = id_of(&site, "hv-c05");
    site.edit_inventory(|inv| inv.nodes.retain(|n| n.id != gone));
    site.run(&["plan", "--site", "{site}", "--release", &gone]);
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("removed nodes/hv-c05/config.yaml"),
        "{}",
        r.stdout
    );
    assert!(!site.out().join("nodes/hv-c05").exists());
    assert!(site.out().join("notes-by-a-person.txt").exists());
}

/// SUMMARY.md's row of every node against that node's install config: the install and
/// data disk are the config's, the management bond mode is the config's, and the advice
/// beside it is that mode's (no LACP fallback for a bond without LACP).
pub(crate) fn assert_summary_matches_configs(out: &Path) {
    let summary = std::fs::read_to_string(out.join("SUMMARY.md")).unwrap();
    let mut modes = std::collections::BTreeSet::new();
    let mut nodes = 0;
    for e in std::fs::read_dir(out.join("nodes")).unwrap() {
        let dir = e.unwrap().path();
        let host = dir.file_name().unwrap().to_string_lossy().into_owned();
        let path = dir.join("config.yaml");
        let (cfg, _): (HarvesterConfig, _) =
            rackplan::files::yaml::parse(&path, &std::fs::read_to_string(&path).unwrap()).unwrap();
        let install = cfg.install.unwrap();
        let row: Vec<&str> = summary
            .lines()
            .find(|l| l.starts_with(&format!("| {host} |")))
            .unwrap_or_else(|| panic!("no row for {host}:\n{summary}"))
            .trim_matches('|')
            .split(" | ")
            .map(str::trim)
            .collect();
        let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        assert_eq!(
            (row[9], row[10]),
            (
                dash(install.device.clone()).as_str(),
                dash(install.data_disk.clone()).as_str()
            ),
            "{host}"
        );
        modes.insert(install.management_interface.unwrap().bond_options.unwrap()["mode"].clone());
        nodes += 1;
    }
    assert!(nodes > 0);
    for m in &modes {
        assert!(
            summary.contains(&format!("management bond {m}.")),
            "{m}:\n{summary}"
        );
        assert!(
            summary.contains(&format!(" use {m}:")) || summary.contains(&format!(" uses {m}:")),
            "{m}"
        );
    }
    assert_eq!(
        summary.contains("LACP fallback"),
        modes.contains("802.3ad"),
        "the PXE advice follows the bond's mode:\n{summary}"
    );
}

#[test]
fn summary_says_what_the_configs_say() {
    let site = Site::example();
    // An active-backup management bond, and a node whose disks only its BMC could name.
    site.replace(
        "site.yaml",
        "    mode: 802.3ad\n    miimon: 100\n    xmit_hash_policy: layer3+4\n",
        "    mode: active-backup\n    miimon: 100\n",
    );
    let id = id_of(&site, "hv-c01");
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        for (i, d) in n.disks.iter_mut().enumerate() {
            d.path = None;
            d.derived = Some(rackplan::inventory::DerivedPath {
                path: Some(format!("/dev/disk/by-id/nvme-Derived_Model_SN{i:04}")),
                ..Default::default()
            });
        }
    });
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_summary_matches_configs(&site.out());
    let summary = std::fs::read_to_string(site.out().join("SUMMARY.md")).unwrap();
    assert!(
        summary.contains("/dev/disk/by-id/nvme-Derived_Model_SN0000"),
        "{summary}"
    );
    assert!(
        summary.contains("The management bond uses active-backup: one member carries the traffic"),
        "{summary}"
    );
}
