//! Tests only (compiled under `cfg(test)`): role assignment and allocation on the example
//! site, edited in memory.

use std::path::Path;

use super::allocate::{Change, InstallMode, plan};
use super::allocations::Lock;
use super::inputs::{Inputs, load_inputs};
use super::roles::{RoleSource, assign};
use crate::profile::Role;

fn example() -> Inputs {
    let mut i = load_inputs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("inventory/example"))
        .expect("the example site loads");
    i.lock = Lock::default();
    i
}

fn roles_of(i: &Inputs) -> Vec<(String, Role)> {
    assign(&i.inventory, &i.profiles, &i.lock)
        .into_iter()
        .map(|(id, d)| (id, d.role))
        .collect()
}

#[test]
fn three_management_nodes_are_inferred_one_per_rack() {
    let i = example();
    let r = assign(&i.inventory, &i.profiles, &i.lock);
    let mgmt: Vec<&String> = r
        .iter()
        .filter(|(_, d)| d.role == Role::Management)
        .map(|(id, _)| id)
        .collect();
    assert_eq!(mgmt.len(), 3);
    let mut racks: Vec<String> = mgmt
        .iter()
        .map(|id| {
            let n = i.inventory.nodes.iter().find(|n| n.id == **id).unwrap();
            n.failure_domain().unwrap_or("").to_string()
        })
        .collect();
    racks.sort();
    racks.dedup();
    assert_eq!(racks.len(), 3, "one management node per rack");
    assert!(r.values().all(|d| d.source == RoleSource::Inferred));
}

#[test]
fn an_annotation_wins_over_the_lock_which_wins_over_inference() {
    let mut i = example();
    let first = plan(&i, &[]).unwrap();
    i.lock = first.lock.clone();
    let compute = i
        .lock
        .nodes
        .iter()
        .find(|a| a.role == Role::Compute)
        .unwrap()
        .id
        .clone();
    let node = i
        .inventory
        .nodes
        .iter_mut()
        .find(|n| n.id == compute)
        .unwrap();
    node.annotations.role = Some(Role::Witness);
    let r = assign(&i.inventory, &i.profiles, &i.lock);
    assert_eq!(r[&compute].role, Role::Witness);
    assert_eq!(r[&compute].source, RoleSource::Annotation);
    let other = i.lock.nodes.iter().find(|a| a.id != compute).unwrap();
    assert_eq!(r[&other.id].source, RoleSource::Lock);
}

#[test]
fn planning_twice_changes_nothing_and_a_new_node_takes_the_next_free_name() {
    let mut i = example();
    let first = plan(&i, &[]).unwrap();
    assert!(first.nodes.iter().all(|n| n.change == Change::Added));
    assert_eq!(
        first
            .nodes
            .iter()
            .filter(|n| n.install_mode == InstallMode::Create)
            .count(),
        1,
        "exactly one node creates the cluster"
    );
    i.lock = first.lock.clone();
    let again = plan(&i, &[]).unwrap();
    assert_eq!(again.lock, first.lock, "idempotent");
    assert!(again.nodes.iter().all(|n| n.change == Change::Kept));

    let mut extra = i.inventory.nodes.last().unwrap().clone();
    extra.id = "NEW-NODE".into();
    extra.serial = Some("NEW-NODE".into());
    for (k, nic) in extra.nics.iter_mut().enumerate() {
        nic.mac = format!("02:00:00:00:00:{k:02x}");
    }
    extra.annotations.role = Some(Role::Compute);
    i.inventory.nodes.insert(0, extra);
    let grown = plan(&i, &[]).unwrap();
    for a in &first.lock.nodes {
        assert_eq!(grown.lock.get(&a.id), Some(a), "{} kept", a.id);
    }
    let new = grown.lock.get("NEW-NODE").unwrap();
    let highest = first
        .lock
        .nodes
        .iter()
        .map(|a| a.management_ip)
        .max()
        .unwrap();
    assert_eq!(new.hostname, "hv-c13");
    assert_eq!(u32::from(new.management_ip), u32::from(highest) + 1);
}

#[test]
fn a_node_that_left_stays_reserved_until_released() {
    let mut i = example();
    i.lock = plan(&i, &[]).unwrap().lock;
    let gone = i.inventory.nodes.remove(5);
    let kept = plan(&i, &[]).unwrap();
    let row = kept
        .nodes
        .iter()
        .find(|n| n.allocation.id == gone.id)
        .unwrap();
    assert_eq!(row.change, Change::Orphaned);
    let released = plan(&i, std::slice::from_ref(&gone.id)).unwrap();
    assert!(released.lock.get(&gone.id).is_none());
    assert_eq!(roles_of(&i).len(), 14);
}
