//! A running fleet read from a dump: a generated kubectl `kind: List` JSON of 1,000 nodes,
//! 30,000 VMIs, 30,000 Longhorn volumes and 90,000 replicas (plus Longhorn nodes), read,
//! adopted as a placement, and given its single-failure (every node, every zone) headroom
//! verdict; and the reference size (27 nodes, 360 VMs). Targets (issue 12): under 2 s and
//! under 1 GiB for the large one, under 0.3 s for the reference one, on 2 cores.
//! Run: `cargo bench --bench live_dump`.

use std::io::Write as _;
use std::time::Instant;

use rackplan::simulate::{headroom, live_fleet, scenario::Platform};

fn write_dump(path: &std::path::Path, nodes: usize, vms: usize) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    write!(f, "{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[").unwrap();
    let mut first = true;
    let mut item = |f: &mut std::io::BufWriter<std::fs::File>, v: serde_json::Value| {
        if !first {
            write!(f, ",").unwrap();
        }
        first = false;
        serde_json::to_writer(&mut *f, &v).unwrap();
    };
    let zones = (nodes / 40).max(3);
    for n in 0..nodes {
        item(
            &mut f,
            serde_json::json!({"apiVersion":"v1","kind":"Node","metadata":{"name":format!("n{n}"),
            "labels":{"topology.kubernetes.io/zone":format!("z{}", n % zones)}},
            "status":{"allocatable":{"cpu":"126","memory":"760Gi","pods":"200"},"conditions":[{"type":"Ready","status":"True"}]}}),
        );
        item(
            &mut f,
            serde_json::json!({"apiVersion":"longhorn.io/v1beta2","kind":"Node","metadata":{"name":format!("n{n}"),"namespace":"longhorn-system"},
            "spec":{"allowScheduling":true,"disks":{"d0":{"path":"/a","allowScheduling":true,"storageReserved":0},"d1":{"path":"/b","allowScheduling":true,"storageReserved":0}}},
            "status":{"diskStatus":{"d0":{"diskUUID":format!("u{n}-0"),"storageMaximum":7.68e12,"storageAvailable":7.0e12,"storageScheduled":0},
                                    "d1":{"diskUUID":format!("u{n}-1"),"storageMaximum":7.68e12,"storageAvailable":7.0e12,"storageScheduled":0}}}}),
        );
    }
    for v in 0..vms {
        let c = v / 6;
        let node = (c * 7 + v % 6) % nodes;
        let cp = v % 6 < 3;
        let mut spec = serde_json::json!({"domain":{"cpu":{"cores":4},"resources":{"requests":{"cpu":"250m","memory":"5461Mi"},"limits":{"cpu":"4","memory":"8Gi"}}},
            "volumes":[{"name":"d","persistentVolumeClaim":{"claimName":format!("c{v}")}}]});
        if cp {
            spec["affinity"] = serde_json::json!({"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
                {"labelSelector":{"matchLabels":{"harvesterhci.io/machineSetName":format!("t{c}-cp")}},"topologyKey":"kubernetes.io/hostname"}]}});
        }
        item(
            &mut f,
            serde_json::json!({"apiVersion":"kubevirt.io/v1","kind":"VirtualMachineInstance",
            "metadata":{"name":format!("vm{v}"),"namespace":"tenants"},"spec":spec,"status":{"phase":"Running","nodeName":format!("n{node}")}}),
        );
        item(
            &mut f,
            serde_json::json!({"apiVersion":"longhorn.io/v1beta2","kind":"Volume","metadata":{"name":format!("pvc{v}"),"namespace":"longhorn-system"},
            "spec":{"size":"64424509440","numberOfReplicas":3},"status":{"state":"attached","robustness":"healthy","kubernetesStatus":{"pvcName":format!("c{v}")}}}),
        );
        for r in 0..3 {
            let rn = (node + r * 3) % nodes;
            item(
                &mut f,
                serde_json::json!({"apiVersion":"longhorn.io/v1beta2","kind":"Replica","metadata":{"name":format!("pvc{v}-r{r}"),"namespace":"longhorn-system"},
                "spec":{"volumeName":format!("pvc{v}"),"nodeID":format!("n{rn}"),"diskID":format!("u{rn}-{}", v % 2)},"status":{"currentState":"running"}}),
            );
        }
    }
    write!(f, "]}}").unwrap();
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_string)
        })
        .and_then(|l| {
            l.split_whitespace()
                .nth(1)
                .and_then(|k| k.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    println!("live dump: read, adopt, single-failure headroom (every node and every zone)");
    println!(
        "  {:>6} {:>7} {:>8} {:>8} {:>8} {:>10} {:>8} {:>9}",
        "nodes", "VMIs", "MB", "read s", "adopt s", "headroom s", "total s", "verdict"
    );
    for (nodes, vms) in [(27, 360), (1000, 30_000)] {
        let p = dir.path().join(format!("dump-{nodes}.json"));
        write_dump(&p, nodes, vms);
        let mb = std::fs::metadata(&p).unwrap().len() as f64 / 1e6;
        let t0 = Instant::now();
        let state = rackplan::live::read(&p).unwrap();
        let t1 = Instant::now();
        let fleet = live_fleet::adopt(&state, &Platform::default()).unwrap();
        let t2 = Instant::now();
        let h = headroom::analyse(&fleet.placement);
        let t3 = Instant::now();
        println!(
            "  {:>6} {:>7} {:>8.1} {:>8.3} {:>8.3} {:>10.3} {:>8.3} {:>9}",
            nodes,
            state.vmis.len(),
            mb,
            (t1 - t0).as_secs_f64(),
            (t2 - t1).as_secs_f64(),
            (t3 - t2).as_secs_f64(),
            (t3 - t0).as_secs_f64(),
            h.verdict
        );
    }
    println!("  peak RSS of the run: {:.0} MiB", peak_rss_mib());
}
