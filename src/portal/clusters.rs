//! The "my clusters" pages: each request of the user's teams with its phase, the
//! operator's message, its expiry and delivery, the access instructions once Ready, and
//! the actions the team may take (extend, protect, delete), each a form posted back here.

use super::pages::{Unread, csrf_field, duration_words, layout, url_part};
use crate::operator::resource::{Delivery, PROTECT_ANNOTATION};
use crate::operator::{ClusterRequest, Phase};
use crate::report::escape::html as esc;

/// The requests of one team namespace, or why they could not be listed.
pub struct TeamRequests {
    pub namespace: String,
    pub team: String,
    pub requests: Result<Vec<ClusterRequest>, Unread>,
}

fn phase(cr: &ClusterRequest) -> &'static str {
    cr.status
        .as_ref()
        .and_then(|s| s.phase)
        .map_or("Pending", Phase::as_str)
}

fn protected(cr: &ClusterRequest) -> bool {
    cr.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(PROTECT_ANNOTATION))
        .is_some_and(|v| v == "true")
}

/// How long the delivery took, or is predicted to take, in words.
pub fn delivery_words(d: &Delivery) -> String {
    if let Some(s) = d.reached.get(crate::operator::delivery::CLUSTER_READY) {
        return format!(
            "delivered in {} (promised within {})",
            duration_words(*s),
            duration_words(d.target_seconds)
        );
    }
    match (d.predicted_seconds, &d.never) {
        (Some(p), _) => {
            let range = match (d.low_seconds, d.high_seconds) {
                (Some(l), Some(h)) => {
                    format!(", range {} to {}", duration_words(l), duration_words(h))
                }
                // The slow end never finishes (the node driver gives the VM up).
                (Some(l), None) => format!(", range {} to never", duration_words(l)),
                _ => String::new(),
            };
            format!(
                "delivery predicted in {}{range} ({}); promised within {}",
                duration_words(p),
                d.predicted_from,
                duration_words(d.target_seconds)
            )
        }
        (None, Some(never)) => format!("never delivered as things stand: {never}"),
        (None, None) => format!("promised within {}", duration_words(d.target_seconds)),
    }
}

pub(super) fn link(ns: &str, name: &str) -> String {
    format!("/clusters/{}/{}", url_part(ns), url_part(name))
}

fn row(cr: &ClusterRequest) -> String {
    let st = cr.status.clone().unwrap_or_default();
    let name = cr.metadata.name.clone().unwrap_or_default();
    let ns = cr.metadata.namespace.clone().unwrap_or_default();
    let p = phase(cr);
    format!(
        "<li class=\"card request\"><a href=\"{}\"><strong>{}</strong></a> \
         <span class=\"phase {}\">{}</span>{}<p class=\"small\">{} · {}</p><p>{}</p>{}</li>",
        esc(&link(&ns, &name)),
        esc(&name),
        p.to_ascii_lowercase(),
        p,
        if protected(cr) {
            " <span class=\"phase protected\">protected</span>"
        } else {
            ""
        },
        esc(&cr.spec.shape),
        esc(&st
            .expires_at
            .as_ref()
            .map_or_else(|| "no expiry yet".to_string(), |e| format!("expires {e}"))),
        esc(st.message.as_deref().unwrap_or("not judged yet")),
        st.delivery.as_ref().map_or_else(String::new, |d| format!(
            "<p class=\"small\">{}</p>",
            esc(&delivery_words(d))
        )),
    )
}

/// Every request of the user's teams.
pub fn list(csrf: &str, teams: &[TeamRequests], notice: Option<&str>) -> String {
    let mut b = notice.map_or_else(String::new, |n| {
        format!("<p class=\"notice good\">{}</p>", esc(n))
    });
    if teams.is_empty() {
        b.push_str("<p>You may ask for no team, so there is nothing to show.</p>");
    }
    for t in teams {
        b.push_str(&format!(
            "<h2>{} <span class=\"small\">namespace {}</span></h2>",
            esc(&t.team),
            esc(&t.namespace)
        ));
        match &t.requests {
            Err(why) => b.push_str(&format!("<p class=\"notice bad\">{}</p>", esc(&why.0))),
            Ok(rs) if rs.is_empty() => {
                b.push_str("<p>No request yet. <a href=\"/ask\">Ask for a cluster</a>.</p>");
            }
            Ok(rs) => {
                b.push_str("<ul class=\"requests\">");
                for r in rs {
                    b.push_str(&row(r));
                }
                b.push_str("</ul>");
            }
        }
    }
    layout("My clusters", Some(csrf), &b)
}

fn access(cr: &ClusterRequest) -> String {
    let Some(a) = cr.status.as_ref().and_then(|s| s.access.as_ref()) else {
        return "<p>Access instructions appear here once the cluster is Ready.</p>".into();
    };
    let ui = match &a.ui {
        // Only a web address becomes a link; anything else is shown as text.
        Some(u) if u.starts_with("https://") || u.starts_with("http://") => format!(
            "<p>In Rancher: <a href=\"{}\" rel=\"noreferrer\">{}</a></p>",
            esc(u),
            esc(u)
        ),
        Some(u) => format!("<p>In Rancher: {}</p>", esc(u)),
        None => String::new(),
    };
    let bindings: String = a
        .bindings
        .iter()
        .map(|b| format!("<li>{} is {}</li>", esc(&b.principal), esc(&b.role)))
        .collect();
    format!(
        "<p>Rancher cluster <code>{}</code></p>{ui}<p>Your kubeconfig:</p><pre>{}</pre><ul>{bindings}</ul>",
        esc(&a.cluster_id),
        esc(&a.kubeconfig)
    )
}

/// One request in full, with its actions.
pub fn detail(csrf: &str, cr: &ClusterRequest, notice: Option<&str>) -> String {
    let st = cr.status.clone().unwrap_or_default();
    let name = cr.metadata.name.clone().unwrap_or_default();
    let ns = cr.metadata.namespace.clone().unwrap_or_default();
    let mut b = notice.map_or_else(String::new, |n| {
        format!("<p class=\"notice good\">{}</p>", esc(n))
    });
    let facts = [
        ("Namespace", ns.clone()),
        ("Phase", phase(cr).to_string()),
        ("Shape", cr.spec.shape.clone()),
        ("Lifetime asked", cr.spec.duration.clone()),
        (
            "Admitted",
            st.admitted_at.clone().unwrap_or_else(|| "not yet".into()),
        ),
        (
            "Expires",
            st.expires_at
                .clone()
                .unwrap_or_else(|| "no expiry yet".into()),
        ),
        (
            "Delivery",
            st.delivery
                .as_ref()
                .map_or_else(|| "not predicted yet".into(), delivery_words),
        ),
        (
            "Protected",
            if protected(cr) {
                "yes: held past expiry and deletion"
            } else {
                "no"
            }
            .into(),
        ),
        ("Reason", cr.spec.reason.clone().unwrap_or_default()),
    ];
    b.push_str("<section class=\"card\"><dl>");
    for (k, v) in facts {
        b.push_str(&format!("<dt>{k}</dt><dd>{}</dd>", esc(&v)));
    }
    b.push_str(&format!(
        "</dl><p id=\"message\">{}</p></section><section class=\"card\"><h2>Access</h2>{}</section>",
        esc(st.message.as_deref().unwrap_or("not judged yet")),
        access(cr)
    ));
    let action = esc(&link(&ns, &name));
    let field = csrf_field(csrf);
    let protect = if protected(cr) {
        ("unprotect", "Stop protecting")
    } else {
        ("protect", "Protect")
    };
    b.push_str(&format!(
        "<section class=\"card\"><h2>Actions</h2>\
         <form method=\"post\" action=\"{action}\">{field}\
         <label for=\"duration\">New lifetime, from admission (within your team's cap)</label>\
         <input id=\"duration\" name=\"duration\" value=\"{}\" maxlength=\"32\" required>\
         <button type=\"submit\" name=\"action\" value=\"extend\">Extend</button></form>\
         <form method=\"post\" action=\"{action}\">{field}\
         <button type=\"submit\" name=\"action\" value=\"{}\">{}</button></form>\
         <form method=\"post\" action=\"{action}\">{field}\
         <label><input type=\"checkbox\" name=\"confirm\" value=\"yes\" required> delete this cluster and its request</label>\
         <button type=\"submit\" name=\"action\" value=\"delete\" class=\"danger\">Delete</button></form></section>",
        esc(&cr.spec.duration),
        protect.0,
        protect.1
    ));
    layout(&format!("Cluster {name}"), Some(csrf), &b)
}
