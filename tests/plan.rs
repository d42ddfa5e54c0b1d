//! `rackplan plan`: idempotence, no renumbering, orphans and releases, role overrides, pool
//! exhaustion.

use rackplan::inventory::Node;
use rackplan::plan::Lock;
use rackplan::profile::Role;

use crate::support::{Site, id_of};

fn lock(site: &Site) -> Lock {
    Lock::load(&site.file("allocations.yaml")).unwrap().0
}

fn clone_node(site: &Site, hostname: &str, new_id: &str) -> Node {
    let id = id_of(site, hostname);
    let mut n = site
        .inventory()
        .nodes
        .into_iter()
        .find(|n| n.id == id)
        .unwrap();
    n.id = new_id.into();
    n.serial = Some(new_id.into());
    for (i, nic) in n.nics.iter_mut().enumerate() {
        nic.mac = format!("02:aa:00:00:00:{i:02x}");
    }
    n
}

#[test]
fn replanning_changes_nothing() {
    let site = Site::example();
    let before = site.read("allocations.yaml");
    for _ in 0..2 {
        let r = site.run(&["plan", "--site", "{site}"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(!r.stdout.contains(" new "), "{}", r.stdout);
    }
    assert_eq!(site.read("allocations.yaml"), before);
}

#[test]
fn adding_a_node_never_renumbers() {
    let site = Site::example();
    let before = lock(&site);
    let new = clone_node(&site, "hv-c05", "NEWNODE1");
    site.edit_inventory(|inv| inv.nodes.push(new));
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = lock(&site);
    for a in &before.nodes {
        assert_eq!(after.get(&a.id), Some(a), "{} changed", a.id);
    }
    let added = after.get("NEWNODE1").unwrap();
    assert_eq!(added.hostname, "hv-c13");
    assert_eq!(added.management_ip.to_string(), "10.10.0.36");
    assert_eq!(added.role, Role::Compute);
    assert_eq!(after.cluster_init, before.cluster_init);
}

#[test]
fn removing_a_node_frees_nothing_silently() {
    let site = Site::example();
    let gone = id_of(&site, "hv-c05");
    site.edit_inventory(|inv| inv.nodes.retain(|n| n.id != gone));
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(&format!(
            "{gone} is no longer in the inventory; hv-c05 and 10.10.0.28 stay reserved"
        )),
        "{}",
        r.stdout
    );
    assert!(lock(&site).get(&gone).is_some());

    // A newcomer does not take the reserved name or address.
    let new = clone_node(&site, "hv-c06", "NEWNODE2");
    site.edit_inventory(|inv| inv.nodes.push(new));
    site.run(&["plan", "--site", "{site}"]);
    let a = lock(&site).get("NEWNODE2").cloned().unwrap();
    assert_eq!(
        (a.hostname.as_str(), a.management_ip.to_string()),
        ("hv-c13", "10.10.0.36".to_string())
    );

    // Releasing is explicit and reported.
    let r = site.run(&["plan", "--site", "{site}", "--release", &gone]);
    assert!(
        r.stdout
            .contains(&format!("released {gone} (hv-c05, 10.10.0.28) as asked")),
        "{}",
        r.stdout
    );
    assert!(lock(&site).get(&gone).is_none());
}

#[test]
fn a_role_annotation_wins_and_keeps_the_address() {
    let site = Site::example();
    let demoted = id_of(&site, "hv-m03");
    let promoted = id_of(&site, "hv-c12");
    let before = lock(&site);
    site.edit_inventory(|inv| {
        for n in &mut inv.nodes {
            if n.id == demoted {
                n.annotations.role = Some(Role::Compute);
            }
            if n.id == promoted {
                n.annotations.role = Some(Role::Management);
            }
        }
    });
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let after = lock(&site);
    let d = after.get(&demoted).unwrap();
    assert_eq!((d.role, d.hostname.as_str()), (Role::Compute, "hv-c13"));
    assert_eq!(d.management_ip, before.get(&demoted).unwrap().management_ip);
    let p = after.get(&promoted).unwrap();
    assert_eq!((p.role, p.hostname.as_str()), (Role::Management, "hv-m03"));
    assert!(
        r.stdout.contains("role was compute (hv-c12)"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_fresh_plan_spreads_management_over_racks() {
    let site = Site::example();
    std::fs::remove_file(site.file("allocations.yaml")).unwrap();
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let l = lock(&site);
    let inv = site.inventory();
    let mut racks: Vec<String> = l
        .nodes
        .iter()
        .filter(|a| a.role == Role::Management)
        .map(|a| {
            inv.nodes
                .iter()
                .find(|n| n.id == a.id)
                .unwrap()
                .annotations
                .rack
                .clone()
                .unwrap()
        })
        .collect();
    racks.sort();
    assert_eq!(racks, ["r01", "r02", "r03"]);
    // The dedicated 16-core machines were chosen, not 64-core compute nodes.
    for a in l.nodes.iter().filter(|a| a.role == Role::Management) {
        let n = inv.nodes.iter().find(|n| n.id == a.id).unwrap();
        assert_eq!(n.cores(), Some(16));
    }
    let init = l.cluster_init.clone().unwrap();
    assert_eq!(l.get(&init).unwrap().hostname, "hv-m01");
}

#[test]
fn pool_exhaustion_names_the_field_and_writes_nothing() {
    let site = Site::example();
    std::fs::remove_file(site.file("allocations.yaml")).unwrap();
    site.replace("site.yaml", "end: 10.10.0.99", "end: 10.10.0.30");
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    assert!(crate::support::flat(&r.stderr).contains("management.pool: the management pool is exhausted: 15 new node(s) need an address, 10 are free"), "{}", r.stderr);
    assert!(!site.file("allocations.yaml").exists());
}

#[test]
fn storage_range_too_small_is_an_error_naming_the_field() {
    let site = Site::example();
    site.replace("site.yaml", "cidr: 172.16.0.0/24", "cidr: 172.16.0.0/25");
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    assert!(crate::support::flat(&r.stderr).contains("storage_network.cidr: storage range 172.16.0.0/25 has 126 usable addresses; the fleet needs 132"), "{}", r.stderr);
}
