//! A request's spec checked before it is judged: its name can name a Rancher cluster, its
//! team has a quota, its shape is in the catalogue and within the bounds `admit` holds
//! every request to, its lifetime reads and is within the operator's longest, its
//! Kubernetes version is the catalogue's or one the operator allows, and its free text
//! is short plain text. Each refusal names the field (`spec.duration: ...`).

use super::catalogue::Catalogue;
use super::resource::ClusterRequest;
use crate::simulate::scenario::{Request, Team, ranges};

/// The most characters of `requester` or `reason`.
const MAX_TEXT: usize = 1024;
/// The longest request name: a Rancher cluster name (a DNS label) leaves room for the
/// machine configs' `-<pool>` and the node driver's machine suffixes.
const MAX_NAME: usize = 40;

/// What the operator allows beyond the catalogue.
#[derive(Debug, Clone)]
pub struct Rules {
    /// The longest lifetime granted, hours.
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

/// Text a person reads in a status or an event: shown as `"..."` with escapes, at most
/// 60 characters of it.
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(60)
        .collect::<String>()
        .escape_debug()
        .to_string();
    if s.chars().count() > 60 {
        out.push_str("...");
    }
    out
}

fn plain(field: &'static str, s: &str) -> Result<(), SpecError> {
    if s.len() > MAX_TEXT {
        return Err(err(field, format!("{} bytes; at most {MAX_TEXT}", s.len())));
    }
    if s.chars().any(char::is_control) {
        return Err(err(
            field,
            format!("`{}` holds control characters; write plain text", shown(s)),
        ));
    }
    Ok(())
}

fn hours(h: f64) -> String {
    if h >= 24.0 && (h / 24.0).fract() == 0.0 {
        format!("{}d", h / 24.0)
    } else {
        format!("{h}h")
    }
}

/// Check `cr` and resolve it to the request `admit` judges.
pub fn check(
    cr: &ClusterRequest,
    catalogue: &Catalogue,
    rules: &Rules,
    teams: &[Team],
) -> Result<Request, SpecError> {
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
    let s = &cr.spec;
    plain("spec.team", &s.team)?;
    let team_names = || {
        teams
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if s.team.is_empty() {
        return Err(err(
            "spec.team",
            format!("empty; name the team asking (one of: {})", team_names()),
        ));
    }
    if !teams.iter().any(|t| t.name == s.team) {
        return Err(err(
            "spec.team",
            format!(
                "no team `{}` has a quota; teams: {}{}",
                shown(&s.team),
                team_names(),
                crate::words::closest(&s.team, teams.iter().map(|t| t.name.as_str()))
                    .map(|h| format!(" (did you mean `{h}`?)"))
                    .unwrap_or_default()
            ),
        ));
    }
    plain("spec.shape", &s.shape)?;
    let Some(offer) = catalogue.offers.get(&s.shape) else {
        return Err(err(
            "spec.shape",
            format!(
                "`{}` is not in the catalogue; shapes: {}",
                shown(&s.shape),
                catalogue.names()
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
    plain("spec.duration", &s.duration)?;
    if s.duration.trim().is_empty() {
        return Err(err(
            "spec.duration",
            format!(
                "empty; every cluster has a lifetime: e.g. 72h, 14d (at most {})",
                hours(rules.max_lifetime_h)
            ),
        ));
    }
    let h = crate::simulate::scenario::request::parse_duration_h(&s.duration)
        .map_err(|e| err("spec.duration", e.to_string()))?;
    if h > rules.max_lifetime_h {
        return Err(err(
            "spec.duration",
            format!(
                "`{}` is past the longest lifetime granted here ({}); ask for less, or for a renewal later",
                s.duration,
                hours(rules.max_lifetime_h)
            ),
        ));
    }
    if let Some(v) = &s.kubernetes_version {
        plain("spec.kubernetesVersion", v)?;
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
    }
    for (field, text) in [
        ("spec.requester", s.requester.as_deref()),
        ("spec.reason", s.reason.as_deref()),
    ] {
        if let Some(t) = text {
            plain(field, t)?;
        }
    }
    Ok(Request {
        name: Some(name),
        team: s.team.clone(),
        shape: Some(s.shape.clone()),
        pools: offer.pools.clone(),
        count: 1,
        duration_h: Some(h),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operator::resource::ClusterRequestSpec;

    fn catalogue() -> Catalogue {
        Catalogue::read(
            &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("iso-config/example/catalogue"),
        )
        .unwrap()
    }

    fn teams() -> Vec<Team> {
        serde_json::from_str(r#"[{"name":"paiement","vcpu_quota":300},{"name":"logistique"}]"#)
            .unwrap()
    }

    fn check_spec(
        name: &str,
        f: impl FnOnce(&mut ClusterRequestSpec),
    ) -> Result<Request, SpecError> {
        let mut spec = ClusterRequestSpec {
            team: "paiement".into(),
            shape: "standard".into(),
            duration: "72h".into(),
            ..Default::default()
        };
        f(&mut spec);
        let rules = Rules {
            versions: vec!["v1.32.9+rke2r1".into()],
            ..Rules::default()
        };
        check(
            &ClusterRequest::new(name, spec),
            &catalogue(),
            &rules,
            &teams(),
        )
    }

    #[test]
    fn a_good_spec_resolves_to_the_catalogue_pools() {
        let r = check_spec("ci-a", |_| {}).unwrap();
        assert_eq!(r.pools.len(), 2);
        assert_eq!(r.duration_h, Some(72.0));
        assert!(
            check_spec("ci-a", |s| s.kubernetes_version =
                Some("v1.32.9+rke2r1".into()))
            .is_ok()
        );
        assert!(check_spec("ci-a", |s| s.duration = "90d".into()).is_ok());
    }

    #[test]
    fn each_bad_field_is_named_with_what_to_do() {
        let e = |name: &str, f: fn(&mut ClusterRequestSpec)| {
            check_spec(name, f).unwrap_err().to_string()
        };
        assert_eq!(
            e("ci", |s| s.team = "paiemnt".into()),
            "spec.team: no team `paiemnt` has a quota; teams: paiement, logistique (did you mean `paiement`?)"
        );
        assert_eq!(
            e("ci", |s| s.shape = "huge".into()),
            "spec.shape: `huge` is not in the catalogue; shapes: large, standard"
        );
        assert_eq!(
            e("ci", |s| s.duration = "-5h".into()),
            "spec.duration: `-5h` does not start with a number"
        );
        assert_eq!(
            e("ci", |s| s.duration = "91d".into()),
            "spec.duration: `91d` is past the longest lifetime granted here (90d); ask for less, or for a renewal later"
        );
        assert!(e("ci", |s| s.duration = String::new()).starts_with("spec.duration: empty"));
        assert_eq!(
            e("ci", |s| s.kubernetes_version = Some("v1.20.0".into())),
            "spec.kubernetesVersion: `v1.20.0` is not offered; allowed: v1.33.5+rke2r1 (the catalogue's), v1.32.9+rke2r1"
        );
        assert!(
            e("ci", |s| s.reason = Some("x".repeat(2000))).starts_with("spec.reason: 2000 bytes")
        );
        assert_eq!(
            e("ci", |s| s.requester = Some("\u{1b}[31mroot".into())),
            "spec.requester: `\\u{1b}[31mroot` holds control characters; write plain text"
        );
        assert!(
            e("Not_A_Name", |_| {})
                .starts_with("metadata.name: `Not_A_Name` cannot name a Rancher cluster")
        );
    }
}
