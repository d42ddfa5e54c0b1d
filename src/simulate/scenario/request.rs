//! One cluster request for `admit`: the small request file (a team, a shape of the scenario
//! or pools, a count, a duration), or a Rancher `Cluster` export labelled with its team.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::model::Pool;
use super::rancher;
use crate::files::yaml::{self, InputError, Source};
use crate::path;

/// A duration that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DurationError {
    #[error("`{0}` has no unit: write e.g. 72h, 30d or 2w")]
    NoUnit(String),
    #[error("`{0}` does not start with a number")]
    NotANumber(String),
    #[error("unit `{unit}` of `{text}`: use m, h, d or w")]
    Unit { unit: String, text: String },
    #[error("`{0}`: a duration above zero")]
    NotPositive(String),
    #[error("`{0}`: at most 10 years (87660h)")]
    TooLong(String),
}

/// The longest duration a request may carry: ten years.
pub(crate) const MAX_DURATION_H: f64 = 87_660.0;

/// The request file: a team, a shape of the scenario (or pools), how many, for how long.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestFile {
    pub(crate) team: String,
    /// A name for the request, shown in the answer.
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    pub(crate) shape: Option<String>,
    #[serde(default)]
    pub(crate) pools: Option<Vec<Pool>>,
    #[serde(default = "one")]
    pub(crate) count: u32,
    /// `72h`, `30d`, `2w`: the clusters are removed after it.
    #[serde(default)]
    pub(crate) duration: Option<String>,
}

fn one() -> u32 {
    1
}

/// A request resolved against the scenario.
#[derive(Debug, Clone)]
pub struct Request {
    pub(crate) name: Option<String>,
    pub(crate) team: String,
    pub(crate) shape: Option<String>,
    pub pools: Vec<Pool>,
    pub count: u32,
    pub(crate) duration_h: Option<f64>,
}

/// `72h`, `90m`, `30d`, `2w` -> hours.
pub(crate) fn parse_duration_h(s: &str) -> Result<f64, DurationError> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| DurationError::NoUnit(s.to_string()))?;
    let (num, unit) = t.split_at(split);
    let n: f64 = num
        .parse()
        .map_err(|_| DurationError::NotANumber(s.to_string()))?;
    let per = match unit.trim() {
        "m" | "min" => 1.0 / 60.0,
        "h" => 1.0,
        "d" => 24.0,
        "w" => 168.0,
        u => {
            return Err(DurationError::Unit {
                unit: u.to_string(),
                text: s.to_string(),
            });
        }
    };
    if !(n > 0.0 && n.is_finite()) {
        return Err(DurationError::NotPositive(s.to_string()));
    }
    let h = n * per;
    if h > MAX_DURATION_H {
        return Err(DurationError::TooLong(s.to_string()));
    }
    Ok(h)
}

/// Read a request: the small request file, or a Rancher `Cluster` export whose label
/// `rackplan.io/team` names the team (its pools are the shape; annotation
/// `rackplan.io/duration` the duration).
pub fn load_request(
    path: &Path,
    shapes: &BTreeMap<String, Vec<Pool>>,
) -> Result<Request, InputError> {
    let text = yaml::read_input(path)?;
    request_from_text(path, &text, shapes)
}

/// A request from text already read (standard input); `path` names it in messages.
pub fn request_from_text(
    path: &Path,
    text: &str,
    shapes: &BTreeMap<String, Vec<Pool>>,
) -> Result<Request, InputError> {
    let looks_rancher = text.lines().any(|l| {
        let l = l.trim_start().trim_start_matches('"');
        l.starts_with("kind") && l.contains("Cluster") || l.starts_with("apiVersion")
    });
    if looks_rancher {
        return rancher_request(path, text);
    }
    let (r, src): (RequestFile, Source) = yaml::parse(path, text)?;
    let pools = match (&r.shape, &r.pools) {
        (Some(s), None) => shapes.get(s).cloned().ok_or_else(|| {
            src.error_at(
                &path!["shape"],
                format!("the scenario has no shape `{s}`"),
                Some(format!(
                    "one of: {}",
                    shapes.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            )
        })?,
        (None, Some(p)) if !p.is_empty() => p.clone(),
        (Some(_), Some(_)) => {
            return Err(src.error_at(
                &path!["pools"],
                "both `shape` and `pools` are given",
                Some("keep one of them".into()),
            ));
        }
        _ => {
            return Err(src.error_at(
                &[],
                "the request names no `shape` and no `pools`",
                Some("add `shape: <a shape of the scenario>`".into()),
            ));
        }
    };
    if r.count == 0 {
        return Err(src.error_at(&path!["count"], "a request for 0 clusters", None));
    }
    if r.count > super::ranges::MAX_CLUSTERS {
        return Err(src.error_at(
            &path!["count"],
            format!(
                "a request for {} clusters; rackplan admits at most {} at once",
                r.count,
                super::ranges::MAX_CLUSTERS
            ),
            None,
        ));
    }
    if r.pools.is_some() {
        super::ranges::check_pools(&pools, &path!["pools"], &src)?;
    }
    let vms = u64::from(r.count) * pools.iter().map(|p| u64::from(p.count)).sum::<u64>();
    if vms > super::ranges::MAX_VMS {
        return Err(src.error_at(
            &path!["count"],
            format!(
                "{vms} VMs requested; rackplan models at most {}",
                super::ranges::MAX_VMS
            ),
            None,
        ));
    }
    let duration_h = r
        .duration
        .as_deref()
        .map(parse_duration_h)
        .transpose()
        .map_err(|e| src.error_at(&path!["duration"], e.to_string(), None))?;
    Ok(Request {
        name: r.name,
        team: r.team,
        shape: r.shape,
        pools,
        count: r.count,
        duration_h,
    })
}

fn rancher_request(path: &Path, text: &str) -> Result<Request, InputError> {
    let src = Source::new(path, text.to_string());
    let fail = |msg: String, hint: &str| src.error_at(&[], msg, Some(hint.to_string()));
    let pools = rancher::pools(text).map_err(|e| {
        fail(
            e.to_string(),
            "a Rancher request is a provisioning.cattle.io Cluster with its HarvesterConfig machine configs",
        )
    })?;
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(text).map_err(|e| fail(e.to_string(), "fix the YAML"))?;
    let cluster = docs
        .iter()
        .flat_map(|d| {
            if d["kind"] == "List" {
                d["items"].as_array().cloned().unwrap_or_default()
            } else {
                vec![d.clone()]
            }
        })
        .find(|d| d["kind"] == "Cluster")
        .unwrap_or_default();
    let meta = &cluster["metadata"];
    let team = meta["labels"]["rackplan.io/team"]
        .as_str()
        .ok_or_else(|| {
            fail(
                "the Cluster has no label `rackplan.io/team`".into(),
                "label the Cluster with the requesting team: `rackplan.io/team: <team>`",
            )
        })?
        .to_string();
    let duration_h = meta["annotations"]["rackplan.io/duration"]
        .as_str()
        .map(parse_duration_h)
        .transpose()
        .map_err(|e| fail(format!("annotation rackplan.io/duration: {e}"), "e.g. 72h"))?;
    Ok(Request {
        name: meta["name"].as_str().map(str::to_string),
        team,
        shape: meta["labels"]["rackplan.io/shape"]
            .as_str()
            .map(str::to_string),
        pools,
        count: 1,
        duration_h,
    })
    .and_then(|r| {
        let vms: u64 = r.pools.iter().map(|p| u64::from(p.count)).sum();
        if vms > super::ranges::MAX_VMS {
            Err(fail(
                format!(
                    "{vms} VMs in the Cluster's pools; rackplan models at most {}",
                    super::ranges::MAX_VMS
                ),
                "lower the pools' quantity",
            ))
        } else {
            Ok(r)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert!((parse_duration_h("72h").unwrap() - 72.0).abs() < 1e-12);
        assert!((parse_duration_h("2w").unwrap() - 336.0).abs() < 1e-12);
        assert!((parse_duration_h("90m").unwrap() - 1.5).abs() < 1e-12);
        assert!(parse_duration_h("72").is_err());
        assert!(parse_duration_h("0h").is_err());
        assert!(parse_duration_h("3y").is_err());
        assert_eq!(
            parse_duration_h("100000000000w"),
            Err(DurationError::TooLong("100000000000w".into()))
        );
        assert!(parse_duration_h("520w").is_ok());
    }
}
