//! Judging the pending requests: one at a time in creation order (then namespace and
//! name), each counting every request that holds before it, those admitted earlier in
//! the same pass included, so that no two requests are admitted on the same headroom.
//!
//! The decision is `rackplan admit`'s (`simulate::questions::judge`): the team's vCPU
//! quota on what its holding requests ask, then every node and rack failure re-placed
//! with and without the request on the fleet as it runs. What a holding request adds to
//! that fleet is its shape less the VMs of its cluster already running (the VMIs
//! labelled `guestcluster.harvesterhci.io/name: <cluster>` by Harvester's node driver),
//! so a cluster is counted once whether its VMs are up yet or not.
//!
//! Pure: the study, the catalogue, the rules and the requests in; a verdict per pending
//! request out. The controller writes them.

use std::collections::BTreeMap;

use super::catalogue::Catalogue;
use super::resource::{ClusterRequest, Phase};
use super::spec::{self, Rules};
use crate::simulate::Study;
use crate::simulate::questions::{self, Decision, Held};
use crate::simulate::scenario::Pool;

/// The answer for one pending request.
#[derive(Debug, Clone)]
pub struct Verdict {
    /// Index of the request in the slice judged.
    pub index: usize,
    pub admitted: bool,
    /// The condition reason: `WithinQuotaAndHeadroom`, `QuotaExceeded`,
    /// `NoFailureHeadroom`, `QuotaExceededAndNoFailureHeadroom` or `InvalidSpec`.
    pub reason: &'static str,
    /// The status message: `admit`'s sentence, or the located spec error.
    pub message: String,
    /// Seconds since the epoch, when admitted.
    pub expires_at: Option<i64>,
    pub decision: Option<Decision>,
    /// How long the judgement took, seconds.
    pub seconds: f64,
}

/// Does this request wait for a judgement? New ones, and refused or failed ones whose
/// spec changed since.
pub fn needs_judging(cr: &ClusterRequest) -> bool {
    let st = cr.status.as_ref();
    match st.and_then(|s| s.phase) {
        None | Some(Phase::Pending) => true,
        Some(Phase::Refused | Phase::Failed) => {
            st.and_then(|s| s.observed_generation) != cr.metadata.generation
        }
        _ => false,
    }
}

/// Creation order: the creation time, then namespace and name (two requests created in
/// the same second are judged in name order, the same on every replica).
pub fn order(requests: &[ClusterRequest]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..requests.len()).collect();
    let key = |r: &ClusterRequest| {
        (
            r.metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_second()),
            r.metadata.namespace.clone().unwrap_or_default(),
            r.metadata.name.clone().unwrap_or_default(),
        )
    };
    idx.sort_by_key(|&i| key(&requests[i]));
    idx
}

/// The pools of a holding request's cluster that are not running yet: its shape, less
/// `running` VMs taken from the first pools on (the control plane comes up first).
fn not_running(pools: &[Pool], mut running: usize) -> Vec<Pool> {
    let mut out = Vec::new();
    for p in pools {
        let take = running.min(p.count as usize);
        running -= take;
        let left = p.count - take as u32;
        if left > 0 {
            let mut q = p.clone();
            q.count = left;
            out.push(q);
        }
    }
    out
}

/// Judge every pending request of `requests` at `now`. `running` counts the VMIs per
/// guest cluster name in the fleet.
pub fn judge_pending(
    study: &Study,
    catalogue: &Catalogue,
    rules: &Rules,
    requests: &[ClusterRequest],
    running: &BTreeMap<String, usize>,
    now: i64,
) -> Vec<Verdict> {
    // Held so far, per team, and the clusters not running yet (owned pools).
    let mut team_vcpu: BTreeMap<String, f64> = BTreeMap::new();
    let mut waiting: Vec<Vec<Pool>> = Vec::new();
    let mut out = Vec::new();
    // Within this pass `waiting` only grows: its length names the fleet judged.
    let mut memo = questions::Memo::default();
    for i in order(requests) {
        let cr = &requests[i];
        let phase = cr.status.as_ref().and_then(|s| s.phase);
        if phase.is_some_and(Phase::holds) && !needs_judging(cr) {
            let Some(offer) = catalogue.offers.get(&cr.spec.shape) else {
                continue;
            };
            *team_vcpu.entry(cr.spec.team.clone()).or_default() += vcpu(&offer.pools);
            let cluster = cr
                .status
                .as_ref()
                .and_then(|s| s.cluster_name.clone())
                .or_else(|| cr.metadata.name.clone())
                .unwrap_or_default();
            let up = running.get(&cluster).copied().unwrap_or(0);
            let rest = not_running(&offer.pools, up);
            if !rest.is_empty() {
                waiting.push(rest);
            }
            continue;
        }
        if !needs_judging(cr) {
            continue;
        }
        let t0 = std::time::Instant::now();
        let req = match spec::check(cr, catalogue, rules, &study.scenario.teams) {
            Ok(r) => r,
            Err(e) => {
                out.push(Verdict {
                    index: i,
                    admitted: false,
                    reason: "InvalidSpec",
                    message: format!("refused: {e}"),
                    expires_at: None,
                    decision: None,
                    seconds: t0.elapsed().as_secs_f64(),
                });
                continue;
            }
        };
        let held = Held {
            team_vcpu: team_vcpu.get(&req.team).copied().unwrap_or(0.0),
            clusters: waiting.iter().map(Vec::as_slice).collect(),
        };
        let d = match questions::judge_in(study, &req, now, &held, &mut memo) {
            Ok(d) => d,
            Err(e) => {
                out.push(Verdict {
                    index: i,
                    admitted: false,
                    reason: "InvalidSpec",
                    message: format!("refused: spec.team: {e}"),
                    expires_at: None,
                    decision: None,
                    seconds: t0.elapsed().as_secs_f64(),
                });
                continue;
            }
        };
        let expires_at = req.duration_h.map(|h| now + (h * 3600.0).round() as i64);
        let reason = match (d.admitted, d.quota.within) {
            (true, _) => "WithinQuotaAndHeadroom",
            (false, false) if d.headroom_after.passes() => "QuotaExceeded",
            (false, false) => "QuotaExceededAndNoFailureHeadroom",
            (false, true) => "NoFailureHeadroom",
        };
        if d.admitted {
            *team_vcpu.entry(req.team.clone()).or_default() += vcpu(&req.pools);
            waiting.push(req.pools.clone());
        }
        out.push(Verdict {
            index: i,
            admitted: d.admitted,
            reason,
            message: d.sentence(),
            expires_at: d.admitted.then_some(expires_at).flatten(),
            decision: Some(d),
            seconds: t0.elapsed().as_secs_f64(),
        });
    }
    out
}

fn vcpu(pools: &[Pool]) -> f64 {
    pools.iter().map(|p| p.vcpu * f64::from(p.count)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::resource::{ClusterRequestSpec, ClusterRequestStatus};
    use std::path::{Path, PathBuf};

    fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn request(name: &str, team: &str, shape: &str, created: i64) -> ClusterRequest {
        let mut cr = ClusterRequest::new(
            name,
            ClusterRequestSpec {
                team: team.into(),
                shape: shape.into(),
                duration: "72h".into(),
                ..Default::default()
            },
        );
        cr.metadata.namespace = Some("fleet-default".into());
        cr.metadata.generation = Some(1);
        cr.metadata.creation_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::from_second(created).unwrap(),
            ));
        cr
    }

    fn study(quota: &str) -> (Study, Catalogue) {
        let state = crate::live::read(&repo().join("simulations/live-fleet.yaml")).unwrap();
        let text = format!(
            "name: operator\nteams:\n  - name: paiement\n    vcpu_quota: {quota}\n  - name: logistique\n    vcpu_quota: 1000\n"
        );
        let l = Study::on_state(
            crate::simulate::ScenarioInput::Text {
                name: Path::new("<quotas>"),
                text: &text,
            },
            &state,
            Path::new("test-fleet"),
        )
        .unwrap();
        let c = Catalogue::read(&repo().join("iso-config/example/catalogue")).unwrap();
        (l, c)
    }

    const NOW: i64 = 1_796_000_000;

    #[test]
    fn requests_are_judged_in_creation_order_each_counting_the_ones_before() {
        // paiement may hold 80 vCPU: one standard cluster (36) fits, a second (72) does
        // too, a third (108) does not. Created out of name order on purpose.
        let (l, c) = study("80");
        let rs = vec![
            request("c-third", "paiement", "standard", 30),
            request("a-first", "paiement", "standard", 10),
            request("b-second", "paiement", "standard", 20),
        ];
        let v = judge_pending(&l, &c, &Rules::default(), &rs, &BTreeMap::new(), NOW);
        let by_name: Vec<(&str, bool)> = v
            .iter()
            .map(|x| (rs[x.index].metadata.name.as_deref().unwrap(), x.admitted))
            .collect();
        assert_eq!(
            by_name,
            [("a-first", true), ("b-second", true), ("c-third", false)]
        );
        let third = &v[2];
        assert_eq!(third.reason, "QuotaExceeded");
        assert_eq!(
            third.message,
            "refused: quota: team paiement uses 72 vCPU and asks for 36; its quota allows 80 (28 over)"
        );
        assert!(
            v[0].message.starts_with(
                "admitted: quota 0 vCPU used + 36 requested = 36 of 80 allowed (within)"
            ),
            "{}",
            v[0].message
        );
        assert_eq!(v[0].expires_at, Some(NOW + 72 * 3600));
    }

    #[test]
    fn a_holding_request_counts_and_a_refused_one_is_not_judged_again() {
        let (l, c) = study("80");
        let mut held = request("held", "paiement", "standard", 1);
        held.status = Some(ClusterRequestStatus {
            phase: Some(Phase::Ready),
            observed_generation: Some(1),
            cluster_name: Some("held".into()),
            ..Default::default()
        });
        let mut refused = request("refused", "paiement", "standard", 2);
        refused.status = Some(ClusterRequestStatus {
            phase: Some(Phase::Refused),
            observed_generation: Some(1),
            ..Default::default()
        });
        let new = request("new", "paiement", "large", 3);
        let rs = vec![held, refused.clone(), new];
        let v = judge_pending(&l, &c, &Rules::default(), &rs, &BTreeMap::new(), NOW);
        assert_eq!(v.len(), 1, "the refused request waits for a spec change");
        assert_eq!(rs[v[0].index].metadata.name.as_deref(), Some("new"));
        assert!(v[0].message.contains("uses 36 vCPU"), "{}", v[0].message);
        // A changed spec is judged again.
        refused.metadata.generation = Some(2);
        assert!(needs_judging(&refused));
    }

    #[test]
    fn a_cluster_whose_vms_run_is_not_placed_twice() {
        let pools = vec![
            Pool {
                name: "cp".into(),
                count: 3,
                vcpu: 4.0,
                memory_gib: 8.0,
                disks_gib: vec![40.0],
                anti_affinity: true,
                running: true,
            },
            Pool {
                name: "w".into(),
                count: 3,
                vcpu: 8.0,
                memory_gib: 32.0,
                disks_gib: vec![100.0],
                anti_affinity: false,
                running: true,
            },
        ];
        assert_eq!(
            not_running(&pools, 0).iter().map(|p| p.count).sum::<u32>(),
            6
        );
        let rest = not_running(&pools, 4);
        assert_eq!(rest.len(), 1);
        assert_eq!((rest[0].name.as_str(), rest[0].count), ("w", 2));
        assert!(not_running(&pools, 6).is_empty());
        assert!(not_running(&pools, 60).is_empty());
    }

    #[test]
    fn a_pass_that_shares_headroom_answers_gives_each_request_its_own_answer() {
        // Enough quota that the fleet's headroom decides: the first ones fit, the rest are
        // refused on the same fleet (the shared answer), each with its own quota line.
        let (l, c) = study("100000");
        let rs: Vec<ClusterRequest> = (0..12)
            .map(|i| request(&format!("r{i:02}"), "paiement", "large", i))
            .collect();
        let v = judge_pending(&l, &c, &Rules::default(), &rs, &BTreeMap::new(), NOW);
        assert_eq!(v.len(), 12);
        // The same requests judged one by one, each on a fresh answer.
        let mut held_pools: Vec<Vec<Pool>> = Vec::new();
        let mut used = 0.0;
        for x in &v {
            let cr = &rs[x.index];
            let req = spec::check(cr, &c, &Rules::default(), &l.scenario.teams).unwrap();
            let held = Held {
                team_vcpu: used,
                clusters: held_pools.iter().map(Vec::as_slice).collect(),
            };
            let alone = questions::judge(&l, &req, NOW, &held).unwrap();
            assert_eq!(x.admitted, alone.admitted, "{}", x.message);
            assert_eq!(x.message, alone.sentence());
            if alone.admitted {
                used += vcpu(&req.pools);
                held_pools.push(req.pools.clone());
            }
        }
        assert!(
            v.iter().any(|x| x.admitted) && v.iter().any(|x| !x.admitted),
            "both kinds"
        );
    }

    #[test]
    fn a_bad_spec_is_refused_with_its_field_and_the_rest_still_judged() {
        let (l, c) = study("1000");
        let mut bad = request("bad", "paiement", "gigantic", 1);
        bad.spec.duration = "-5h".into();
        let good = request("good", "paiement", "standard", 2);
        let rs = vec![bad, good];
        let v = judge_pending(&l, &c, &Rules::default(), &rs, &BTreeMap::new(), NOW);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].reason, "InvalidSpec");
        assert!(
            v[0].message
                .starts_with("refused: spec.shape: `gigantic` is not in the catalogue"),
            "{}",
            v[0].message
        );
        assert!(v[1].admitted, "{}", v[1].message);
    }
}
