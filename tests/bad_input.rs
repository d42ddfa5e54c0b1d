//! Bad input: every kind gives an error with file, line, column and key path, exits 2 and
//! writes nothing. The renderings are snapshot-tested: error messages are interface.

use crate::support::Site;

/// Run check (reads everything), assert exit 2 and that no file changed; return stderr.
fn fails(site: &Site, args: &[&str]) -> String {
    let lock_before = site.read("allocations.yaml");
    let r = site.run(args);
    assert_eq!(r.code, 2, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert_eq!(
        site.read("allocations.yaml"),
        lock_before,
        "nothing is half-written"
    );
    assert!(!site.out().exists(), "nothing is rendered");
    crate::support::flat(&r.stderr)
}

fn check(site: &Site) -> String {
    fails(site, &["check", "--site", "{site}"])
}

#[test]
fn malformed_yaml() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "  gateway: 10.10.0.1\n",
        "  gateway: [10.10.0.1\n",
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn unknown_key_with_suggestion() {
    let site = Site::example();
    site.replace("site.yaml", "  hostname_prefix: hv", "  hostname_prefx: hv");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn wrong_type() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "  concurrent_replica_rebuild_per_node_limit: 2",
        "  concurrent_replica_rebuild_per_node_limit: two",
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn invalid_cidr() {
    let site = Site::example();
    site.replace("site.yaml", "cidr: 10.10.0.0/24", "cidr: 10.10.0.0/33");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn invalid_ip() {
    let site = Site::example();
    site.replace("site.yaml", "vip: 10.10.0.10", "vip: 10.10.0.300");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn vlan_out_of_range() {
    let site = Site::example();
    site.replace("site.yaml", "vlan: 412", "vlan: 4095");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn mtu_out_of_range() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "  mtu: 9000\n  bond:\n    mode: 802.3ad\n    miimon: 100\n    xmit",
        "  mtu: 9216\n  bond:\n    mode: 802.3ad\n    miimon: 100\n    xmit",
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn vip_outside_management_subnet() {
    let site = Site::example();
    site.replace("site.yaml", "vip: 10.10.0.10", "vip: 10.10.1.10");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn overlapping_site_networks() {
    let site = Site::example();
    site.replace("site.yaml", "cidr: 172.16.0.0/24", "cidr: 10.10.0.0/24");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn cluster_network_name_too_long() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "cluster_network: vm-workload",
        "cluster_network: vm-workload-net",
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn duplicate_tenant_vlan() {
    let site = Site::example();
    site.replace("site.yaml", "vlan: 413", "vlan: 412");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn duplicate_hostnames_in_the_lock() {
    let site = Site::example();
    site.replace("allocations.yaml", "hostname: hv-c02", "hostname: hv-c01");
    insta::assert_snapshot!(check(&site));
}

#[test]
fn duplicate_node_ids() {
    let site = Site::example();
    let text = site.read("nodes.yaml");
    let first = site.inventory().nodes[0].id.clone();
    let second = site.inventory().nodes[1].id.clone();
    site.write(
        "nodes.yaml",
        &text.replacen(&format!("- id: {second}"), &format!("- id: {first}"), 1),
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn bad_mac_in_inventory() {
    let site = Site::example();
    let mac = site.inventory().nodes[0].nics[0].mac.clone();
    site.replace(
        "nodes.yaml",
        &format!("mac: {mac}"),
        &format!("mac: {}", mac.to_uppercase()),
    );
    insta::assert_snapshot!(check(&site));
}

#[test]
fn unknown_key_in_a_profile() {
    let site = Site::example();
    let p = site.tmp.path().join("profiles/compute.yaml");
    let text = std::fs::read_to_string(&p)
        .unwrap()
        .replace("  min_gib: 512", "  min_gb: 512");
    std::fs::write(&p, text).unwrap();
    let e = check(&site);
    assert!(e.contains("profiles/compute.yaml:"), "{e}");
    assert!(e.contains("memory.min_gb: unknown key `min_gb`"), "{e}");
    assert!(e.contains("did you mean `min_gib`?"), "{e}");
}

#[test]
fn missing_secret() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "token: {file: secrets/token.example}",
        "token: {env: RACKPLAN_TEST_TOKEN_UNSET}",
    );
    insta::assert_snapshot!(fails(&site, &["render", "--site", "{site}"]));
}

#[test]
fn missing_secret_file() {
    let site = Site::example();
    std::fs::remove_file(site.file("secrets/password.example")).unwrap();
    let e = fails(&site, &["render", "--site", "{site}"]);
    assert!(e.contains("site.yaml:"), "{e}");
    assert!(
        e.contains("secrets.password: cannot read secret file"),
        "{e}"
    );
}

#[test]
fn secret_reference_with_both_env_and_file() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "token: {file: secrets/token.example}",
        "token: {file: secrets/token.example, env: X}",
    );
    let e = check(&site);
    assert!(
        e.contains("secrets.token: give either `env` or `file`, not both"),
        "{e}"
    );
}

#[test]
fn pxe_base_url_with_a_route_capture() {
    let site = Site::example();
    site.replace(
        "site.yaml",
        "pxe_base_url: http://10.10.0.5/harvester/v1.6.1",
        "pxe_base_url: http://10.10.0.5/harvester/*rest",
    );
    insta::assert_snapshot!(check(&site));
}
