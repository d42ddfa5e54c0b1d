//! The critical path of one delivery, in Rancher's order.
//!
//! Rancher's planner (rancher `pkg/capr/planner/planner.go`) takes a cluster in tiers:
//! - `Process` waits for at least one etcd, one control-plane and one worker machine
//!   (`clusterIsSane`), then `fullReconcile`.
//! - `electInitNode` (`initnode.go`) picks the init node among the etcd machines whose
//!   infrastructure is ready (`planentry.go`, `canBeInitNode`); the bootstrap tier gives it
//!   its plan.
//! - The joiners (the other etcd and control-plane machines, `etcdTier` and
//!   `controlPlaneTier`) get their plans once the init node publishes its join URL. A first
//!   plan is written at once for every machine of a tier (`reconcile`: `entry.Plan == nil`
//!   skips the concurrency limit), so in a first provisioning they join together.
//! - A control-plane node's join URL comes from its Machine's node info
//!   (`store.go`, `setMachineJoinURL`), which CAPI reads through the cluster agent: with an
//!   init node that is also control plane, the joiners wait for the cluster agent to
//!   connect (`reconcile` reports "waiting for cluster agent to connect" meanwhile), as
//!   rancher/rancher#39109's log shows. An etcd-only init node publishes it from its plan
//!   output.
//! - Worker-only machines get their plans after a control-plane node has a join URL and
//!   the control plane is marked initialized.
//!
//! Every machine of every pool is created at once (one machine-provision Job each), so the
//! machines' own steps ([`super::machine`]) run in parallel; a node's plan is applied once
//! it is written and the node's system agent runs.

use super::constants::{End, K, TABLE};
use super::machine::{Copies, Ev, MachineTimes, Never, boots_generic, copies, machine};
use super::model::{
    ConstantUse, DeliveryInputs, InputUse, Measured, Milestone, MilestoneAt, Prediction, Step,
};

/// The model's milestones (in [`Milestone::ALL`] order), each with the steps that lead to
/// it; `Err` says why the delivery never finishes.
fn run(inp: &DeliveryInputs, end: End, copies: &Copies) -> Result<Vec<Ev>, Never> {
    let pools = &inp.pools;
    for (role, has) in [
        ("etcd", pools.iter().any(|p| p.count > 0 && p.roles.etcd)),
        (
            "control-plane",
            pools.iter().any(|p| p.count > 0 && p.roles.control_plane),
        ),
        (
            "worker",
            pools.iter().any(|p| p.count > 0 && p.roles.worker),
        ),
    ] {
        if !has {
            return Err(Never(format!(
                "the shape has no {role} machine: Rancher waits for at least one etcd, control-plane and worker node (planner.go clusterIsSane)"
            )));
        }
    }
    let zero = Ev::zero();
    let created = zero.after(
        "Rancher creates the cluster's machines",
        None,
        K::RancherCreate,
        end,
    );
    let times = |label: &str| machine(inp, end, copies, &created, label);
    let init_pool = pools
        .iter()
        .find(|p| p.count > 0 && p.roles.etcd)
        .expect("checked above");
    let init_label = format!("{}-1", init_pool.name);
    let init = times(&init_label)?;
    let apply = |written: &Ev, m: &MachineTimes, label: &str| {
        Ev::later(written, &m.agent).after(
            "system agent checks in, applies the plan",
            Some(label),
            K::AgentCheckin,
            end,
        )
    };
    // The init node's plan is written once its infrastructure is ready.
    let h0 = apply(&init.infra, &init, &init_label).after(
        "init node: RKE2 installed, probes healthy",
        Some(&init_label),
        K::Rke2Init,
        end,
    );
    // Every machine but the init node, as (label, roles, times): one per pool stands for
    // the pool (the model's machines of a pool are alike).
    let mut others = Vec::new();
    for p in pools.iter().filter(|p| p.count > 0) {
        let first = if std::ptr::eq(p, init_pool) { 2 } else { 1 };
        if p.count >= first {
            let label = format!("{}-{first}", p.name);
            others.push((label.clone(), p.roles, times(&label)?));
        }
    }
    let joined = |written: &Ev, label: &str, m: &MachineTimes, what: &str, k: K| {
        let h = apply(written, m, label).after(what, Some(label), k, end);
        Ev::later(&h, &m.infra)
    };
    let join_what = "joiner: RKE2 joins, probes healthy";
    let is_joiner = |r: &super::model::Roles| r.etcd || r.control_plane;
    // The cluster agent, then a control-plane node's join URL from its node info.
    let agent_then_join = |from: &Ev, what: &str| {
        let agent = from.after("cluster agent connects", None, K::ClusterAgent, end);
        let j = agent.after(what, None, K::JoinUrl, end);
        (agent, j)
    };
    let (agent, workers_written, cp_healthy) = if init_pool.roles.control_plane {
        let (agent, j) = agent_then_join(&h0, "join URL published, plans written");
        let cp: Vec<Ev> = others
            .iter()
            .filter(|(_, r, _)| is_joiner(r))
            .map(|(l, _, m)| joined(&j, l, m, join_what, K::Rke2Join))
            .collect();
        (agent, j, cp)
    } else {
        // An etcd-only init node publishes its join URL from its plan's output; the
        // cluster agent comes with the first control-plane node.
        let je = h0.after(
            "join URL published (etcd-only init node)",
            None,
            K::JoinUrl,
            end,
        );
        let joins: Vec<(bool, Ev)> = others
            .iter()
            .filter(|(_, r, _)| is_joiner(r))
            .map(|(l, r, m)| (r.control_plane, joined(&je, l, m, join_what, K::Rke2Join)))
            .collect();
        let first_cp = joins
            .iter()
            .filter(|(cp, _)| *cp)
            .map(|(_, e)| e)
            .min_by(|a, b| a.t.total_cmp(&b.t))
            .cloned()
            .expect("a control-plane machine exists");
        let (agent, j) = agent_then_join(&first_cp, "join URL published, workers' plans written");
        (agent, j, joins.into_iter().map(|(_, e)| e).collect())
    };
    let cp_ready =
        Ev::latest(std::iter::once(&agent).chain(&cp_healthy)).expect("the agent at least");
    let workers: Vec<Ev> = others
        .iter()
        .filter(|(_, r, _)| !is_joiner(r))
        .map(|(l, _, m)| {
            joined(
                &workers_written,
                l,
                m,
                "worker: RKE2 agent installed, node Ready",
                K::Rke2Worker,
            )
        })
        .collect();
    let workers_ready = Ev::latest(&workers).unwrap_or_else(|| cp_ready.clone());
    let infra =
        Ev::latest(std::iter::once(&init.infra).chain(others.iter().map(|(_, _, m)| &m.infra)))
            .expect("the init node at least");
    let ready = Ev::later(&cp_ready, &workers_ready).after(
        "Rancher marks the cluster Ready",
        None,
        K::Ready,
        end,
    );
    Ok(vec![
        zero,
        created,
        infra,
        h0,
        cp_ready,
        workers_ready,
        ready,
    ])
}

/// Milestone times made monotone: one reached before its predecessor counts as reached
/// with it.
fn monotone(evs: &[Ev]) -> Vec<f64> {
    let mut out = Vec::with_capacity(evs.len());
    let mut t = 0.0_f64;
    for e in evs {
        t = t.max(e.t);
        out.push(t);
    }
    out
}

/// Segments with the measured ones put in: the milestones' times, and which were measured.
fn with_measured(model: &[f64], measured: Option<&Measured>) -> (Vec<f64>, Vec<bool>) {
    let mut at = Vec::with_capacity(model.len());
    let mut was = Vec::with_capacity(model.len());
    let mut prev_model = 0.0;
    let mut prev = 0.0;
    for (i, &t) in model.iter().enumerate() {
        let seg = measured
            .and_then(|m| m.segments.get(&Milestone::ALL[i]))
            .filter(|x| x.is_finite() && **x >= 0.0);
        let d = seg.copied().unwrap_or(t - prev_model);
        was.push(seg.is_some());
        prev_model = t;
        prev += d;
        at.push(prev);
    }
    (at, was)
}

/// The critical path with measured segments in place of the model's steps inside them.
fn path_with_measured(
    steps: &[Step],
    model: &[f64],
    at: &[f64],
    was: &[bool],
    measured: Option<&Measured>,
) -> Vec<Step> {
    let seg_of = |end: f64| {
        model
            .iter()
            .position(|&m| m + 1e-6 >= end)
            .unwrap_or(model.len() - 1)
    };
    let mut out: Vec<Step> = Vec::new();
    let mut done = vec![false; model.len()];
    for s in steps {
        let i = seg_of(s.end_s);
        let start_of = |i: usize| if i == 0 { 0.0 } else { at[i - 1] };
        if was[i] {
            if !done[i] {
                done[i] = true;
                out.push(Step {
                    what: format!("measured: to {}", Milestone::ALL[i].words()),
                    machine: None,
                    start_s: start_of(i),
                    end_s: at[i],
                    source: format!(
                        "measured ({})",
                        measured.map_or(String::new(), |m| m.statistic.clone())
                    ),
                });
            }
            continue;
        }
        let shift = start_of(i) - if i == 0 { 0.0 } else { model[i - 1] };
        let prev_end = out.last().map_or(0.0, |p| p.end_s);
        out.push(Step {
            start_s: (s.start_s + shift).max(prev_end),
            end_s: s.end_s + shift,
            ..s.clone()
        });
    }
    out
}

fn inputs_used(inp: &DeliveryInputs, cp: &Copies) -> Vec<InputUse> {
    let i = &inp.image;
    let u = |input: &str, value: String, from: &str| InputUse {
        input: input.into(),
        value,
        from: from.into(),
    };
    let kind = match i.kind.value {
        super::model::ImageKind::Prepared => "prepared",
        super::model::ImageKind::Generic => "generic",
    };
    let mut out = vec![
        u(
            "image",
            format!(
                "{}{kind}{}",
                i.name
                    .as_deref()
                    .map(|n| format!("{n}, "))
                    .unwrap_or_default(),
                if boots_generic(inp) && i.kind.value == super::model::ImageKind::Prepared {
                    " (boots like a generic one: its user-data installs packages)"
                } else {
                    ""
                }
            ),
            &i.kind.from,
        ),
        u(
            "user-data",
            format!(
                "{}, guest agent {}",
                if i.installs_packages.value {
                    "installs packages"
                } else {
                    "installs nothing"
                },
                if i.guest_agent.value { "yes" } else { "no" }
            ),
            &if i.installs_packages.from == i.guest_agent.from {
                i.installs_packages.from.clone()
            } else {
                format!("{}; {}", i.installs_packages.from, i.guest_agent.from)
            },
        ),
        u(
            "image size",
            format!("{:.1} GB", i.size_bytes.value / 1e9),
            &i.size_bytes.from,
        ),
        u(
            "backing image on disks",
            format!(
                "{} of {}{}",
                i.on_disks.value.ready,
                i.on_disks.value.disks,
                if cp.disks > 0.0 {
                    format!(", about {:.0} disk(s) to copy to", cp.disks.ceil())
                } else {
                    String::new()
                }
            ),
            &i.on_disks.from,
        ),
        u(
            "copy stream",
            format!(
                "{:.0} MB/s, {:.1} rebuild stream(s) per node",
                inp.storage.stream_mbps, inp.storage.rebuild_streams_per_node.value
            ),
            &inp.storage.rebuild_streams_per_node.from,
        ),
        u(
            "deliveries in flight",
            format!(
                "{} ({} VMs)",
                inp.load.deliveries_in_flight.value, inp.load.vms_in_flight
            ),
            &inp.load.deliveries_in_flight.from,
        ),
    ];
    out.push(u(
        "requests together",
        inp.concurrent.to_string(),
        if inp.concurrent > 1 {
            "burst"
        } else {
            "this request"
        },
    ));
    out
}

/// The predicted time from admission to a Ready cluster, its critical path and range; a
/// measured segment replaces the model's steps inside it.
pub fn predict(inp: &DeliveryInputs, measured: Option<&Measured>) -> Prediction {
    let cp = copies(inp);
    let measured = measured.filter(|m| !m.segments.is_empty());
    let total_of = |end: End| -> Option<f64> {
        let evs = run(inp, end, &cp).ok()?;
        let model = monotone(&evs);
        let (at, _) = with_measured(&model, measured);
        at.last().copied()
    };
    let mut milestones = Vec::new();
    let mut critical_path = Vec::new();
    let mut model_path = Vec::new();
    let (total_s, never) = match run(inp, End::Value, &cp) {
        Ok(evs) => {
            let model = monotone(&evs);
            let (at, was) = with_measured(&model, measured);
            for (i, m) in Milestone::ALL.iter().enumerate() {
                milestones.push(MilestoneAt {
                    milestone: *m,
                    at_s: at[i],
                    from: if was[i] {
                        format!(
                            "measured: {} of {} deliveries",
                            measured.map_or(String::new(), |x| x.statistic.clone()),
                            measured.map_or(0, |x| x.deliveries)
                        )
                    } else {
                        "model".into()
                    },
                });
            }
            let last = evs.last().expect("seven milestones");
            model_path.clone_from(&last.path);
            critical_path = path_with_measured(&last.path, &model, &at, &was, measured);
            (at.last().copied(), None)
        }
        Err(why) => (None, Some(why.0)),
    };
    let on = |path: &[Step], k: usize| path.iter().any(|s| s.source == TABLE[k].key);
    let used = |k: usize| {
        if on(&critical_path, k) {
            "default, on the critical path"
        } else if on(&model_path, k) {
            "replaced: its segment is measured"
        } else {
            "default, off the critical path"
        }
        .to_string()
    };
    let target_s = inp.target_s.value;
    let constants = (0..TABLE.len())
        .map(|k| ConstantUse {
            constant: TABLE[k],
            used: used(k),
        })
        .collect();
    Prediction {
        shape: inp.shape.clone(),
        concurrent: inp.concurrent,
        total_s,
        never,
        low_s: total_of(End::Low),
        high_s: total_of(End::High),
        target_s,
        target_from: inp.target_s.from.clone(),
        within_target: total_s.is_some_and(|t| t <= target_s),
        milestones,
        critical_path,
        measured: measured.map(|m| {
            let names: Vec<&str> = m.segments.keys().map(|k| k.words()).collect();
            format!(
                "measured on this fleet ({} of {} deliveries) in place of the model: to {}",
                m.statistic,
                m.deliveries,
                names.join(", to ")
            )
        }),
        constants,
        inputs: inputs_used(inp, &cp),
    }
}
