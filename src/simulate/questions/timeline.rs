//! The timeline: month by month, the teams' requests arriving and expiring, the quota
//! rule applied, and each month's placement judged against every failure (each distinct
//! set of running requests placed and checked once).

use rayon::prelude::*;

use super::growth::{Flow, Growth};
use crate::simulate::failure::headroom::{HeadroomVerdict, Slack};
use crate::simulate::failure::pruned;
use crate::simulate::place::Placement;
use crate::simulate::report::{Month, Refusal, TimelineStop};
use crate::simulate::scenario;
use crate::simulate::study::Study;

/// Whether a team request runs in month `m` (started, not yet ended).
pub fn request_active(r: &scenario::TeamRequest, m: i32) -> bool {
    scenario::month_index(&r.from).is_some_and(|f| f <= m)
        && r.until
            .as_deref()
            .and_then(scenario::month_index)
            .is_none_or(|u| m < u)
}

/// vCPU of one cluster of a shape.
pub fn shape_vcpu(l: &Study, shape: &str) -> f64 {
    l.shapes[shape]
        .iter()
        .map(|p| p.vcpu * f64::from(p.count))
        .sum()
}

/// The quota rule applied month by month up to `last`: each request arriving in a month is
/// admitted when the team's admitted, still active requests plus it stay within the
/// quota. Returns the admitted (team, request) pairs and the refusals.
pub fn quota_admissions(l: &Study, last: i32) -> (Vec<(usize, usize)>, Vec<Refusal>) {
    let s = &l.scenario;
    let mut refused = Vec::new();
    let mut admitted: Vec<(usize, usize)> = Vec::new();
    let mut months: Vec<i32> = s
        .teams
        .iter()
        .flat_map(|t| &t.requests)
        .filter_map(|r| scenario::month_index(&r.from))
        .filter(|&m| m <= last)
        .collect();
    months.sort_unstable();
    months.dedup();
    for m in months {
        for (ti, t) in s.teams.iter().enumerate() {
            for (ri, r) in t.requests.iter().enumerate() {
                if scenario::month_index(&r.from) != Some(m) {
                    continue;
                }
                let used: f64 = admitted
                    .iter()
                    .filter(|(a, b)| *a == ti && request_active(&t.requests[*b], m))
                    .map(|(_, b)| {
                        shape_vcpu(l, &t.requests[*b].shape) * f64::from(t.requests[*b].count)
                    })
                    .sum();
                let want = shape_vcpu(l, &r.shape) * f64::from(r.count);
                match t.vcpu_quota {
                    Some(q) if used + want > q + 1e-9 => refused.push(Refusal {
                        team: t.name.clone(),
                        shape: r.shape.clone(),
                        month: scenario::month_name(m),
                        reason: format!("needs {want:.0} vCPU; {:.0} of the team's {q:.0} vCPU quota are in use", used.abs()),
                    }),
                    _ => admitted.push((ti, ri)),
                }
            }
        }
    }
    (admitted, refused)
}

/// The admitted requests (team, request) running in a month.
type ActiveSet = Vec<(usize, usize)>;
/// A month's clusters, verdict and least slack.
type MonthAnswer = (usize, HeadroomVerdict, Slack);

/// Month by month: clusters arriving and expiring, quotas applied, verdict per month.
pub fn timeline(l: &Study) -> (Vec<Month>, Vec<Refusal>) {
    let (months, refused, _) = timeline_with(l, &mut |_| Flow::Go);
    (months, refused)
}

/// `timeline`, asking `progress` after each batch of distinct months (with the months
/// answered so far) whether to go on; when it says stop, the months from the first one
/// not answered on are left out, and that month is returned with the reason.
pub fn timeline_with(
    l: &Study,
    progress: &mut dyn FnMut(usize) -> Flow,
) -> (Vec<Month>, Vec<Refusal>, Option<TimelineStop>) {
    timeline_from(l, &l.place(&l.current()), progress)
}

/// `timeline_with` from the study's clusters placed already (`placed`): each month's
/// requests are added to a copy of it (`Growth`), as placing the whole list would place
/// them.
pub(crate) fn timeline_from(
    l: &Study,
    placed: &Placement,
    progress: &mut dyn FnMut(usize) -> Flow,
) -> (Vec<Month>, Vec<Refusal>, Option<TimelineStop>) {
    let s = &l.scenario;
    let mut months: Vec<i32> = Vec::new();
    for t in &s.teams {
        for r in &t.requests {
            months.extend(scenario::month_index(&r.from));
            months.extend(r.until.as_deref().and_then(scenario::month_index));
        }
    }
    if months.is_empty() {
        return (Vec::new(), Vec::new(), None);
    }
    let (first, last) = (
        *months.iter().min().expect("not empty"),
        *months.iter().max().expect("not empty"),
    );
    let base = l.current();
    let topo = l.topology();
    let failures = pruned::Failures::new(&topo, &l.headroom_spec(&topo));
    let (admitted, refused) = quota_admissions(l, last);
    // A month's answer depends only on which admitted requests run in it, and that set
    // changes only where a request starts or ends: each distinct set is placed and checked
    // once (in parallel), and the months between reuse its answer.
    let active: Vec<ActiveSet> = (first..=last)
        .map(|m| {
            admitted
                .iter()
                .copied()
                .filter(|&(ti, ri)| request_active(&s.teams[ti].requests[ri], m))
                .collect()
        })
        .collect();
    // The distinct sets in the order their months come, answered a batch at a time.
    let mut distinct: Vec<&ActiveSet> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for set in &active {
        if seen.insert(set) {
            distinct.push(set);
        }
    }
    let place_and_check = |set: &ActiveSet| {
        let mut growth = Growth::on(l, placed.clone(), &base, &[]);
        let mut clusters = base.len();
        for &(ti, ri) in set {
            let r = &s.teams[ti].requests[ri];
            for _ in 0..r.count {
                growth.add_cluster(&l.shapes[&r.shape]);
            }
            clusters += r.count as usize;
        }
        let (verdict, slack) = pruned::verdict_and_min_slack(growth.placement(), &failures);
        (clusters, verdict, slack)
    };
    let batch = rayon::current_num_threads().clamp(2, 8);
    let mut answers: std::collections::HashMap<&ActiveSet, MonthAnswer> =
        std::collections::HashMap::new();
    let mut stopped = None;
    for chunk in distinct.chunks(batch) {
        let got: Vec<(&ActiveSet, MonthAnswer)> = chunk
            .par_iter()
            .map(|&set| (set, place_and_check(set)))
            .collect();
        answers.extend(got);
        if answers.len() < distinct.len()
            && let Flow::Stop(why) = progress(answers.len())
        {
            stopped = Some(why);
            break;
        }
    }
    let live = l.live.as_ref().map_or(0, |f| f.tenant_clusters);
    let mut out = Vec::new();
    let mut cut = None;
    for (m, set) in (first..=last).zip(&active) {
        let Some((clusters, verdict, min_slack)) = answers.get(set).cloned() else {
            cut = stopped.map(|by| TimelineStop {
                from_month: scenario::month_name(m),
                by,
            });
            break;
        };
        out.push(Month {
            month: scenario::month_name(m),
            clusters: clusters + live,
            verdict,
            min_slack,
        });
    }
    (out, refused, cut)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::failure::headroom;
    use crate::simulate::report::Stopped;

    /// The plain computation: every month placed and checked on its own.
    fn timeline_month_by_month(l: &Study) -> Vec<(String, usize, HeadroomVerdict, String)> {
        let s = &l.scenario;
        let months: Vec<i32> = s
            .teams
            .iter()
            .flat_map(|t| &t.requests)
            .flat_map(|r| {
                [
                    scenario::month_index(&r.from),
                    r.until.as_deref().and_then(scenario::month_index),
                ]
            })
            .flatten()
            .collect();
        let (first, last) = (*months.iter().min().unwrap(), *months.iter().max().unwrap());
        let spec = l.headroom_spec(&l.topology());
        let (admitted, _) = quota_admissions(l, last);
        (first..=last)
            .map(|m| {
                let mut all = l.current();
                for &(ti, ri) in &admitted {
                    let r = &s.teams[ti].requests[ri];
                    if request_active(r, m) {
                        all.extend(std::iter::repeat_n(
                            l.shapes[&r.shape].as_slice(),
                            r.count as usize,
                        ));
                    }
                }
                let h = headroom::analyse_with(&l.place(&all), &spec);
                (
                    scenario::month_name(m),
                    all.len(),
                    h.verdict,
                    format!("{:?}", headroom::min_slack(&h)),
                )
            })
            .collect()
    }

    #[test]
    fn the_timeline_reusing_unchanged_months_is_the_plain_month_by_month_answer() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("simulations/reference-factory.yaml"),
        )
        .unwrap();
        // The shipped teams, and a long quiet stretch that the reuse skips.
        // More requests, so that the months hold more distinct sets than one batch.
        let text = text
            .replace(
                "{shape: large, count: 1, from: 2027-04}",
                "{shape: large, count: 1, from: 2027-04, until: 2031-12}",
            )
            .replace("vcpu_quota: 200", "vcpu_quota: 5000")
            .replace(
                "      - {shape: large, count: 2, from: 2027-02, until: 2027-06}\n",
                "      - {shape: large, count: 2, from: 2027-02, until: 2027-06}\n      - {shape: standard, count: 1, from: 2027-07}\n      - {shape: standard, count: 1, from: 2027-10}\n      - {shape: standard, count: 1, from: 2028-01, until: 2028-05}\n      - {shape: standard, count: 1, from: 2028-08}\n",
            );
        assert!(text.contains("from: 2028-08"));
        let l = Study::open(&crate::simulate::StudyInput {
            scenario: crate::simulate::ScenarioInput::Text {
                name: std::path::Path::new("t.yaml"),
                text: &text,
            },
            site: None,
            dump: None,
            rebuild_what_if: None,
        })
        .unwrap();
        let (fast, _) = timeline(&l);
        let plain = timeline_month_by_month(&l);
        assert!(fast.len() > 50, "a long timeline: {}", fast.len());
        let fast: Vec<_> = fast
            .iter()
            .map(|m| {
                (
                    m.month.clone(),
                    m.clusters,
                    m.verdict,
                    format!("{:?}", m.min_slack),
                )
            })
            .collect();
        assert_eq!(fast, plain);
        // Stopped after the first batch: a prefix of the whole, and the first month left
        // out named with the reason.
        let mut asked = 0;
        let (part, _, cut) = timeline_with(&l, &mut |_| {
            asked += 1;
            Flow::Stop(Stopped::Budget)
        });
        assert_eq!(asked, 1);
        assert!(
            !part.is_empty() && part.len() < fast.len(),
            "{}",
            part.len()
        );
        for (m, whole) in part.iter().zip(&fast) {
            assert_eq!((&m.month, m.clusters), (&whole.0, whole.1));
        }
        let cut = cut.expect("the timeline says where it stopped");
        assert_eq!(cut.from_month, fast[part.len()].0);
        assert_eq!(cut.by, Stopped::Budget);
    }
}
