//! The teams a factory serves, as the operator reads them at every judgement: the
//! scenario's `teams` (quota, Rancher principals, role, longest lifetime), with the quota
//! ConfigMap's keys over them (`<team>: <vCPU>`, `<team>.principals: a,b`,
//! `<team>.role: cluster-owner`, `<team>.max-lifetime: 30d`; a team named only there is
//! added). A team name must be a label value (it labels namespaces and clusters); a
//! principal must read as Rancher's `<provider>_<type>://<id>` or `local://<id>`; the role
//! is `cluster-member` (the default) or `cluster-owner`. A team whose entry is wrong is
//! kept out, and its requests are refused with the entry named.
//!
//! Which team a request belongs to is not the request's to say: it is the team of the
//! namespace it was made in (the namespace's `rackplan.io/team` label, which only the
//! platform team sets), so the API server's own RBAC on the team namespaces decides who
//! may spend a team's quota.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Namespace;
use kube::ResourceExt as _;

use super::resource::TEAM_LABEL;
use super::text::shown;
use crate::simulate::scenario::Team;

/// The role templates a team may be given on its clusters.
pub const ROLES: [&str; 2] = ["cluster-member", "cluster-owner"];
/// Most principals one team names.
const MAX_PRINCIPALS: usize = 16;
const MAX_PRINCIPAL: usize = 512;

/// One team, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct TeamConfig {
    pub name: String,
    pub vcpu_quota: Option<f64>,
    /// Rancher principals granted the role on each cluster delivered to the team.
    pub principals: Vec<String>,
    pub role: String,
    /// The longest lifetime, hours, counted from admission; `None`: the operator's.
    pub max_lifetime_h: Option<f64>,
}

/// Every team, and the entries that could not be read (team -> why).
#[derive(Debug, Clone, Default)]
pub struct Teams {
    pub by_name: BTreeMap<String, TeamConfig>,
    pub bad: BTreeMap<String, String>,
}

/// A principal is a user (bound as `userPrincipalName`) or a group (`groupPrincipalName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    User,
    Group,
}

/// Why a text is not a Rancher principal id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotAPrincipal(String);

/// What kind of principal `p` is, or why it is not one. Rancher's ids are
/// `<provider>_user://`, `_group://`, `_team://`, `_org://` (GitHub), and `local://u-...`
/// for local users, `local://<group>` for local groups.
pub fn principal_kind(p: &str) -> Result<PrincipalKind, NotAPrincipal> {
    if p.len() > MAX_PRINCIPAL || p.chars().any(char::is_control) {
        return Err(NotAPrincipal(format!(
            "`{}` is not a principal id (at most {MAX_PRINCIPAL} plain characters)",
            shown(p)
        )));
    }
    let Some((scheme, id)) = p.split_once("://") else {
        return Err(NotAPrincipal(format!(
            "`{}` is not a Rancher principal id: write `<provider>_<type>://<id>` (`github_team://1234`, `okta_group://platform`) or `local://<id>`",
            shown(p)
        )));
    };
    if id.is_empty() || id.chars().any(char::is_whitespace) {
        return Err(NotAPrincipal(format!(
            "`{}` has no id after `://`",
            shown(p)
        )));
    }
    if scheme == "local" {
        return Ok(if id.starts_with("u-") {
            PrincipalKind::User
        } else {
            PrincipalKind::Group
        });
    }
    match scheme.rsplit_once('_') {
        Some((provider, kind))
            if !provider.is_empty()
                && provider
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) =>
        {
            match kind {
                "user" => Ok(PrincipalKind::User),
                "group" | "team" | "org" => Ok(PrincipalKind::Group),
                _ => Err(NotAPrincipal(format!(
                    "`{}`: `{kind}` is not a principal type (user, group, team or org)",
                    shown(p)
                ))),
            }
        }
        _ => Err(NotAPrincipal(format!(
            "`{}` is not a Rancher principal id: write `<provider>_<type>://<id>` or `local://<id>`",
            shown(p)
        ))),
    }
}

/// A team namespace's name and team (its `rackplan.io/team` label, when it is a label
/// value).
pub fn team_of_namespace(n: &Namespace) -> Option<(String, String)> {
    n.labels()
        .get(TEAM_LABEL)
        .filter(|t| is_label_value(t))
        .map(|t| (n.name_any(), t.clone()))
}

/// Whether `s` is a Kubernetes label value (at most 63 characters, alphanumerics with
/// `-`, `_` or `.` inside).
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    !s.is_empty()
        && s.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

fn split_list(v: &str) -> Vec<String> {
    v.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

impl Teams {
    /// The scenario's teams with the ConfigMap's data (`source` names it in messages) over
    /// them.
    pub fn resolve(
        scenario: &[Team],
        configmap: Option<(&str, &BTreeMap<String, String>)>,
    ) -> Teams {
        let mut out = Teams::default();
        let mut raw: BTreeMap<String, TeamConfig> = BTreeMap::new();
        for t in scenario {
            let max = match t.max_lifetime.as_deref() {
                Some(v) => match crate::simulate::scenario::request::parse_duration_h(v) {
                    Ok(h) => Some(h),
                    Err(e) => {
                        out.bad.insert(
                            t.name.clone(),
                            format!("the scenario's team {}: max_lifetime: {e}", t.name),
                        );
                        continue;
                    }
                },
                None => None,
            };
            raw.insert(
                t.name.clone(),
                TeamConfig {
                    name: t.name.clone(),
                    vcpu_quota: t.vcpu_quota,
                    principals: t.principals.clone(),
                    role: t.role.clone().unwrap_or_else(|| ROLES[0].to_string()),
                    max_lifetime_h: max,
                },
            );
        }
        if let Some((source, data)) = configmap {
            for (key, v) in data {
                let (team, field) = key.split_once('.').unwrap_or((key.as_str(), ""));
                let at = || format!("{source}: data.{}", shown(key));
                if out.bad.contains_key(team) {
                    continue;
                }
                let entry = raw.entry(team.to_string()).or_insert_with(|| TeamConfig {
                    name: team.to_string(),
                    vcpu_quota: None,
                    principals: Vec::new(),
                    role: ROLES[0].to_string(),
                    max_lifetime_h: None,
                });
                let problem = match field {
                    "" => match v.trim().parse::<f64>() {
                        Ok(q) if q.is_finite() && q >= 0.0 => {
                            entry.vcpu_quota = Some(q);
                            None
                        }
                        _ => Some(format!("`{}` is not a number of vCPU", shown(v))),
                    },
                    "principals" => {
                        entry.principals = split_list(v);
                        None
                    }
                    "role" => {
                        entry.role = v.trim().to_string();
                        None
                    }
                    "max-lifetime" => {
                        match crate::simulate::scenario::request::parse_duration_h(v) {
                            Ok(h) => {
                                entry.max_lifetime_h = Some(h);
                                None
                            }
                            Err(e) => Some(e.to_string()),
                        }
                    }
                    other => Some(format!(
                        "`{}` is not a team setting (`<team>`, `<team>.principals`, `<team>.role`, `<team>.max-lifetime`)",
                        shown(other)
                    )),
                };
                if let Some(p) = problem {
                    out.bad.insert(team.to_string(), format!("{}: {p}", at()));
                }
            }
        }
        for (name, t) in raw {
            if out.bad.contains_key(&name) {
                continue;
            }
            if let Some(why) = t.problem() {
                out.bad.insert(name, why);
                continue;
            }
            out.by_name.insert(name, t);
        }
        out
    }

    /// The teams of `study`'s scenario with `configmap` over them; the study then judges
    /// with these teams' quotas.
    pub fn adopt(
        study: &mut crate::simulate::Study,
        configmap: Option<(&str, &BTreeMap<String, String>)>,
    ) -> Teams {
        let teams = Teams::resolve(&study.scenario.teams, configmap);
        study.scenario.teams = teams.for_study();
        teams
    }

    /// The teams with a quota entry, for `admit`'s judgement.
    pub fn for_study(&self) -> Vec<Team> {
        self.by_name
            .values()
            .map(|t| Team {
                name: t.name.clone(),
                vcpu_quota: t.vcpu_quota,
                ..Team::default()
            })
            .collect()
    }

    pub fn names(&self) -> String {
        self.by_name.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

impl TeamConfig {
    /// Why this entry cannot be used, if it cannot.
    fn problem(&self) -> Option<String> {
        if !is_label_value(&self.name) {
            return Some(format!(
                "team `{}` cannot be a label value (at most 63 letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit): rename it",
                shown(&self.name)
            ));
        }
        if !ROLES.contains(&self.role.as_str()) {
            return Some(format!(
                "team {}: role `{}` is not one a team may be given ({})",
                self.name,
                shown(&self.role),
                ROLES.join(" or ")
            ));
        }
        if self.principals.len() > MAX_PRINCIPALS {
            return Some(format!(
                "team {}: {} principals; at most {MAX_PRINCIPALS}",
                self.name,
                self.principals.len()
            ));
        }
        for p in &self.principals {
            if let Err(e) = principal_kind(p) {
                return Some(format!("team {}: principals: {e}", self.name));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_read_as_users_or_groups_and_anything_else_is_named() {
        assert_eq!(
            principal_kind("github_team://1234"),
            Ok(PrincipalKind::Group)
        );
        assert_eq!(
            principal_kind("okta_group://platform"),
            Ok(PrincipalKind::Group)
        );
        assert_eq!(principal_kind("local://g-abcde"), Ok(PrincipalKind::Group));
        assert_eq!(principal_kind("local://u-abcde"), Ok(PrincipalKind::User));
        assert_eq!(
            principal_kind("activedirectory_user://CN=x,DC=y"),
            Ok(PrincipalKind::User)
        );
        assert!(
            principal_kind("platform")
                .unwrap_err()
                .to_string()
                .contains("not a Rancher principal id")
        );
        assert!(
            principal_kind("github_wizard://1")
                .unwrap_err()
                .to_string()
                .contains("`wizard` is not a principal type")
        );
        assert!(
            principal_kind("okta_group://")
                .unwrap_err()
                .to_string()
                .contains("no id")
        );
    }

    #[test]
    fn label_values() {
        for ok in ["paiement", "team-a", "a.b_c", "x"] {
            assert!(is_label_value(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a b", "équipe", &"x".repeat(64)] {
            assert!(!is_label_value(bad), "{bad}");
        }
    }

    #[test]
    fn the_configmap_overrides_the_scenario_and_bad_entries_keep_their_team_out() {
        let scenario: Vec<Team> = serde_json::from_str(
            r#"[{"name":"paiement","vcpu_quota":80,"principals":["github_team://1"]},{"name":"logistique","vcpu_quota":10}]"#,
        )
        .unwrap();
        let data: BTreeMap<String, String> = [
            ("paiement", "100"),
            ("paiement.role", "cluster-owner"),
            ("paiement.max-lifetime", "30d"),
            ("data", "50"),
            ("data.principals", "okta_group://data, local://u-abc"),
            ("logistique.role", "admin"),
            ("bad team", "5"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let t = Teams::resolve(&scenario, Some(("ConfigMap ns/q", &data)));
        let p = &t.by_name["paiement"];
        assert_eq!(p.vcpu_quota, Some(100.0));
        assert_eq!(p.role, "cluster-owner");
        assert_eq!(p.principals, ["github_team://1"]);
        assert_eq!(p.max_lifetime_h, Some(720.0));
        assert_eq!(t.by_name["data"].principals.len(), 2);
        assert!(
            t.bad["logistique"].contains("role `admin` is not one a team may be given"),
            "{:?}",
            t.bad
        );
        assert!(
            t.bad["bad team"].contains("cannot be a label value"),
            "{:?}",
            t.bad
        );
        assert_eq!(t.names(), "data, paiement");
    }
}
