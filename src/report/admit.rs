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
    if let Some(x) = &d.delivery {
        s.push_str(&super::delivery::admit_block(x));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::delivery::predict_tests::inputs;
    use crate::simulate::delivery::{ImageKind, answer};
    use crate::simulate::failure::headroom::HeadroomVerdict;
    use crate::simulate::questions::Quota;

    fn decision(delivery: Option<crate::simulate::delivery::DeliveryAnswer>) -> Decision {
        Decision {
            admitted: true,
            reasons: Vec::new(),
            request: Some("paiement-ci".into()),
            team: "paiement".into(),
            shape: Some("standard".into()),
            count: 1,
            at: "2027-03-01".into(),
            expires: None,
            quota: Quota {
                used: 72.0,
                requested: 36.0,
                allowed: Some(300.0),
                within: true,
            },
            headroom_before: HeadroomVerdict::Pass,
            headroom_after: HeadroomVerdict::Pass,
            strands: Vec::new(),
            clusters_before: 60,
            clusters_after: 61,
            delivery,
        }
    }

    /// At 80 columns: the answer, the delivery's time against its target, the critical
    /// path, the pre-flight; no line past 80.
    #[test]
    fn the_answer_with_its_delivery_at_80_columns() {
        crate::report::set_width(80);
        let copy = answer(&inputs(ImageKind::Prepared, false, true, 1), None);
        let text = crate::report::wrap_prose_at(&admit_text(&decision(Some(copy))), 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        insta::assert_snapshot!("admit_prepared_80", text);
        let never = answer(&inputs(ImageKind::Generic, false, false, 96), None);
        let text = crate::report::wrap_prose_at(&admit_text(&decision(Some(never))), 80);
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        insta::assert_snapshot!("admit_never_80", text);
        // Without a delivery (the operator's decisions), the answer is as it was.
        assert_eq!(admit_text(&decision(None)).lines().count(), 4);
    }
}
