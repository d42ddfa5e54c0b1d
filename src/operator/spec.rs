//! A request's spec checked before it is judged: its name can name a Rancher cluster, its
//! team is the team of the namespace it was made in and has a quota, its shape is in the
//! catalogue and within the bounds `admit` holds every request to, its lifetime reads and
//! is within the team's longest, its Kubernetes version is the catalogue's or one the
//! operator allows, and its free text is short plain text. Each refusal names the field
//! (`spec.duration: ...`).
//!
//! Once admitted, a request's terms (team, shape, version, lifetime and the shape's
//! resources) are recorded in its status; an edit of the spec afterwards is judged here as
//! a change of those terms: the lifetime may be raised (never past the team's longest,
//! counted from the admission) or lowered, nothing else may change.

use super::catalogue::Catalogue;
use super::resource::{ClusterRequest, Terms, TermsPool, limits};
use super::teams::{TeamConfig, Teams};
pub(crate) use super::text::shown;
use crate::simulate::scenario::request::parse_duration_h;
use crate::simulate::scenario::{Pool, Request, ranges};

/// The longest request name: a Rancher cluster name (a DNS label) leaves room for the
/// machine configs' `-<pool>` and the node driver's machine suffixes.
const MAX_NAME: usize = 40;

/// What the operator allows beyond the catalogue.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The longest lifetime granted, hours, for teams that name none.
    pub max_lifetime_h: f64,
    /// Kubernetes versions a request may ask for besides the catalogue's.
    pub versions: Vec<String>,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            max_lifetime_h: 90.0 * 24.0,
            versions: Vec::new(),
        }
    }
}

impl Rules {
    /// The longest lifetime of `team`, hours.
    pub fn max_lifetime_h(&self, team: Option<&TeamConfig>) -> f64 {
        team.and_then(|t| t.max_lifetime_h)
            .unwrap_or(self.max_lifetime_h)
    }
}

/// Why a spec is refused, at its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct SpecError {
    pub field: &'static str,
    pub message: String,
}

fn err(field: &'static str, message: impl Into<String>) -> SpecError {
    SpecError {
        field,
        message: message.into(),
    }
}

fn plain(field: &'static str, s: &str, max: usize) -> Result<(), SpecError> {
    if s.len() > max {
        return Err(err(field, format!("{} bytes; at most {max}", s.len())));
    }
    if s.chars().any(char::is_control) {
        return Err(err(
            field,
            format!("`{}` holds control characters; write plain text", shown(s)),
        ));
    }
    Ok(())
}

pub(crate) fn hours(h: f64) -> String {
    if h >= 24.0 && (h / 24.0).fract() == 0.0 {
        format!("{}d", h / 24.0)
    } else {
        format!("{h}h")
    }
}

/// A request checked: what `admit` judges, the terms recorded if admitted, and how long
/// it may wait for room.
#[derive(Debug, Clone)]
pub struct Checked {
    pub request: Request,
    pub terms: Terms,
    pub max_wait_h: Option<f64>,
}

/// The shape's pools as recorded terms.
pub fn terms_pools(pools: &[Pool]) -> Vec<TermsPool> {
    pools
        .iter()
        .map(|p| TermsPool {
            name: p.name.clone(),
            count: p.count,
            vcpu: p.vcpu,
            memory_gib: p.memory_gib,
            disks_gib: p.disks_gib.clone(),
            anti_affinity: p.anti_affinity,
        })
        .collect()
}

/// The recorded pools as the simulator's.
pub fn pools_of(terms: &Terms) -> Vec<Pool> {
    terms
        .pools
        .iter()
        .map(|p| Pool {
            name: p.name.clone(),
            count: p.count,
            vcpu: p.vcpu,
            memory_gib: p.memory_gib,
            disks_gib: p.disks_gib.clone(),
            anti_affinity: p.anti_affinity,
            running: true,
        })
        .collect()
}

/// Whether a shape still has the resources it had when judged.
pub fn same_pools(a: &[TermsPool], b: &[TermsPool]) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(1.0);
    a.len() == b.len()
        && a.iter().zip(b).all(|(p, q)| {
            p.name == q.name
                && p.count == q.count
                && close(p.vcpu, q.vcpu)
                && close(p.memory_gib, q.memory_gib)
                && p.anti_affinity == q.anti_affinity
                && p.disks_gib.len() == q.disks_gib.len()
                && p.disks_gib
                    .iter()
                    .zip(&q.disks_gib)
                    .all(|(x, y)| close(*x, *y))
        })
}

fn duration_field(field: &'static str, v: &str, max_h: Option<f64>) -> Result<f64, SpecError> {
    plain(field, v, limits::DURATION)?;
    if v.trim().is_empty() {
        return Err(err(
            field,
            format!(
                "empty; every cluster has a lifetime: e.g. 72h, 14d{}",
                max_h
                    .map(|m| format!(" (at most {})", hours(m)))
                    .unwrap_or_default()
            ),
        ));
    }
    let h = parse_duration_h(v).map_err(|e| err(field, e.to_string()))?;
    if h <= 0.0 {
        return Err(err(field, format!("`{}` is no time at all", shown(v))));
    }
    Ok(h)
}

/// Annotation on the operator's own copy of a request (never written back) naming the
/// fields cut to their bound and their sizes: `spec.reason=200000`.
pub const OVERSIZE: &str = "rackplan.io/oversize";

/// The string fields of a spec with their bound.
fn bounded(
    s: &mut super::resource::ClusterRequestSpec,
) -> [(&'static str, Option<&mut String>, usize); 7] {
    [
        ("spec.team", Some(&mut s.team), limits::TEAM),
        ("spec.shape", Some(&mut s.shape), limits::SHAPE),
        (
            "spec.kubernetesVersion",
            s.kubernetes_version.as_mut(),
            limits::VERSION,
        ),
        ("spec.duration", Some(&mut s.duration), limits::DURATION),
        ("spec.maxWait", s.max_wait.as_mut(), limits::DURATION),
        ("spec.requester", s.requester.as_mut(), limits::REQUESTER),
        ("spec.reason", s.reason.as_mut(), limits::REASON),
    ]
}

/// Cut a request the operator holds to what it needs: no managed fields, and each string
/// past its bound cut to it, with the original size kept in `OVERSIZE` so `check` still
/// refuses it at its field. A request made before the CRD bounded its fields (or on an
/// API server that does not enforce them) then costs its bound, not its size.
pub fn shrink(cr: &mut ClusterRequest) {
    cr.metadata.managed_fields = None;
    // Only this function says what was cut: a request cannot claim it.
    if let Some(a) = cr.metadata.annotations.as_mut() {
        a.remove(OVERSIZE);
    }
    let mut cut = Vec::new();
    for (field, v, max) in bounded(&mut cr.spec) {
        if let Some(v) = v
            && v.len() > max
        {
            cut.push(format!("{field}={}", v.len()));
            let mut end = max;
            while !v.is_char_boundary(end) {
                end -= 1;
            }
            v.truncate(end);
        }
    }
    if !cut.is_empty() {
        cr.metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(OVERSIZE.into(), cut.join(","));
    }
}

/// The first field `shrink` cut, as a refusal.
fn oversize(cr: &ClusterRequest) -> Result<(), SpecError> {
    let Some(cut) = cr
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(OVERSIZE))
    else {
        return Ok(());
    };
    let mut spec = cr.spec.clone();
    for (field, _, max) in bounded(&mut spec) {
        if let Some(size) = cut
            .split(',')
            .find_map(|e| e.strip_prefix(field).and_then(|r| r.strip_prefix('=')))
        {
            return Err(err(field, format!("{size} bytes; at most {max}")));
        }
    }
    Ok(())
}

/// Check `cr`, made in a namespace of team `ns_team`, and resolve it to the request
/// `admit` judges and the terms it would be admitted on.
pub fn check(
    cr: &ClusterRequest,
    ns_team: &str,
    catalogue: &Catalogue,
    rules: &Rules,
    teams: &Teams,
) -> Result<Checked, SpecError> {
    let name = cr.metadata.name.clone().unwrap_or_default();
    if !crate::site::types::is_dns_label(&name, MAX_NAME) {
        return Err(err(
            "metadata.name",
            format!(
                "`{}` cannot name a Rancher cluster: lowercase letters, digits and `-`, at most {MAX_NAME}",
                shown(&name)
            ),
        ));
    }
    oversize(cr)?;
    let s = &cr.spec;
    plain("spec.team", &s.team, limits::TEAM)?;
    let ns = cr.metadata.namespace.clone().unwrap_or_default();
    if !s.team.is_empty() && s.team != ns_team {
        return Err(err(
            "spec.team",
            format!(
                "`{}` is not the team of namespace {ns} ({ns_team}); a request counts against the quota of the team whose namespace it is made in: make it in that team's namespace, or leave spec.team empty",
                shown(&s.team)
            ),
        ));
    }
    let team = ns_team;
    if let Some(why) = teams.bad.get(team) {
        return Err(err(
            "spec.team",
            format!("team {team} cannot be served: {why}"),
        ));
    }
    let Some(config) = teams.by_name.get(team) else {
        return Err(err(
            "spec.team",
            format!(
                "team {team} (of namespace {ns}) has no quota here; teams: {}",
                teams.names()
            ),
        ));
    };
    plain("spec.shape", &s.shape, limits::SHAPE)?;
    let Some(offer) = catalogue.offers.get(&s.shape) else {
        return Err(err(
            "spec.shape",
            format!(
                "`{}` is not in the catalogue; shapes: {}{}",
                shown(&s.shape),
                catalogue.names(),
                crate::words::closest(&s.shape, catalogue.offers.keys().map(String::as_str))
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default()
            ),
        ));
    };
    let vms: u64 = offer.pools.iter().map(|p| u64::from(p.count)).sum();
    if vms > ranges::MAX_VMS {
        return Err(err(
            "spec.shape",
            format!(
                "`{}` has {vms} VMs; rackplan models at most {}",
                s.shape,
                ranges::MAX_VMS
            ),
        ));
    }
    let max_h = rules.max_lifetime_h(Some(config));
    let h = duration_field("spec.duration", &s.duration, Some(max_h))?;
    if h > max_h {
        return Err(err(
            "spec.duration",
            format!(
                "`{}` is past the longest lifetime team {team} is granted ({}), extensions included; ask for at most {}",
                s.duration,
                hours(max_h),
                hours(max_h)
            ),
        ));
    }
    let max_wait_h = match &s.max_wait {
        Some(w) => Some(duration_field("spec.maxWait", w, None)?),
        None => None,
    };
    let mut version = offer.kubernetes_version.clone();
    if let Some(v) = &s.kubernetes_version {
        plain("spec.kubernetesVersion", v, limits::VERSION)?;
        if *v != offer.kubernetes_version && !rules.versions.contains(v) {
            let mut allowed = vec![format!("{} (the catalogue's)", offer.kubernetes_version)];
            allowed.extend(rules.versions.iter().cloned());
            return Err(err(
                "spec.kubernetesVersion",
                format!(
                    "`{}` is not offered; allowed: {}",
                    shown(v),
                    allowed.join(", ")
                ),
            ));
        }
        version.clone_from(v);
    }
    for (field, text, max) in [
        ("spec.requester", s.requester.as_deref(), limits::REQUESTER),
        ("spec.reason", s.reason.as_deref(), limits::REASON),
    ] {
        if let Some(t) = text {
            plain(field, t, max)?;
        }
    }
    let pools = &offer.pools;
    let sum =
        |f: &dyn Fn(&Pool) -> f64| -> f64 { pools.iter().map(|p| f(p) * f64::from(p.count)).sum() };
    let terms = Terms {
        team: team.to_string(),
        shape: s.shape.clone(),
        kubernetes_version: version,
        duration: s.duration.trim().to_string(),
        vcpu: sum(&|p| p.vcpu),
        memory_gib: sum(&|p| p.memory_gib),
        disk_gib: sum(&|p| p.disks_gib.iter().sum()),
        pools: terms_pools(pools),
        dry_run: false,
    };
    Ok(Checked {
        request: Request {
            name: Some(name),
            team: team.to_string(),
            shape: Some(s.shape.clone()),
            pools: pools.clone(),
            count: 1,
            duration_h: Some(h),
        },
        terms,
        max_wait_h,
    })
}

/// An edit of an admitted request's spec, judged against its recorded terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// Nothing the terms hold changed (the requester or the reason did).
    None,
    /// The edit is refused: the terms stay as recorded.
    Refused {
        reason: &'static str,
        message: String,
    },
    /// The lifetime changes: the new duration, counted from the admission.
    Lifetime { duration: String, hours: f64 },
}

/// Judge the spec of an admitted request against its recorded `terms`: a changed team,
/// shape or version is refused with the field named; a new duration is granted up to the
/// team's longest lifetime counted from the admission (`cap_h`), refused past it.
pub fn change(cr: &ClusterRequest, terms: &Terms, cap_h: f64) -> Change {
    let s = &cr.spec;
    let asked_version = s
        .kubernetes_version
        .clone()
        .unwrap_or_else(|| terms.kubernetes_version.clone());
    let mut moved = Vec::new();
    if !s.team.is_empty() && s.team != terms.team {
        moved.push(format!(
            "spec.team (`{}`, admitted as {})",
            shown(&s.team),
            terms.team
        ));
    }
    if s.shape != terms.shape {
        moved.push(format!(
            "spec.shape (`{}`, admitted as {})",
            shown(&s.shape),
            terms.shape
        ));
    }
    if asked_version != terms.kubernetes_version {
        moved.push(format!(
            "spec.kubernetesVersion (`{}`, admitted as {})",
            shown(&asked_version),
            terms.kubernetes_version
        ));
    }
    if !moved.is_empty() {
        return Change::Refused {
            reason: "ImmutableField",
            message: format!(
                "{} cannot change after admission: the cluster keeps the terms it was judged on; revert the edit, or make a new request",
                moved.join(", ")
            ),
        };
    }
    if s.duration.trim() == terms.duration {
        return Change::None;
    }
    let h = match duration_field("spec.duration", &s.duration, Some(cap_h)) {
        Ok(h) => h,
        Err(e) => {
            return Change::Refused {
                reason: "InvalidSpec",
                message: format!("{e}; the lifetime stays {}", terms.duration),
            };
        }
    };
    if h > cap_h {
        return Change::Refused {
            reason: "ExtensionPastCap",
            message: format!(
                "spec.duration: `{}` is past the longest lifetime team {} is granted ({} from admission, extensions included); the lifetime stays {}",
                s.duration.trim(),
                terms.team,
                hours(cap_h),
                terms.duration
            ),
        };
    }
    Change::Lifetime {
        duration: s.duration.trim().to_string(),
        hours: h,
    }
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
