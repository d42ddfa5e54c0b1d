//! The model against published provisioning timelines: Rancher's provisioning log as
//! four issue threads quote it, each timestamp read off the thread. Each fixture checks
//! that the model meets the log's phases in the log's order, and that each span the log
//! times lies within the model's range for it (every constant at its low and its high
//! end). None of the threads shows a whole delivery (each stops where its bug starts), so
//! the total is checked on the timeline they make together: the spans of a first
//! provisioning, each taken from the threads that time it, summed at their shortest and
//! their longest.

use super::constants::{End, K, get};
use super::model::{ImageKind, Prediction};
use super::predict;

/// One published log: (seconds since its first line, what the line says).
struct Timeline {
    source: &'static str,
    events: &'static [(f64, &'static str)],
}

/// harvester#4607: node driver, Rancher v2.7.8, Harvester v1.2.1-rc1, a first provisioning.
const H4607: Timeline = Timeline {
    source: "harvester#4607",
    events: &[
        (0.0, "10:24:10 waiting for viable init node"),
        (
            164.0,
            "10:26:54 configuring bootstrap node(s): waiting for agent to check in and apply initial plan",
        ),
        (
            170.0,
            "10:27:00 waiting for probes: calico, etcd, kube-apiserver, ...",
        ),
        (
            256.0,
            "10:28:26 configuring bootstrap node(s) (probes still running)",
        ),
    ],
};

/// harvester#4358: node driver, an etcd machine added to a running cluster.
const H4358: Timeline = Timeline {
    source: "harvester#4358",
    events: &[
        (
            0.0,
            "11:54:49 waiting for machine driver config to be saved",
        ),
        (
            122.0,
            "11:56:51 configuring etcd node(s): creating server (HarvesterMachine)",
        ),
        (
            126.0,
            "11:56:55 waiting for agent to check in and apply initial plan",
        ),
        (
            134.0,
            "11:57:03 waiting for probes: calico, etcd, kube-apiserver, ...",
        ),
        (
            182.0,
            "11:57:51 configuring bootstrap node(s): waiting for probes (joined)",
        ),
    ],
};

/// harvester#3328: RKE2 custom cluster on Harvester VMs (their VMs already up).
const H3328: Timeline = Timeline {
    source: "harvester#3328",
    events: &[
        (
            0.0,
            "11:37:39 configuring bootstrap node(s): waiting for agent to check in and apply initial plan",
        ),
        (70.0, "11:38:49 waiting for probes: etcd, kubelet"),
        (
            86.0,
            "11:39:05 non-ready bootstrap machine(s) and join url to be available",
        ),
        (
            96.0,
            "11:39:15 configuring control plane node(s): waiting for agent to check in",
        ),
    ],
};

/// rancher/rancher#39109: K3s by a node driver, three machines with every role.
const R39109: Timeline = Timeline {
    source: "rancher/rancher#39109",
    events: &[
        (0.0, "1:48:24 waiting for viable init node"),
        (
            26.0,
            "1:48:50 configuring bootstrap node(s): waiting for agent to check in and apply initial plan",
        ),
        (64.0, "1:49:28 waiting for probes: kube-scheduler, kubelet"),
        (74.0, "1:49:38 waiting for cluster agent to connect"),
        (
            136.0,
            "1:50:40 non-ready bootstrap machine(s) and join url to be available",
        ),
        (
            152.0,
            "1:50:56 configuring etcd node(s) (the joiners' plans)",
        ),
        (
            176.0,
            "1:51:20 configuring etcd node(s): waiting for agent to check in",
        ),
    ],
};

fn at(t: &Timeline, prefix: &str) -> f64 {
    t.events
        .iter()
        .find(|(_, l)| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("{}: no line {prefix}", t.source))
        .0
}

fn sum(keys: &[K], end: End) -> f64 {
    keys.iter().map(|k| get(*k, end)).sum()
}

/// The observed span lies in the model's range for it.
fn within(observed: f64, keys: &[K], what: &str) {
    let (lo, hi) = (sum(keys, End::Low), sum(keys, End::High));
    assert!(
        (lo..=hi).contains(&observed),
        "{what}: observed {observed} s, model {lo}-{hi} s (value {})",
        sum(keys, End::Value)
    );
}

/// A machine's creation to its infrastructure ready, with a prepared-like boot (the logs
/// do not name their image; a generic boot of eight minutes would not fit them).
const VM_TO_INFRA: [K; 4] = [
    K::ProvisionJob,
    K::RootDisk,
    K::AgentStartPrepared,
    K::IpReport,
];

fn prepared() -> Prediction {
    predict(
        &super::predict_tests::inputs(ImageKind::Prepared, false, true, 96),
        None,
    )
}

/// The model's critical path keys, in order.
fn order(p: &Prediction) -> Vec<&str> {
    p.critical_path.iter().map(|s| s.source.as_str()).collect()
}

fn before(p: &Prediction, a: &str, b: &str) {
    let k = order(p);
    let pos = |x: &str| {
        k.iter()
            .position(|y| *y == x)
            .unwrap_or_else(|| panic!("{x} in {k:?}"))
    };
    assert!(pos(a) < pos(b), "{a} before {b}: {k:?}");
}

#[test]
fn harvester_4607_machines_to_the_init_node_s_probes() {
    let t = &H4607;
    within(
        at(t, "10:26:54"),
        &VM_TO_INFRA,
        "machines to infrastructure",
    );
    within(
        at(t, "10:27:00") - at(t, "10:26:54"),
        &[K::AgentCheckin],
        "check-in",
    );
    // The probes were still running 86 s on: the model's range reaches past that.
    assert!(get(K::Rke2Init, End::High) >= at(t, "10:28:26") - at(t, "10:27:00"));
    let p = prepared();
    before(&p, "ip_report", "agent_checkin");
    before(&p, "agent_checkin", "rke2_init");
}

#[test]
fn harvester_4358_an_etcd_machine_joins() {
    let t = &H4358;
    within(at(t, "11:56:55"), &VM_TO_INFRA, "machine to infrastructure");
    within(
        at(t, "11:57:03") - at(t, "11:56:55"),
        &[K::AgentCheckin],
        "check-in",
    );
    within(
        at(t, "11:57:51") - at(t, "11:56:55"),
        &[K::AgentCheckin, K::Rke2Join],
        "joiner plan to healthy",
    );
}

#[test]
fn harvester_3328_the_init_node_then_the_joiners() {
    let t = &H3328;
    within(
        at(t, "11:39:05") - at(t, "11:37:39"),
        &[K::AgentCheckin, K::Rke2Init],
        "init plan to healthy",
    );
    within(
        at(t, "11:39:15") - at(t, "11:39:05"),
        &[K::JoinUrl],
        "join URL",
    );
    let p = prepared();
    before(&p, "rke2_init", "join_url");
}

#[test]
fn rancher_39109_the_cluster_agent_before_the_joiners() {
    let t = &R39109;
    within(
        at(t, "1:49:38") - at(t, "1:48:50"),
        &[K::AgentCheckin, K::Rke2Init],
        "init plan to healthy",
    );
    within(
        at(t, "1:50:40") - at(t, "1:49:38"),
        &[K::ClusterAgent],
        "cluster agent",
    );
    within(
        at(t, "1:50:56") - at(t, "1:50:40"),
        &[K::JoinUrl],
        "join URL",
    );
    within(
        at(t, "1:51:20") - at(t, "1:50:56"),
        &[K::AgentCheckin],
        "joiner check-in",
    );
    // The order of the log: init probes, the cluster agent, the join URL, the joiners.
    let p = prepared();
    before(&p, "rke2_init", "cluster_agent");
    before(&p, "cluster_agent", "join_url");
    let joiners = predict(&super::predict_tests::all_roles(ImageKind::Prepared), None);
    before(&joiners, "join_url", "rke2_join");
}

/// The first provisioning the threads time together: machines to infrastructure
/// (#4607, #4358), check-in (#4607, #4358, #39109), init node to healthy (#3328,
/// #39109), cluster agent (#39109), join URL (#39109, #3328), a joiner to healthy
/// (#4358). The model's total from the machines' creation to the last joiner healthy lies
/// between the spans summed at their shortest and at their longest.
#[test]
fn the_total_lies_within_the_threads_spread() {
    let spans: [(f64, f64); 6] = [
        (at(&H4358, "11:56:55"), at(&H4607, "10:26:54")),
        (
            at(&H4607, "10:27:00") - at(&H4607, "10:26:54"),
            at(&R39109, "1:51:20") - at(&R39109, "1:50:56"),
        ),
        (
            at(&R39109, "1:49:38") - at(&R39109, "1:48:50"),
            at(&H3328, "11:39:05") - at(&H3328, "11:37:39"),
        ),
        (
            at(&R39109, "1:50:40") - at(&R39109, "1:49:38"),
            at(&R39109, "1:50:40") - at(&R39109, "1:49:38"),
        ),
        (
            at(&H3328, "11:39:15") - at(&H3328, "11:39:05"),
            at(&R39109, "1:50:56") - at(&R39109, "1:50:40"),
        ),
        (
            at(&H4358, "11:57:51") - at(&H4358, "11:56:55"),
            at(&H4358, "11:57:51") - at(&H4358, "11:56:55"),
        ),
    ];
    let lo: f64 = spans.iter().map(|s| s.0).sum();
    let hi: f64 = spans.iter().map(|s| s.1).sum();
    let p = predict(&super::predict_tests::all_roles(ImageKind::Prepared), None);
    let created = p.milestones[1].at_s;
    let joined = p.milestones[4].at_s;
    let model = joined - created;
    assert!(
        (lo..=hi).contains(&model),
        "model {model} s, threads {lo}-{hi} s"
    );
}
