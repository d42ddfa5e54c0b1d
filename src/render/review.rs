//! `check --catalogue`: each shape of the catalogue as `render` writes it, held to the
//! reference design's promises (the rules of `plan::compliance`), one verdict per promise
//! with the key that decides it.

use serde::Serialize;

use super::RenderError;
use super::offers::offers;
use crate::plan::Inputs;
use crate::plan::compliance::{
    Promise, PromiseCheck, Terms, Verdict, review_cluster, review_machine_config,
};

/// One shape's promises.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ShapeReview {
    pub shape: String,
    /// The image its VMs boot from (`<namespace>/<name>`).
    pub image: String,
    /// `prepared` or `generic`.
    pub image_kind: &'static str,
    /// Every promise, in a fixed order: the cluster's five, then expiry, then boot.
    pub promises: Vec<PromiseCheck>,
}

/// The catalogue against its promises.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CatalogueReview {
    pub site: String,
    /// The scenario whose shapes are offered.
    pub scenario: String,
    /// Where the audit policy comes from: rackplan's default, or the site's file.
    pub audit_policy: String,
    /// Where snapshots go besides the VMs (`s3://bucket/folder at endpoint`); null: nowhere.
    pub snapshot_target: Option<String>,
    pub shapes: Vec<ShapeReview>,
    /// True when every shape keeps every promise (`check --catalogue` exits 0).
    pub all_kept: bool,
}

/// Why `check --catalogue` cannot review.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("site.yaml has no `catalogue:`, so there is no catalogue to check")]
    NoCatalogue,
    #[error(transparent)]
    Render(#[from] RenderError),
}

fn expiry() -> PromiseCheck {
    PromiseCheck {
        promise: Promise::ExpiryEnforced,
        verdict: Verdict::Kept,
        key: "operator/50-operator-deployment.yaml".into(),
        detail: "the operator deletes each cluster it delivers at its request's expiry (at most --max-lifetime, default 90d); a template applied by hand never expires".into(),
    }
}

/// The worst boot verdict of a shape's machine configs, named by its config.
fn boot(configs: &[serde_json::Value]) -> PromiseCheck {
    let mut checks: Vec<PromiseCheck> = configs
        .iter()
        .map(|c| {
            let mut ch = review_machine_config(c);
            let name = c["metadata"]["name"].as_str().unwrap_or("?");
            ch.key = format!("HarvesterConfig {name} {}", ch.key);
            ch
        })
        .collect();
    let rank = |v: Verdict| match v {
        Verdict::Broken => 0,
        Verdict::Unknown => 1,
        Verdict::Kept => 2,
    };
    checks.sort_by_key(|c| rank(c.verdict));
    checks.into_iter().next().unwrap_or(PromiseCheck {
        promise: Promise::NothingInstalledAtBoot,
        verdict: Verdict::Kept,
        key: "HarvesterConfig".into(),
        detail: "no machine configs".into(),
    })
}

/// Hold every offered shape of the site's catalogue to the promises.
pub(crate) fn catalogue_review(inputs: &Inputs) -> Result<CatalogueReview, ReviewError> {
    let site = &inputs.site.site;
    let c = site.catalogue.as_ref().ok_or(ReviewError::NoCatalogue)?;
    let offers = offers(inputs)?.ok_or(ReviewError::NoCatalogue)?;
    let versions = crate::site::rke::allowed_versions(site, c);
    let terms = Terms {
        versions: &versions,
    };
    let image = match &c.image {
        Some(n) => site.images.iter().find(|i| i.name.0 == *n),
        None => site.images.first(),
    }
    .expect("site validation checked the image");
    let mut shapes = Vec::new();
    for (shape, docs) in &offers.shapes {
        let mut promises = review_cluster(&docs[0], &terms);
        promises.push(expiry());
        let mut last = boot(&docs[1..]);
        if image.kind == crate::site::ImageKind::Generic && last.verdict == Verdict::Broken {
            last.detail.push_str(
                ": a generic image, so every VM boots minutes slower than from a prepared one",
            );
        }
        promises.push(last);
        shapes.push(ShapeReview {
            shape: shape.clone(),
            image: super::images::reference(image),
            image_kind: image.kind.as_str(),
            promises,
        });
    }
    let snapshot_target = site
        .compliance
        .as_ref()
        .and_then(|x| x.snapshot_target.as_ref())
        .map(|t| {
            format!(
                "s3://{}/{} at {}",
                t.bucket,
                t.folder.as_deref().unwrap_or(&site.name.0),
                t.endpoint.as_deref().unwrap_or("s3.amazonaws.com")
            )
        });
    let all_kept = shapes
        .iter()
        .all(|s| s.promises.iter().all(|p| p.verdict == Verdict::Kept));
    Ok(CatalogueReview {
        site: site.name.0.clone(),
        scenario: offers.scenario.clone(),
        audit_policy: inputs.site.compliance.audit_policy_origin.clone(),
        snapshot_target,
        shapes,
        all_kept,
    })
}
