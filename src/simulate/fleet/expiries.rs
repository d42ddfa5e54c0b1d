//! The expiries a dump already has scheduled: its `rackplan.io/v1alpha1` ClusterRequests
//! that hold a cluster (Admitted, Provisioning, Ready, Expiring) with an `expiresAt`, as
//! `rackplan operator` writes them. Their clusters run in the dump; at `expiresAt` the
//! operator deletes them. The review lists them beside the timeline; the timeline's
//! verdicts still count those clusters as running (the capacity they free is not credited
//! back), so a month after an expiry is judged on the safe side.

use serde::Serialize;
use serde_json::Value;

/// One scheduled expiry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Expiry {
    /// `namespace/name` of the ClusterRequest.
    pub request: String,
    pub team: String,
    pub shape: String,
    /// The Rancher cluster it removes.
    pub cluster: String,
    pub phase: String,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub expires_at: String,
    /// `YYYY-MM`, the timeline's month of it.
    pub month: String,
}

const HOLDING: [&str; 4] = ["Admitted", "Provisioning", "Ready", "Expiring"];

fn text<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty() && s.len() <= 253 && !s.chars().any(char::is_control))
}

/// The scheduled expiries among a dump's Rancher-side objects, soonest first; a request
/// whose `expiresAt` does not parse is left out with a note.
pub(crate) fn scheduled(objects: &[Value], notes: &mut Vec<String>) -> Vec<Expiry> {
    let mut out = Vec::new();
    for o in objects {
        if o.get("kind").and_then(Value::as_str) != Some("ClusterRequest")
            || !o
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| a.starts_with("rackplan.io/"))
        {
            continue;
        }
        let Some(phase) = text(o, "/status/phase").filter(|p| HOLDING.contains(p)) else {
            continue;
        };
        let name = text(o, "/metadata/name").unwrap_or("?");
        let ns = text(o, "/metadata/namespace").unwrap_or("default");
        let request = format!("{ns}/{name}");
        let Some(at) = text(o, "/status/expiresAt") else {
            continue;
        };
        let Ok(t) = crate::clock::parse_at(at) else {
            notes.push(format!(
                "ClusterRequest {request}: status.expiresAt `{}` is not a time; its expiry is left out",
                at.chars().take(40).collect::<String>()
            ));
            continue;
        };
        let expires_at = crate::clock::format_at(t, false);
        out.push(Expiry {
            month: expires_at[..7].to_string(),
            expires_at,
            team: text(o, "/spec/team").unwrap_or("?").to_string(),
            shape: text(o, "/spec/shape").unwrap_or("?").to_string(),
            cluster: text(o, "/status/clusterName").unwrap_or(name).to_string(),
            phase: phase.to_string(),
            request,
        });
    }
    out.sort_by(|a, b| (&a.expires_at, &a.request).cmp(&(&b.expires_at, &b.request)));
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(name: &str, phase: &str, at: &str) -> Value {
        json!({"apiVersion": "rackplan.io/v1alpha1", "kind": "ClusterRequest",
               "metadata": {"name": name, "namespace": "fleet-default"},
               "spec": {"team": "paiement", "shape": "standard", "duration": "14d"},
               "status": {"phase": phase, "expiresAt": at, "clusterName": name}})
    }

    #[test]
    fn holding_requests_with_an_expiry_soonest_first() {
        let objects = vec![
            request("b", "Ready", "2027-03-01T00:00:00Z"),
            request("a", "Provisioning", "2027-02-13T09:00:00Z"),
            request("gone", "Expired", "2027-01-01T00:00:00Z"),
            request("no", "Refused", "2027-01-01T00:00:00Z"),
            request("bad", "Ready", "soon"),
            json!({"apiVersion": "provisioning.cattle.io/v1", "kind": "Cluster", "metadata": {"name": "x"}}),
        ];
        let mut notes = Vec::new();
        let e = scheduled(&objects, &mut notes);
        let names: Vec<&str> = e.iter().map(|x| x.request.as_str()).collect();
        assert_eq!(names, ["fleet-default/a", "fleet-default/b"]);
        assert_eq!(e[0].month, "2027-02");
        assert_eq!(e[0].expires_at, "2027-02-13T09:00:00Z");
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("fleet-default/bad"), "{notes:?}");
    }
}
