//! Tests of the prediction: the tier order, the image and its backing file, the driver's
//! ten minutes, measured segments, and the pre-flight.

// The model's times are sums of whole seconds: exact.
#![allow(clippy::float_cmp)]

use std::collections::BTreeMap;

use super::model::*;
use super::{machine_pools, predict, preflight};
use crate::simulate::scenario::Pool;

fn pool(name: &str, count: u32, anti: bool) -> Pool {
    Pool {
        name: name.into(),
        count,
        vcpu: 4.0,
        memory_gib: 8.0,
        disks_gib: vec![60.0],
        anti_affinity: anti,
        running: true,
    }
}

/// The reference design's standard shape (3 control plane + 3 workers) on 24 nodes of 4
/// disks, nothing in flight.
pub(crate) fn inputs(kind: ImageKind, installs: bool, agent: bool, ready: u32) -> DeliveryInputs {
    DeliveryInputs {
        shape: "standard".into(),
        pools: machine_pools(&[pool("cp", 3, true), pool("workers", 3, false)]),
        image: ImageFacts {
            name: Some("golden".into()),
            kind: Given::new(kind, "test"),
            installs_packages: Given::new(installs, "test"),
            guest_agent: Given::new(agent, "test"),
            size_bytes: Given::new(3.5e9, "test"),
            on_disks: Given::new(OnDisks { ready, disks: 96 }, "test"),
        },
        storage: Storage {
            stream_mbps: 100.0,
            disk_read_mbps: 2000.0,
            node_link_mbps: 6250.0,
            replicas: 3,
            nodes: 24,
            rebuild_streams_per_node: Given::new(0.0, "test"),
        },
        load: Load {
            deliveries_in_flight: Given::new(0, "test"),
            vms_in_flight: 0,
        },
        network: NetworkFacts {
            dhcp: None,
            free_addresses: None,
        },
        concurrent: 1,
        replicas_without_room: Some(0),
        target_s: Given::new(900.0, "test"),
    }
}

/// Three machines with every role (one pool), as in rancher/rancher#39109.
pub(crate) fn all_roles(kind: ImageKind) -> DeliveryInputs {
    let mut i = inputs(kind, false, true, 96);
    i.pools = machine_pools(&[pool("all", 3, false)]);
    i
}

fn keys(p: &Prediction) -> Vec<&str> {
    p.critical_path.iter().map(|s| s.source.as_str()).collect()
}

#[test]
fn a_prepared_image_on_every_disk_follows_rancher_s_tiers() {
    let p = predict(&inputs(ImageKind::Prepared, false, true, 96), None);
    // 10 + 15 + 30 + 45 + 60 = 160 s to the init node's IP; its plan, check-in (8) and
    // RKE2 (80) to 248; the cluster agent (62) and the join URL (16) to 326; the workers'
    // check-in and RKE2 agent (8 + 60) to 394; Ready 10 s later.
    assert_eq!(p.total_s, Some(404.0));
    assert_eq!(
        keys(&p),
        [
            "rancher_create",
            "provision_job",
            "root_disk",
            "agent_start_prepared",
            "ip_report",
            "agent_checkin",
            "rke2_init",
            "cluster_agent",
            "join_url",
            "agent_checkin",
            "rke2_worker",
            "ready"
        ]
    );
    let at: Vec<f64> = p.milestones.iter().map(|m| m.at_s).collect();
    assert_eq!(at, [0.0, 10.0, 160.0, 248.0, 384.0, 394.0, 404.0]);
    assert!(p.within_target);
    assert!(
        p.low_s.unwrap() < 404.0 && p.high_s.unwrap() > 404.0,
        "{p:?}"
    );
    // The path is contiguous: each step starts where the one before ended.
    for w in p.critical_path.windows(2) {
        assert_eq!(w[0].end_s, w[1].start_s, "{w:?}");
    }
    assert_eq!(p.critical_path[6].machine.as_deref(), Some("cp-1"));
    assert_eq!(p.critical_path[10].machine.as_deref(), Some("workers-1"));
}

#[test]
fn a_generic_boot_takes_eight_minutes_and_can_pass_the_driver_s_ten() {
    let p = predict(&inputs(ImageKind::Generic, true, true, 96), None);
    // 55 + 480 + 60 = 595 s to the IP, then as above.
    assert_eq!(p.total_s, Some(839.0));
    assert!(p.within_target);
    assert!(keys(&p).contains(&"cloud_init_generic"));
    // At the slow end, ten minutes of cloud-init and two of IP pass the driver's ten.
    assert_eq!(p.high_s, None);
    let f = preflight(&inputs(ImageKind::Generic, true, true, 96), &p);
    let kinds: Vec<(&str, Severity)> = f.stalls.iter().map(|s| (s.kind, s.severity)).collect();
    assert!(
        kinds.contains(&("boot-past-driver-limit", Severity::Risk)),
        "{kinds:?}"
    );
}

#[test]
fn no_guest_agent_is_never_and_the_preflight_says_why() {
    let inp = inputs(ImageKind::Generic, false, false, 96);
    let p = predict(&inp, None);
    assert_eq!(p.total_s, None);
    assert!(!p.within_target);
    assert!(p.never.as_deref().unwrap().contains("never report an IP"));
    let f = preflight(&inp, &p);
    assert_eq!(f.stalls[0].kind, "no-guest-agent");
    assert_eq!(f.stalls[0].severity, Severity::Blocks);
    assert!(f.stalls.iter().any(|s| s.kind == "cluster-agent"));
    assert_eq!(f.not_checked.len(), 2, "{:?}", f.not_checked);
}

#[test]
fn a_prepared_image_whose_user_data_installs_packages_boots_like_a_generic_one() {
    let p = predict(&inputs(ImageKind::Prepared, true, true, 96), None);
    // The IP comes early (the agent is in the image); the system agent only after the
    // packages: 55 + 480 = 535, check-in 543, RKE2 623, agent 685, join 701, worker 769.
    assert_eq!(p.total_s, Some(779.0));
    assert!(keys(&p).contains(&"cloud_init_generic"));
    assert!(p.inputs[0].value.contains("boots like a generic one"));
}

#[test]
fn a_backing_image_on_one_disk_is_copied_first_and_a_long_copy_outlasts_the_driver() {
    let p = predict(&inputs(ImageKind::Prepared, false, true, 1), None);
    // 3.5 GB at 100 MB/s: 35 s before the root disk, so 439 s in all.
    assert_eq!(p.total_s, Some(439.0));
    assert!(
        p.critical_path
            .iter()
            .any(|s| s.what.starts_with("backing image copied"))
    );
    let f = preflight(&inputs(ImageKind::Prepared, false, true, 1), &p);
    let s = f
        .stalls
        .iter()
        .find(|s| s.kind == "backing-image-missing")
        .unwrap();
    assert_eq!(s.severity, Severity::Delays);
    // 150 GB: 1500 s of copy. The VM is not Running in ten minutes twice (600 + 60 each),
    // the third round finds 180 s left.
    let mut big = inputs(ImageKind::Prepared, false, true, 1);
    big.image.size_bytes.value = 150e9;
    let p = predict(&big, None);
    let recreated = p
        .critical_path
        .iter()
        .filter(|s| s.source == "recreate")
        .count();
    assert_eq!(recreated, 2);
    assert_eq!(p.total_s, Some(404.0 + 2.0 * 660.0 + 180.0));
    let f = preflight(&big, &p);
    assert!(
        f.stalls
            .iter()
            .any(|s| s.message.contains("machines are recreated while it runs"))
    );
}

#[test]
fn a_burst_needs_more_copies_and_more_vms_at_once() {
    let one = predict(&inputs(ImageKind::Prepared, false, true, 1), None);
    let mut many = inputs(ImageKind::Prepared, false, true, 1);
    many.concurrent = 12;
    let p = predict(&many, None);
    assert!(p.total_s.unwrap() > one.total_s.unwrap(), "{p:?}");
    assert_eq!(p.concurrent, 12);
    let f = preflight(&many, &p);
    assert!(f.stalls.iter().any(|s| s.kind == "many-in-flight"));
    // With the file on every disk, a burst changes nothing the model shares.
    let mut ready = inputs(ImageKind::Prepared, false, true, 96);
    ready.concurrent = 12;
    assert_eq!(predict(&ready, None).total_s, Some(404.0));
}

#[test]
fn measured_segments_replace_the_model_and_say_so() {
    let mut m = Measured {
        deliveries: 5,
        statistic: "median of the last 5".into(),
        segments: BTreeMap::new(),
    };
    m.segments.insert(Milestone::InfrastructureReady, 300.0);
    let p = predict(&inputs(ImageKind::Prepared, false, true, 96), Some(&m));
    // The model's segment to every machine's infrastructure is 150 s; measured 300.
    assert_eq!(p.total_s, Some(554.0));
    let infra = &p.milestones[2];
    assert_eq!(infra.at_s, 310.0);
    assert!(
        infra
            .from
            .starts_with("measured: median of the last 5 of 5")
    );
    assert_eq!(p.milestones[1].from, "model");
    let measured: Vec<&Step> = p
        .critical_path
        .iter()
        .filter(|s| s.source.starts_with("measured"))
        .collect();
    assert_eq!(measured.len(), 1);
    assert_eq!((measured[0].start_s, measured[0].end_s), (10.0, 310.0));
    let root = p
        .constants
        .iter()
        .find(|c| c.constant.key == "root_disk")
        .unwrap();
    assert_eq!(root.used, "replaced: its segment is measured");
    let init = p
        .constants
        .iter()
        .find(|c| c.constant.key == "rke2_init")
        .unwrap();
    assert_eq!(init.used, "default, on the critical path");
    assert!(
        p.measured
            .as_deref()
            .unwrap()
            .contains("to every machine's")
    );
}

#[test]
fn the_median_of_the_last_deliveries_per_segment() {
    let d = |infra: f64, ready: f64| {
        BTreeMap::from([
            (Milestone::MachinesCreated, 10.0),
            (Milestone::InfrastructureReady, infra),
            (Milestone::ClusterReady, ready),
        ])
    };
    let all = vec![
        d(900.0, 2000.0),
        d(100.0, 400.0),
        d(200.0, 500.0),
        d(160.0, 450.0),
    ];
    let m = Measured::median_of_last(&all, 3);
    assert_eq!(m.deliveries, 3);
    assert_eq!(m.statistic, "median of the last 3");
    // Infrastructure: 90, 190, 150 after the machines: median 150. Ready: from the latest
    // milestone before it (infrastructure): 300, 300, 290: median 300.
    assert_eq!(m.segments[&Milestone::InfrastructureReady], 150.0);
    assert_eq!(m.segments[&Milestone::ClusterReady], 300.0);
    assert_eq!(m.segments[&Milestone::MachinesCreated], 10.0);
    assert!(!m.segments.contains_key(&Milestone::InitNodeReady));
}

#[test]
fn an_etcd_only_init_node_publishes_its_join_url_before_the_cluster_agent() {
    let mut inp = inputs(ImageKind::Prepared, false, true, 96);
    let r = |etcd, control_plane, worker| Roles {
        etcd,
        control_plane,
        worker,
    };
    inp.pools = vec![
        MachinePool {
            name: "etcd".into(),
            count: 3,
            roles: r(true, false, false),
        },
        MachinePool {
            name: "cp".into(),
            count: 2,
            roles: r(false, true, false),
        },
        MachinePool {
            name: "w".into(),
            count: 2,
            roles: r(false, false, true),
        },
    ];
    let p = predict(&inp, None);
    // Init healthy 248; join URL 264; control plane check-in and RKE2 (8 + 50) 322; its
    // agent 384, the workers' plans 400, their check-in and RKE2 468; Ready 478.
    assert_eq!(p.total_s, Some(478.0));
    let k = keys(&p);
    let pos = |key: &str| k.iter().position(|x| *x == key).unwrap();
    assert!(pos("join_url") < pos("rke2_join"));
    assert!(pos("rke2_join") < pos("cluster_agent"));
    // A shape with no worker never comes up.
    inp.pools.pop();
    let p = predict(&inp, None);
    assert!(p.never.as_deref().unwrap().contains("clusterIsSane"));
}

#[test]
fn the_catalogue_s_roles() {
    let one = machine_pools(&[pool("all", 1, false)]);
    assert_eq!(
        one[0].roles,
        Roles {
            etcd: true,
            control_plane: true,
            worker: true
        }
    );
    let two = machine_pools(&[pool("a", 3, false), pool("b", 3, false)]);
    assert!(two[0].roles.control_plane && !two[0].roles.worker);
    assert!(!two[1].roles.etcd && two[1].roles.worker);
    let anti = machine_pools(&[pool("w", 3, false), pool("cp", 3, true)]);
    assert!(anti[1].roles.etcd && !anti[0].roles.etcd);
}

#[test]
fn user_data_installs_packages_and_the_guest_agent() {
    use super::inputs::read_user_data;
    let catalogue = "#cloud-config\npackage_update: true\npackages:\n  - qemu-guest-agent\nruncmd:\n  - - systemctl\n    - enable\n    - '--now'\n    - qemu-guest-agent.service\n";
    assert_eq!(read_user_data(catalogue), (true, true));
    assert_eq!(
        read_user_data("#cloud-config\npackages:\n  - [curl, '8.5']\n"),
        (true, false)
    );
    assert_eq!(
        read_user_data("#cloud-config\nruncmd:\n  - echo hi\n"),
        (false, false)
    );
    assert_eq!(read_user_data("not: [yaml"), (false, false));
}
