use super::*;
use crate::simulate::fleet::Host;
use crate::simulate::scenario::Platform;

/// A fleet of `hosts` nodes of 1 to 4 disks of mixed sizes over `zones` zones (nodes of a
/// zone spread over the blocks), every seventh node closed to replicas when `closed`.
fn fleet(hosts: usize, zones: usize, closed: bool, seed: u64) -> (Topology, Free) {
    let hs: Vec<Host> = (0..hosts)
        .map(|i| {
            let r = mix(seed ^ i as u64);
            Host {
                name: format!("h{i}"),
                rack: 0,
                cpu: 64.0,
                mem_gib: 256.0,
                disks: (0..=r % 4)
                    .map(|d| [2.0e12, 3.84e12, 0.48e12][((r >> 8) as usize + d as usize) % 3])
                    .collect(),
            }
        })
        .collect();
    let mut topo = Topology::build(hs, vec!["r".into()], &[None]);
    let names: Vec<String> = (0..hosts)
        .map(|i| format!("z{}", mix(seed ^ (i as u64) << 20) as usize % zones))
        .collect();
    topo.set_zones(&names);
    if closed {
        topo.no_replicas = (0..hosts).map(|i| i % 7 == 3).collect();
    }
    let free = Free {
        cpu: topo.hosts.iter().map(|h| h.cpu).collect(),
        mem: topo.hosts.iter().map(|h| h.mem_gib).collect(),
        disk: topo
            .hosts
            .iter()
            .map(|h| vec![(0.0, 0.0); h.disks.len()])
            .collect(),
        node_room: topo
            .hosts
            .iter()
            .map(|h| h.disks.iter().copied().fold(0.0, f64::max))
            .collect(),
    };
    (topo, free)
}

/// Fill the fleet volume by volume until replicas no longer fit, asking the index and
/// `pick_disk` for every replica: they must choose the same (node, disk), including when
/// the fleet is full and the choice falls back to the storage rules on every disk.
fn same_choices(hosts: usize, zones: usize, closed: bool, rules: StorageRules, seed: u64) {
    let (topo, mut free) = fleet(hosts, zones, closed, seed);
    let alive = vec![true; hosts];
    let mut index = RoomIndex::new(&topo, &free);
    let mut stranded = 0;
    let mut placed = 0;
    for i in 0..hosts * 40 {
        let size = [60e9, 200e9, 500e9, 80e9][i % 4];
        let mut vol = Volume {
            vm: i,
            size,
            data: size * 0.6,
            replicas: Vec::new(),
            attached: true,
            selector: 0,
        };
        for k in 0..3 {
            let draw = (i as u64) << 8 | k as u64;
            let want = pick_disk(&vol, &free, &topo, &rules, &alive, draw);
            let got = index.pick(&vol, &free, &topo, &rules, &alive, draw);
            assert_eq!(got, want, "volume {i}, replica {k}, seed {seed}");
            match got {
                Some((n, d)) => {
                    free.add_replica(&topo, n, d, &vol);
                    index.set(n, free.node_room[n]);
                    vol.replicas.push((n, d));
                    placed += 1;
                }
                None => stranded += 1,
            }
        }
        if stranded > 200 {
            break;
        }
    }
    assert!(placed > hosts, "the fleet took replicas ({placed})");
    assert!(stranded > 0, "the fleet filled up");
}

#[test]
fn the_index_chooses_what_pick_disk_chooses() {
    let p = Platform::default();
    let rules = StorageRules::from(&p);
    for (seed, (hosts, zones)) in [(300, 1), (300, 3), (200, 40), (130, 130), (70, 2)]
        .into_iter()
        .enumerate()
    {
        same_choices(hosts, zones, seed % 2 == 1, rules, seed as u64);
    }
    let hard_zones = StorageRules {
        zone_soft: false,
        ..rules
    };
    same_choices(150, 4, true, hard_zones, 7);
    let hard_nodes = StorageRules {
        node_soft: false,
        disk_soft: true,
        ..rules
    };
    same_choices(150, 2, false, hard_nodes, 8);
    let soft = StorageRules {
        zone_soft: true,
        node_soft: true,
        disk_soft: true,
        ..rules
    };
    same_choices(5, 1, false, soft, 9);
}
