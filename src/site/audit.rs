//! The Kubernetes API server's audit policy (`audit.k8s.io/v1` `Policy`): the type, the
//! checks kube-apiserver makes when it loads one, whether it logs anything, and the policy
//! rackplan ships.
//!
//! The type follows k8s.io/apiserver `pkg/apis/audit/v1/types.go` (`Policy`, `PolicyRule`,
//! `GroupResources`, field names as their JSON tags). Loading follows `pkg/audit/policy/
//! reader.go` `LoadPolicyFromBytes`: the group version must be `audit.k8s.io/v1`, the rules
//! pass `pkg/apis/audit/validation/validation.go` `ValidatePolicy` (a known level, known
//! omitted stages, non-resource URLs that start with `/` and end any `*`, no rule for both
//! resources and non-resource URLs, DNS-subdomain groups, `resourceNames` only with
//! `resources`), and a policy without rules is refused. One difference: kube-apiserver falls
//! back to lenient decoding (unknown keys dropped, with a warning in its log); here an
//! unknown key is an error, because a misspelt `resources` would widen a rule silently.
//!
//! Whether a policy logs anything follows `pkg/audit/policy/checker.go`: the first rule that
//! matches a request decides its level, and a request no rule matches is not logged. So a
//! policy logs something when a rule above `None` comes before any rule that matches every
//! request at `None`. RKE2 writes a policy of one `level: None` rule when it is told a
//! policy path and finds no file there (rke2 `pkg/podtemplate/utils.go`
//! `WriteDefaultPolicyFile`): that policy logs nothing.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::files::yaml::{InputError, Seg};
use crate::path;

/// The only group version kube-apiserver loads a policy from.
pub(crate) const API_VERSION: &str = "audit.k8s.io/v1";

/// How much of a request is logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    None,
    Metadata,
    Request,
    RequestResponse,
}

/// An audit policy as kube-apiserver reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AuditPolicy {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) metadata: Option<serde_json::Value>,
    #[serde(default)]
    pub(crate) rules: Vec<PolicyRule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) omit_stages: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) omit_managed_fields: bool,
}

/// One rule: the level of the requests it matches (all of its lists must match; an empty
/// list matches everything).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PolicyRule {
    pub(crate) level: Level,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) users: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) user_groups: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) verbs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resources: Vec<GroupResources>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) namespaces: Vec<String>,
    #[serde(
        default,
        rename = "nonResourceURLs",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub(crate) non_resource_urls: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) omit_stages: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) omit_managed_fields: Option<bool>,
}

/// Resources of one API group (`""` is the core group).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GroupResources {
    #[serde(default)]
    pub(crate) group: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resources: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) resource_names: Vec<String>,
}

/// A policy kube-apiserver would refuse: the key and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PolicyProblem {
    pub(crate) key: Vec<Seg>,
    pub(crate) message: String,
}

const STAGES: [&str; 4] = [
    "RequestReceived",
    "ResponseStarted",
    "ResponseComplete",
    "Panic",
];

impl PolicyRule {
    /// True when the rule matches every request (no list narrows it).
    fn matches_everything(&self) -> bool {
        self.users.is_empty()
            && self.user_groups.is_empty()
            && self.verbs.is_empty()
            && self.resources.is_empty()
            && self.namespaces.is_empty()
            && self.non_resource_urls.is_empty()
    }
}

impl AuditPolicy {
    /// The index of the first rule that logs something and that some request can reach,
    /// or `None` when the policy logs nothing.
    pub(crate) fn first_logging_rule(&self) -> Option<usize> {
        for (i, r) in self.rules.iter().enumerate() {
            if r.level > Level::None {
                return Some(i);
            }
            if r.matches_everything() {
                return None;
            }
        }
        None
    }

    /// What kube-apiserver would refuse in this policy (empty when it loads).
    pub(crate) fn problems(&self) -> Vec<PolicyProblem> {
        let mut out = Vec::new();
        let mut say = |key: Vec<Seg>, message: String| out.push(PolicyProblem { key, message });
        if self.api_version != API_VERSION {
            say(
                path!["apiVersion"],
                format!(
                    "`{}`: kube-apiserver loads an audit policy from `{API_VERSION}` only",
                    self.api_version
                ),
            );
        }
        if self.kind != "Policy" {
            say(
                path!["kind"],
                format!("`{}`: an audit policy is kind `Policy`", self.kind),
            );
        }
        if self.rules.is_empty() {
            say(
                path!["rules"],
                "a policy with no rules: kube-apiserver refuses it (\"loaded illegal policy with 0 rules\")".into(),
            );
        }
        for (i, s) in self.omit_stages.iter().enumerate() {
            if !STAGES.contains(&s.as_str()) {
                say(
                    path!["omitStages", i],
                    format!("`{s}`: allowed stages are {}", STAGES.join(", ")),
                );
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            for (j, s) in r.omit_stages.iter().enumerate() {
                if !STAGES.contains(&s.as_str()) {
                    say(
                        path!["rules", i, "omitStages", j],
                        format!("`{s}`: allowed stages are {}", STAGES.join(", ")),
                    );
                }
            }
            for (j, u) in r.non_resource_urls.iter().enumerate() {
                if u == "*" {
                    continue;
                }
                if !u.starts_with('/') {
                    say(
                        path!["rules", i, "nonResourceURLs", j],
                        format!("`{u}`: non-resource URL rules must begin with `/`"),
                    );
                }
                if u.len() > 1 && u[..u.len() - 1].contains('*') {
                    say(
                        path!["rules", i, "nonResourceURLs", j],
                        format!("`{u}`: a `*` wildcard must be the last character"),
                    );
                }
            }
            if !r.non_resource_urls.is_empty()
                && (!r.resources.is_empty() || !r.namespaces.is_empty())
            {
                say(
                    path!["rules", i, "nonResourceURLs"],
                    "a rule cannot apply to both resources (or namespaces) and non-resource URLs"
                        .into(),
                );
            }
            for (j, g) in r.resources.iter().enumerate() {
                if !g.group.is_empty() && g.group != "*" && !is_dns_subdomain(&g.group) {
                    say(
                        path!["rules", i, "resources", j, "group"],
                        format!(
                            "`{}` is not an API group (a DNS subdomain, without a version: `rbac.authorization.k8s.io`)",
                            g.group
                        ),
                    );
                }
                if !g.resource_names.is_empty() && g.resources.is_empty() {
                    say(
                        path!["rules", i, "resources", j, "resourceNames"],
                        "`resourceNames` needs at least one resource".into(),
                    );
                }
            }
        }
        out
    }

    /// The policy as one line of JSON, the form the catalogue carries (kube-apiserver reads
    /// JSON or YAML).
    pub(crate) fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a policy serializes")
    }
}

/// An RFC 1123 subdomain: dot-separated labels, 253 characters at most.
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(|l| super::types::is_dns_label(l, 63))
}

/// Parse and check the policy text `origin` holds; errors point into that text.
pub(crate) fn load(origin: &Path, text: &str) -> Result<AuditPolicy, InputError> {
    let (policy, source): (AuditPolicy, _) = crate::files::yaml::parse(origin, text)?;
    if let Some(p) = policy.problems().into_iter().next() {
        return Err(source.error_at(
            &p.key,
            p.message,
            Some("see the Kubernetes audit policy reference (audit.k8s.io/v1 Policy)".into()),
        ));
    }
    Ok(policy)
}

fn rule(level: Level) -> PolicyRule {
    PolicyRule {
        level,
        users: Vec::new(),
        user_groups: Vec::new(),
        verbs: Vec::new(),
        resources: Vec::new(),
        namespaces: Vec::new(),
        non_resource_urls: Vec::new(),
        omit_stages: Vec::new(),
        omit_managed_fields: None,
    }
}

fn group(group: &str, resources: &[&str]) -> GroupResources {
    GroupResources {
        group: group.into(),
        resources: resources.iter().map(|s| (*s).to_string()).collect(),
        resource_names: Vec::new(),
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// rackplan's policy, rule by rule (the first match decides):
/// 1. nothing for health, version, metrics and discovery reads (non-resource URLs);
/// 2. nothing for events (every controller writes them, all day);
/// 3. nothing for lease renewals by kubelets and control-plane controllers;
/// 4. nothing for kube-proxy's watches and the nodes reading their own Node;
/// 5. Secrets, ConfigMaps, service-account tokens and TokenReviews at `Metadata` only, so
///    their bodies (credentials) never reach the log;
/// 6. the request body of every change to workloads (pods, replication controllers,
///    service accounts, `apps`, `batch`) and to RBAC;
/// 7. `Metadata` (who, what, when, the answer's code) for everything else.
///
/// The `RequestReceived` stage is omitted: every request is logged once it is answered.
pub(crate) fn default_policy() -> AuditPolicy {
    let changes = strings(&["create", "update", "patch", "delete", "deletecollection"]);
    let mut health = rule(Level::None);
    health.non_resource_urls = strings(&[
        "/healthz*",
        "/livez*",
        "/readyz*",
        "/version",
        "/metrics",
        "/openapi/*",
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
    ]);
    let mut events = rule(Level::None);
    events.resources = vec![group("", &["events"]), group("events.k8s.io", &["events"])];
    let mut leases = rule(Level::None);
    leases.verbs = strings(&["get", "update"]);
    leases.namespaces = strings(&["kube-node-lease", "kube-system"]);
    leases.resources = vec![group("coordination.k8s.io", &["leases"])];
    let mut proxy = rule(Level::None);
    proxy.users = strings(&["system:kube-proxy"]);
    proxy.verbs = strings(&["watch"]);
    proxy.resources = vec![
        group("", &["endpoints", "services", "services/status"]),
        group("discovery.k8s.io", &["endpointslices"]),
    ];
    let mut nodes = rule(Level::None);
    nodes.user_groups = strings(&["system:nodes"]);
    nodes.verbs = strings(&["get"]);
    nodes.resources = vec![group("", &["nodes", "nodes/status"])];
    let mut secrets = rule(Level::Metadata);
    secrets.resources = vec![
        group("", &["secrets", "configmaps", "serviceaccounts/token"]),
        group("authentication.k8s.io", &["tokenreviews"]),
    ];
    let mut workloads = rule(Level::Request);
    workloads.verbs = changes;
    workloads.resources = vec![
        group(
            "",
            &[
                "pods",
                "pods/ephemeralcontainers",
                "replicationcontrollers",
                "serviceaccounts",
            ],
        ),
        group("apps", &[]),
        group("batch", &[]),
        group("rbac.authorization.k8s.io", &[]),
    ];
    AuditPolicy {
        api_version: API_VERSION.into(),
        kind: "Policy".into(),
        metadata: None,
        rules: vec![
            health,
            events,
            leases,
            proxy,
            nodes,
            secrets,
            workloads,
            rule(Level::Metadata),
        ],
        omit_stages: strings(&["RequestReceived"]),
        omit_managed_fields: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<AuditPolicy, InputError> {
        load(Path::new("policy.yaml"), text)
    }

    #[test]
    fn the_default_policy_loads_and_logs() {
        let p = default_policy();
        assert_eq!(p.problems(), Vec::new());
        // Its JSON form reads back the same, through the same checks.
        let back = parse(&p.to_json()).unwrap();
        assert_eq!(back, p);
        let first = p.first_logging_rule().unwrap();
        assert_eq!(p.rules[first].level, Level::Metadata);
        // Secrets and TokenReviews are matched before the rule that logs bodies.
        let secrets = p
            .rules
            .iter()
            .position(|r| {
                r.resources
                    .iter()
                    .any(|g| g.resources.contains(&"secrets".into()))
            })
            .unwrap();
        let bodies = p
            .rules
            .iter()
            .position(|r| r.level >= Level::Request)
            .unwrap();
        assert!(secrets < bodies);
        assert!(
            p.rules[..bodies]
                .iter()
                .flat_map(|r| &r.resources)
                .any(|g| g.group == "authentication.k8s.io"
                    && g.resources.contains(&"tokenreviews".into()))
        );
        assert!(
            p.rules[bodies]
                .resources
                .iter()
                .any(|g| g.group == "rbac.authorization.k8s.io")
        );
    }

    #[test]
    fn rke2s_own_default_logs_nothing() {
        let p = parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nmetadata:\n  creationTimestamp: null\nrules:\n- level: None\n").unwrap();
        assert_eq!(p.first_logging_rule(), None);
        // A catch-all None first hides every rule after it.
        let p = parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  omitStages: [Panic]\n- level: Metadata\n").unwrap();
        assert_eq!(p.first_logging_rule(), None);
        // A narrow None first does not.
        let p = parse("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  verbs: [watch]\n- level: RequestResponse\n").unwrap();
        assert_eq!(p.first_logging_rule(), Some(1));
    }

    #[test]
    fn what_kube_apiserver_refuses_is_refused_at_its_key() {
        let cases = [
            (
                "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: Metadata\n",
                "apiVersion",
                "audit.k8s.io/v1",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
                "rules",
                "0 rules",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n",
                "rules[0].level",
                "unknown variant",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [\"/he*lthz\"]\n",
                "rules[0].nonResourceURLs[0]",
                "last character",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [healthz]\n",
                "rules[0].nonResourceURLs[0]",
                "begin with",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  nonResourceURLs: [/healthz]\n  namespaces: [a]\n",
                "rules[0].nonResourceURLs",
                "both",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  resources:\n  - group: rbac.authorization.k8s.io/v1\n",
                "rules[0].resources[0].group",
                "API group",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  resources:\n  - group: apps\n    resourceNames: [x]\n",
                "rules[0].resources[0].resourceNames",
                "at least one",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Started]\nrules:\n- level: Request\n",
                "omitStages[0]",
                "allowed stages",
            ),
            (
                "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Request\n  resource: [pods]\n",
                "rules[0]",
                "unknown key `resource`",
            ),
        ];
        for (text, key, says) in cases {
            let e = parse(text).unwrap_err();
            assert!(e.key.starts_with(key), "{text}: {e}");
            assert!(e.to_string().contains(says), "{text}: {e}");
        }
    }
}
