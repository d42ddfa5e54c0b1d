//! `check --catalogue`: a heading with where the audit policy and the snapshots come from,
//! one row per shape and promise (the shape named on its first row), and a closing count.

use super::{table, wrap_prose};
use crate::plan::compliance::Verdict;
use crate::render::CatalogueReview;

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Kept => "kept",
        Verdict::Broken => "NOT KEPT",
        Verdict::Unknown => "unknown",
    }
}

/// The promises of every shape, then what is not kept.
pub(crate) fn promises_table(r: &CatalogueReview) -> String {
    let mut out = wrap_prose(&format!(
        "Catalogue of site `{}` (scenario `{}`). Audit policy: {}. etcd snapshots: {}.",
        r.site,
        r.scenario,
        r.audit_policy,
        r.snapshot_target.as_ref().map_or_else(
            || "stay on each cluster's control-plane VMs (no compliance.snapshot_target)"
                .to_string(),
            |t| format!("also go to {t}")
        )
    ));
    out.push('\n');
    let mut t = table(&["shape", "promise", "verdict", "what the objects say"]);
    for s in &r.shapes {
        for (i, p) in s.promises.iter().enumerate() {
            let shape = if i == 0 {
                format!("{}\n({} image)", s.shape, s.image_kind)
            } else {
                String::new()
            };
            let detail = if p.verdict == Verdict::Kept {
                p.detail.clone()
            } else {
                format!("{} ({})", p.detail, p.key)
            };
            t.add_row(vec![
                shape,
                p.promise.title().to_string(),
                verdict(p.verdict).to_string(),
                detail,
            ]);
        }
    }
    out.push_str(&t.to_string());
    out.push('\n');
    let count = |v: Verdict| {
        r.shapes
            .iter()
            .flat_map(|s| &s.promises)
            .filter(|p| p.verdict == v)
            .count()
    };
    out.push_str(&format!(
        "{} shape(s): {} promise(s) kept, {} not kept, {} unknown\n",
        r.shapes.len(),
        count(Verdict::Kept),
        count(Verdict::Broken),
        count(Verdict::Unknown)
    ));
    out
}
