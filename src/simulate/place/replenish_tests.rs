//! The burst's placement: skipping full disks changes nothing, and the balance score.

use super::free::Free;
use super::placement::Placement;
use super::replenish::{
    BurstHow, BurstIndex, Replacement, Space, best_balance, replace_lost_skipping,
};
use crate::simulate::fleet::Topology;

/// Skipping the disks no replica of a burst can go to re-homes every replica where
/// the plain scan does, read either way ([`Space`]), for every node and rack failure of fleets filled from a
/// little to past full, with volumes of two sizes.
#[test]
fn skipping_closed_disks_changes_no_replacement() {
    use crate::simulate::fleet::Host;
    use crate::simulate::place::workload;
    use crate::simulate::scenario::{Platform, Pool};
    let hosts = (0..12)
        .map(|i| Host {
            name: format!("n{i}"),
            rack: i % 3,
            cpu: 64.0,
            mem_gib: 512.0,
            disks: vec![1.5e12 + (i % 4) as f64 * 2e11, 9e11],
        })
        .collect();
    let topo = Topology::build(
        hosts,
        vec!["a".into(), "b".into(), "c".into()],
        &[None, None, None],
    );
    let pools = [Pool {
        name: "w".into(),
        count: 3,
        vcpu: 4.0,
        memory_gib: 8.0,
        disks_gib: vec![50.0, 400.0],
        anti_affinity: false,
        running: true,
    }];
    let p = Platform::default();
    let mut compared = 0;
    let mut stranded = 0;
    for clusters in [10, 40, 80, 120] {
        let list: Vec<&[Pool]> = std::iter::repeat_n(&pools[..], clusters).collect();
        let (vms, vols) = workload(&list, &p);
        let pl = Placement::build(topo.clone(), vms, vols, &p);
        let settled = BurstIndex::new(pl.topo(), pl.free());
        let created = BurstIndex::as_created(pl.topo(), pl.free());
        for (_, failed) in pl.topo().failure_domains() {
            let mut alive = vec![true; pl.topo().hosts.len()];
            for &f in &failed {
                alive[f] = false;
            }
            for (index, space) in [(&settled, Space::Settled), (&created, Space::AsCreated)] {
                let how = BurstHow {
                    refresh_every: 1,
                    salt: 0,
                };
                let run = |free: &mut Free, skip: bool| {
                    replace_lost_skipping(&pl, &alive, &failed, (index, space), free, how, skip)
                };
                let (mut a, mut b) = (pl.free().clone(), pl.free().clone());
                let fast = run(&mut a, true);
                let plain = run(&mut b, false);
                let key =
                    |r: &[Replacement]| r.iter().map(|x| (x.volume, x.target)).collect::<Vec<_>>();
                assert_eq!(key(&fast), key(&plain), "{clusters} clusters, {failed:?}");
                assert_eq!(format!("{:?}", a.disk), format!("{:?}", b.disk));
                compared += fast.len();
                stranded += fast.iter().filter(|r| r.target.is_none()).count();
            }
        }
    }
    assert!(compared > 1000, "{compared} replacements compared");
    assert!(stranded > 0, "the fullest fleet strands replicas");
}

#[test]
fn the_balance_score_takes_the_node_with_most_usable_space() {
    // Usable 10, 7, 4; a replica of 2: taking it from 10 leaves (8, 7, 4): range 4;
    // from 7: (10, 5, 4): 6; from 4: (10, 7, 2): 8.
    assert_eq!(best_balance(&[10.0, 7.0, 4.0], 2.0), Some(vec![0]));
    // A replica larger than all but one node's space goes there.
    assert_eq!(best_balance(&[1.0, 9.0, 1.0], 5.0), Some(vec![1]));
    // Ties are all returned.
    assert_eq!(best_balance(&[5.0, 5.0], 1.0), Some(vec![0, 1]));
    // No room anywhere: Longhorn's fallback.
    assert_eq!(best_balance(&[1.0, 1.0], 5.0), None);
    // A big replica can make the largest node the new minimum: then another wins.
    // (10, 9, 9), replica 8: from 10 -> (2, 9, 9) range 7; from 9 -> (10, 1, 9) 9.
    assert_eq!(best_balance(&[10.0, 9.0, 9.0], 8.0), Some(vec![0]));
}
