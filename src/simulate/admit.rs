//! `rackplan admit`: the capacity gate for one cluster request. Two rules, in the words an
//! approver uses: the team stays within its vCPU quota (used + requested <= quota, the
//! reference design's rule), and the fleet with the new cluster still restarts every VM
//! and re-homes every replica after each node and rack failure (the simulator's
//! re-placement, not a percentage).
//!
//! "Used" is what the team's scenario requests hold in the month of the request: those the
//! quota rule admitted (the simulator's timeline, month by month) that started by then and
//! have not ended. The fleet that must survive is the scenario's running clusters, every
//! team's admitted requests active that month, and the requested clusters.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::headroom::{self, HeadroomVerdict, ScenarioResult};
use super::loader::Loaded;
use super::scenario::{self, Pool};
use super::{current, headroom_spec, place, quota_admissions, rancher, request_active};
use crate::files::yaml::{self, InputError, Source};
use crate::path;

/// The request file: a team, a shape of the scenario (or pools), how many, for how long.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestFile {
    pub team: String,
    /// A name for the request, shown in the answer.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub shape: Option<String>,
    #[serde(default)]
    pub pools: Option<Vec<Pool>>,
    #[serde(default = "one")]
    pub count: u32,
    /// `72h`, `30d`, `2w`: the clusters are removed after it.
    #[serde(default)]
    pub duration: Option<String>,
}

fn one() -> u32 {
    1
}

/// A request resolved against the scenario.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: Option<String>,
    pub team: String,
    pub shape: Option<String>,
    pub pools: Vec<Pool>,
    pub count: u32,
    pub duration_h: Option<f64>,
}

/// `72h`, `90m`, `30d`, `2w` -> hours.
pub fn parse_duration_h(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| format!("`{s}` has no unit: write e.g. 72h, 30d or 2w"))?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` does not start with a number"))?;
    let per = match unit.trim() {
        "m" | "min" => 1.0 / 60.0,
        "h" => 1.0,
        "d" => 24.0,
        "w" => 168.0,
        u => return Err(format!("unit `{u}` of `{s}`: use m, h, d or w")),
    };
    if !(n > 0.0 && n.is_finite()) {
        return Err(format!("`{s}`: a duration above zero"));
    }
    Ok(n * per)
}

/// Read a request: the small request file, or a Rancher `Cluster` export whose label
/// `rackplan.io/team` names the team (its pools are the shape; annotation
/// `rackplan.io/duration` the duration).
pub fn load_request(path: &Path, l: &Loaded) -> Result<Request, InputError> {
    let text = yaml::read_input(path)?;
    request_from_text(path, &text, l)
}

/// A request from text already read (standard input); `path` names it in messages.
pub fn request_from_text(path: &Path, text: &str, l: &Loaded) -> Result<Request, InputError> {
    let looks_rancher = text.lines().any(|l| {
        let l = l.trim_start().trim_start_matches('"');
        l.starts_with("kind") && l.contains("Cluster") || l.starts_with("apiVersion")
    });
    if looks_rancher {
        return rancher_request(path, text);
    }
    let (r, src): (RequestFile, Source) = yaml::parse(path, text)?;
    let pools = match (&r.shape, &r.pools) {
        (Some(s), None) => l.shapes.get(s).cloned().ok_or_else(|| {
            src.error_at(
                &path!["shape"],
                format!("the scenario has no shape `{s}`"),
                Some(format!(
                    "one of: {}",
                    l.shapes.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            )
        })?,
        (None, Some(p)) if !p.is_empty() => p.clone(),
        (Some(_), Some(_)) => {
            return Err(src.error_at(
                &path!["pools"],
                "both `shape` and `pools` are given",
                Some("keep one of them".into()),
            ));
        }
        _ => {
            return Err(src.error_at(
                &[],
                "the request names no `shape` and no `pools`",
                Some("add `shape: <a shape of the scenario>`".into()),
            ));
        }
    };
    if r.count == 0 {
        return Err(src.error_at(&path!["count"], "a request for 0 clusters", None));
    }
    let duration_h = r
        .duration
        .as_deref()
        .map(parse_duration_h)
        .transpose()
        .map_err(|e| src.error_at(&path!["duration"], e, None))?;
    Ok(Request {
        name: r.name,
        team: r.team,
        shape: r.shape,
        pools,
        count: r.count,
        duration_h,
    })
}

fn rancher_request(path: &Path, text: &str) -> Result<Request, InputError> {
    let src = Source::new(path, text.to_string());
    let fail = |msg: String, hint: &str| src.error_at(&[], msg, Some(hint.to_string()));
    let pools = rancher::pools(text).map_err(|e| {
        fail(
            e,
            "a Rancher request is a provisioning.cattle.io Cluster with its HarvesterConfig machine configs",
        )
    })?;
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| fail(e.to_string(), "fix the YAML"))?;
    let cluster = docs
        .iter()
        .flat_map(|d| {
            if d["kind"] == "List" {
                d["items"].as_array().cloned().unwrap_or_default()
            } else {
                vec![d.clone()]
            }
        })
        .find(|d| d["kind"] == "Cluster")
        .unwrap_or_default();
    let meta = &cluster["metadata"];
    let team = meta["labels"]["rackplan.io/team"]
        .as_str()
        .ok_or_else(|| {
            fail(
                "the Cluster has no label `rackplan.io/team`".into(),
                "label the Cluster with the requesting team: `rackplan.io/team: <team>`",
            )
        })?
        .to_string();
    let duration_h = meta["annotations"]["rackplan.io/duration"]
        .as_str()
        .map(parse_duration_h)
        .transpose()
        .map_err(|e| fail(format!("annotation rackplan.io/duration: {e}"), "e.g. 72h"))?;
    Ok(Request {
        name: meta["name"].as_str().map(str::to_string),
        team,
        shape: meta["labels"]["rackplan.io/shape"]
            .as_str()
            .map(str::to_string),
        pools,
        count: 1,
        duration_h,
    })
}

#[derive(Debug, Clone, Serialize)]
pub struct Quota {
    /// vCPU the team's active requests hold.
    pub used: f64,
    /// vCPU of this request.
    pub requested: f64,
    /// The team's quota; `None`: the team has none.
    pub allowed: Option<f64>,
    pub within: bool,
}

/// A failure the fleet with the request does not survive.
#[derive(Debug, Clone, Serialize)]
pub struct Stranding {
    pub failure: String,
    pub kind: headroom::Kind,
    pub stranded_vms: usize,
    pub stranded_replicas: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    pub admitted: bool,
    /// Why not, in the approver's words; empty when admitted.
    pub reasons: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
    pub team: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    pub count: u32,
    /// The date the request is judged at (`YYYY-MM-DD`).
    pub at: String,
    /// When the clusters are to be removed, if the request has a duration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    pub quota: Quota,
    /// Headroom without the request, then with it.
    pub headroom_before: HeadroomVerdict,
    pub headroom_after: HeadroomVerdict,
    /// Failures that strand something with the request placed, worst first.
    pub strands: Vec<Stranding>,
    pub clusters_before: usize,
    pub clusters_after: usize,
}

/// A date as days since 1970-01-01 (proleptic Gregorian).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Days since 1970-01-01 -> (year, month, day).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A moment in whole seconds since the epoch, from `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM[:SS][Z]`.
pub fn parse_at(s: &str) -> Result<i64, String> {
    let bad = || format!("`{s}`: give a date as YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)");
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, ""));
    let mut it = date.split('-');
    let (Some(y), Some(m), Some(d), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return Err(bad());
    };
    let (y, m, d): (i64, u32, u32) = (
        y.parse().map_err(|_| bad())?,
        m.parse().map_err(|_| bad())?,
        d.parse().map_err(|_| bad())?,
    );
    if !(1..=12).contains(&m) || d == 0 || civil_from_days(days_from_civil(y, m, d)) != (y, m, d) {
        return Err(bad());
    }
    let mut secs = 0i64;
    let time = time.trim_end_matches('Z');
    if !time.is_empty() {
        let parts: Vec<&str> = time.split(':').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let limits = [24, 60, 61];
        for (i, p) in parts.iter().enumerate() {
            let v: i64 = p.parse().map_err(|_| bad())?;
            if !(0..limits[i]).contains(&v) {
                return Err(bad());
            }
            secs += v * [3600, 60, 1][i];
        }
    }
    Ok(days_from_civil(y, m, d) * 86_400 + secs)
}

/// Seconds since the epoch -> `YYYY-MM-DDTHH:MM:SSZ`, or the date alone at midnight.
pub fn format_at(t: i64, date_only: bool) -> String {
    let (y, m, d) = civil_from_days(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    if date_only && s == 0 {
        format!("{y:04}-{m:02}-{d:02}")
    } else {
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
            s / 3600,
            s / 60 % 60,
            s % 60
        )
    }
}

fn vcpu(pools: &[Pool]) -> f64 {
    pools.iter().map(|p| p.vcpu * f64::from(p.count)).sum()
}

fn describe(s: &Stranding) -> String {
    let mut what = Vec::new();
    if s.stranded_vms > 0 {
        what.push(format!(
            "{} VM{} cannot restart",
            s.stranded_vms,
            if s.stranded_vms == 1 { "" } else { "s" }
        ));
    }
    if s.stranded_replicas > 0 {
        what.push(format!(
            "{} replica{} cannot be rebuilt",
            s.stranded_replicas,
            if s.stranded_replicas == 1 { "" } else { "s" }
        ));
    }
    format!("if {} fails, {}", s.failure, what.join(" and "))
}

fn strandings(h: &headroom::Headroom) -> Vec<Stranding> {
    let mut out: Vec<&ScenarioResult> = h
        .scenarios
        .iter()
        .filter(|s| s.kind.decides() && s.fails())
        .collect();
    for c in h.combined.iter().filter(|c| c.kind.decides()) {
        out.extend(c.worst.iter().filter(|s| s.fails()));
    }
    out.sort_by(|a, b| {
        (b.stranded + b.stranded_replicas)
            .cmp(&(a.stranded + a.stranded_replicas))
            .then(a.name.cmp(&b.name))
    });
    out.into_iter()
        .map(|s| Stranding {
            failure: s.name.clone(),
            kind: s.kind,
            stranded_vms: s.stranded,
            stranded_replicas: s.stranded_replicas,
        })
        .collect()
}

/// Judge `req` at `at` (seconds since the epoch).
pub fn decide(l: &Loaded, req: &Request, at: i64) -> Result<Decision, String> {
    // The tenant clusters of a dump's fleet run beside the scenario's.
    let live_clusters = l.live.as_ref().map_or(0, |f| f.tenant_clusters);
    let s = &l.scenario;
    let team = s.teams.iter().find(|t| t.name == req.team).ok_or_else(|| {
        format!(
            "the scenario has no team `{}`; teams: {}",
            req.team,
            s.teams
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let (y, m, _) = civil_from_days(at.div_euclid(86_400));
    let month = scenario::month_index(&format!("{y:04}-{m:02}")).expect("a real month");
    // The requests the quota rule let in by this month and that still run.
    let (admitted, _) = quota_admissions(l, month);
    let running: Vec<(usize, usize)> = admitted
        .into_iter()
        .filter(|&(ti, ri)| request_active(&s.teams[ti].requests[ri], month))
        .collect();
    let ti = s
        .teams
        .iter()
        .position(|t| t.name == team.name)
        .expect("found above");
    let used: f64 = running
        .iter()
        .filter(|(t, _)| *t == ti)
        .map(|&(_, ri)| {
            let r = &team.requests[ri];
            vcpu(&l.shapes[&r.shape]) * f64::from(r.count)
        })
        .sum();
    let requested = vcpu(&req.pools) * f64::from(req.count);
    let within = team.vcpu_quota.is_none_or(|q| used + requested <= q + 1e-9);
    // An empty sum is -0.0; the quota line reads "0 used".
    let used = used + 0.0;
    let quota = Quota {
        used,
        requested,
        allowed: team.vcpu_quota,
        within,
    };

    let mut base = current(l);
    for &(ti, ri) in &running {
        let r = &s.teams[ti].requests[ri];
        base.extend(std::iter::repeat_n(
            l.shapes[&r.shape].as_slice(),
            r.count as usize,
        ));
    }
    let spec = headroom_spec(l, &l.topology());
    let before = headroom::analyse_with(&place(l, &base), &spec);
    let mut with = base.clone();
    with.extend(std::iter::repeat_n(
        req.pools.as_slice(),
        req.count as usize,
    ));
    let after = headroom::analyse_with(&place(l, &with), &spec);
    let strands = strandings(&after);

    let mut reasons = Vec::new();
    if !within {
        reasons.push(format!(
            "quota: team {} uses {used:.0} vCPU and asks for {requested:.0}; its quota allows {:.0} ({:.0} over)",
            team.name,
            team.vcpu_quota.unwrap_or_default(),
            used + requested - team.vcpu_quota.unwrap_or_default()
        ));
    }
    if !after.verdict.passes() {
        let already = if before.verdict.passes() {
            "with this request"
        } else {
            "already without this request"
        };
        let worst: Vec<String> = strands.iter().take(3).map(describe).collect();
        let unplaced = if after.unplaced_vms + after.unplaced_replicas > 0 {
            format!(
                "; {} VMs and {} replicas do not fit even with every node up",
                after.unplaced_vms, after.unplaced_replicas
            )
        } else {
            String::new()
        };
        reasons.push(format!(
            "headroom: the fleet fails {already}: {}{unplaced}",
            if worst.is_empty() {
                "it does not fit".to_string()
            } else {
                worst.join("; ")
            }
        ));
    }
    let expires = req
        .duration_h
        .map(|h| format_at(at + (h * 3600.0).round() as i64, false));
    Ok(Decision {
        admitted: reasons.is_empty(),
        reasons,
        request: req.name.clone(),
        team: team.name.clone(),
        shape: req.shape.clone(),
        count: req.count,
        at: format_at(at, true),
        expires,
        quota,
        headroom_before: before.verdict,
        headroom_after: after.verdict,
        strands,
        clusters_before: base.len() + live_clusters,
        clusters_after: with.len() + live_clusters,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for z in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
        assert_eq!(
            format_at(parse_at("2027-02-27").unwrap() + 72 * 3600, false),
            "2027-03-02T00:00:00Z"
        );
        assert_eq!(
            format_at(parse_at("2028-02-28T12:30Z").unwrap() + 24 * 3600, false),
            "2028-02-29T12:30:00Z"
        );
        assert!(parse_at("2027-02-30").is_err());
        assert!(parse_at("2027-13-01").is_err());
        assert!(parse_at("27-1").is_err());
    }

    #[test]
    fn durations() {
        assert!((parse_duration_h("72h").unwrap() - 72.0).abs() < 1e-12);
        assert!((parse_duration_h("2w").unwrap() - 336.0).abs() < 1e-12);
        assert!((parse_duration_h("90m").unwrap() - 1.5).abs() < 1e-12);
        assert!(parse_duration_h("72").is_err());
        assert!(parse_duration_h("0h").is_err());
        assert!(parse_duration_h("3y").is_err());
    }
}
