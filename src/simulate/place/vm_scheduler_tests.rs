use super::*;
use crate::simulate::fleet::Host;
use crate::simulate::place::mix;

/// A fleet of two node sizes whose free CPU and memory come in a few steps, so that many
/// nodes tie exactly, as in a fleet of identical nodes running the same clusters.
fn tied_fleet(hosts: usize) -> (Topology, Free) {
    let hs: Vec<Host> = (0..hosts)
        .map(|i| Host {
            name: format!("h{i}"),
            rack: 0,
            cpu: if i % 5 == 0 { 30.0 } else { 126.0 },
            mem_gib: if i % 5 == 0 { 120.0 } else { 504.0 },
            disks: vec![1e12],
        })
        .collect();
    let topo = Topology::build(hs, vec!["r".into()], &[None]);
    let free = Free {
        cpu: (0..hosts)
            .map(|i| topo.hosts[i].cpu - [0.0, 4.5, 9.0][(mix(i as u64) % 3) as usize])
            .collect(),
        mem: (0..hosts)
            .map(|i| topo.hosts[i].mem_gib - [0.0, 48.25, 96.5][(mix(i as u64 + 7) % 3) as usize])
            .collect(),
        disk: Vec::new(),
        node_room: Vec::new(),
    };
    (topo, free)
}

fn vm(k: usize) -> Vm {
    let (cpu, mem) = [(0.25, 8.25), (0.5, 32.25), (1.0, 64.25)][k % 3];
    Vm {
        cluster: k / 6,
        pool: "p".into(),
        group: k.is_multiple_of(2).then_some((k / 6) as u32),
        vcpu: cpu * 16.0,
        mem_gib: mem,
        cpu_req: cpu,
        mem_req: mem,
        mem_actual: mem,
        volumes: Vec::new(),
        running: true,
    }
}

/// Restarting a few hundred VMs one after another on a fleet full of exact ties, some
/// nodes down and anti-affinity groups in the way: the index chooses the node the plain
/// scan of every node chooses, every time, as the changed nodes pile up and after the
/// index is brought up to date (with the nodes that are down left out of it or not).
#[test]
fn the_score_index_chooses_what_the_plain_scan_chooses_among_ties() {
    let hosts = 400;
    let (topo, mut free) = tied_fleet(hosts);
    let mut groups: Vec<Vec<u32>> = (0..hosts)
        .map(|i| vec![(mix(i as u64 + 99) % 40) as u32])
        .collect();
    let mut alive = vec![true; hosts];
    for a in alive.iter_mut().step_by(37) {
        *a = false;
    }
    let mut index = ScoreIndex::new(&topo, &free);
    let (mut changed, mut is_changed) = (Vec::new(), vec![false; hosts]);
    let mut placed = 0;
    for k in 0..600 {
        let v = vm(k);
        let want = pick_node(&v, &free, &topo, &groups, &[], &alive);
        let got = pick_node_indexed(
            &v,
            &free,
            &topo,
            &groups,
            &[],
            &alive,
            &index,
            &changed,
            &is_changed,
        );
        assert_eq!(got, want, "VM {k}");
        let Some(n) = got else { continue };
        placed += 1;
        free.cpu[n] -= v.cpu_req;
        free.mem[n] -= v.mem_req;
        if let Some(g) = v.group {
            groups[n].push(g);
        }
        if !is_changed[n] {
            is_changed[n] = true;
            changed.push(n);
        }
        if changed.len() > 64 {
            // Brought up to date with the nodes that are down left out, or kept.
            index = if k.is_multiple_of(2) {
                index.updated_among(&topo, &free, &changed, &alive)
            } else {
                index.updated(&topo, &free, &changed)
            };
            for c in changed.drain(..) {
                is_changed[c] = false;
            }
        }
    }
    assert!(placed > 300, "most VMs found a node ({placed})");
}
