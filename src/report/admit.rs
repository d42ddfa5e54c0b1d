//! `rackplan admit`: the answer first, then the quota and the failures behind it.

use crate::simulate::questions::Decision;

pub(crate) fn admit_text(d: &Decision) -> String {
    let what = format!(
        "{}{} x {} for team {}",
        d.request
            .as_deref()
            .map(|n| format!("request {n}: "))
            .unwrap_or_default(),
        d.count,
        d.shape.as_deref().unwrap_or("cluster"),
        d.team
    );
    let mut s = if d.admitted {
        format!("ADMITTED  {what}\n")
    } else {
        format!("REFUSED  {what}\n")
    };
    for r in &d.reasons {
        s.push_str(&format!("  - {r}\n"));
    }
    s.push_str(&format!("quota     {}\n", d.quota_line()));
    s.push_str(&format!(
        "headroom  node and rack failures: {} with {} clusters, {} with the request ({} clusters)\n",
        d.headroom_before, d.clusters_before, d.headroom_after, d.clusters_after
    ));
    if let Some(e) = &d.expires {
        s.push_str(&format!("expires   {e} (judged at {})\n", d.at));
    } else {
        s.push_str(&format!("judged at {}; no expiry\n", d.at));
    }
    s
}
