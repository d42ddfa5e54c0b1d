//! The scenario's `delivery:` block: the promise (a target per shape), the burst the review
//! asks about, and what the scenario knows of the golden image when no site or dump says
//! it. Every key is optional; what is left out is a default the prediction names.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::ImageKind;
use crate::files::yaml::{InputError, Seg, Source};
use crate::path;

/// The reference design's promise: a team receives its cluster fifteen minutes after its
/// request.
pub(crate) const DEFAULT_TARGET_MINUTES: f64 = 15.0;

/// `delivery:` in a scenario.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeliverySpec {
    /// Minutes from admission to a Ready cluster that every shape is held to (default 15,
    /// the reference design's promise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) target_minutes: Option<f64>,
    /// A target per shape, over `target_minutes`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) targets: BTreeMap<String, f64>,
    /// Requests of one shape arriving together, for the review's burst answer. Default: the
    /// most clusters the teams' requests start in one month.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) burst: Option<u32>,
    /// The golden image, when no site or dump says it.
    #[serde(default)]
    pub(crate) image: ImageSpec,
}

/// What the scenario says of the image the catalogue's VMs boot from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ImageSpec {
    /// `prepared` (the guest agent and everything the boot needs are in the image) or
    /// `generic` (a cloud image that installs packages at boot).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) kind: Option<ImageKind>,
    /// The image's size in GiB (what Longhorn copies to a disk that lacks it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) size_gib: Option<f64>,
    /// Where Longhorn already holds the image's backing file: `all` the disks, `one` (a
    /// fleet that has only downloaded it: Harvester keeps one copy), or a count of disks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) on_disks: Option<OnDisksSpec>,
}

/// `image.on_disks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum OnDisksSpec {
    Word(OnDisksWord),
    Count(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OnDisksWord {
    All,
    One,
}

/// Every number of `delivery:` in range and every shape it names known, each error at its
/// key.
pub(crate) fn check_spec(
    d: &DeliverySpec,
    shapes: &BTreeMap<String, Vec<crate::simulate::scenario::Pool>>,
    src: &Source,
) -> Result<(), InputError> {
    let minutes = |path: Vec<Seg>, v: f64| {
        if v.is_finite() && (1.0..=10_080.0).contains(&v) {
            Ok(())
        } else {
            Err(src.error_at(
                &path,
                format!("{v} is out of range"),
                Some("give minutes from 1 to 10080 (a week)".into()),
            ))
        }
    };
    if let Some(t) = d.target_minutes {
        minutes(path!["delivery", "target_minutes"], t)?;
    }
    for (shape, t) in &d.targets {
        if !shapes.contains_key(shape) {
            let known: Vec<&str> = shapes.keys().map(String::as_str).collect();
            return Err(src.error_at(
                &path!["delivery", "targets", shape.as_str()],
                format!("no shape `{shape}`"),
                Some(format!("shapes: {}", known.join(", "))),
            ));
        }
        minutes(path!["delivery", "targets", shape.as_str()], *t)?;
    }
    if let Some(b) = d.burst
        && !(1..=10_000).contains(&b)
    {
        return Err(src.error_at(
            &path!["delivery", "burst"],
            format!("{b} is out of range"),
            Some("give a number of requests from 1 to 10000".into()),
        ));
    }
    if let Some(s) = d.image.size_gib
        && !(s.is_finite() && (0.01..=100_000.0).contains(&s))
    {
        return Err(src.error_at(
            &path!["delivery", "image", "size_gib"],
            format!("{s} is out of range"),
            Some("give GiB from 0.01 to 100000".into()),
        ));
    }
    if let Some(OnDisksSpec::Count(0)) = d.image.on_disks {
        return Err(src.error_at(
            &path!["delivery", "image", "on_disks"],
            "0 disks: Longhorn holds an image it has downloaded on at least one".to_string(),
            Some("`one`, `all`, or a count of disks from 1".into()),
        ));
    }
    Ok(())
}
