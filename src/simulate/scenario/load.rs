//! Loading a scenario file: the YAML model, the Rancher cluster files it imports as
//! shapes, every shape a cluster, request or analysis names, and every number in range.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::model::{Pool, Scenario, month_index};
use super::ranges::check_ranges;
use crate::files::yaml::{self, InputError, Source};
use crate::path;

/// A scenario with shapes resolved (imports read) and the file it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub scenario: Scenario,
    pub shapes: BTreeMap<String, Vec<Pool>>,
    pub(crate) source: Source,
    pub(crate) dir: PathBuf,
}

pub fn load(path: &Path) -> Result<Loaded, InputError> {
    tracing::debug!(file = %path.display(), "loading scenario");
    let text = yaml::read_input(path)?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    load_text(path, &text, dir)
}

/// A scenario from text already read (standard input): `name` for messages, `dir` for
/// the paths it names.
pub fn load_text(name: &Path, text: &str, dir: PathBuf) -> Result<Loaded, InputError> {
    let (scenario, source): (Scenario, Source) = yaml::parse(name, text)?;
    let mut shapes = BTreeMap::new();
    for (name, spec) in &scenario.shapes {
        let pools = match &spec.import {
            Some(file) => {
                let p = dir.join(file);
                let text = std::fs::read_to_string(&p).map_err(|e| {
                    source.error_at(
                        &path!["shapes", name.as_str(), "import"],
                        format!("cannot read {}: {e}", p.display()),
                        None,
                    )
                })?;
                let mut all = super::rancher::clusters(&text).map_err(|e| {
                    source.error_at(
                        &path!["shapes", name.as_str(), "import"],
                        format!("{}: {e}", p.display()),
                        None,
                    )
                })?;
                if all.len() > 1 {
                    // Every Cluster of the file is a shape, `<shape>/<cluster>`.
                    for (cluster, pools) in all {
                        shapes.insert(format!("{name}/{cluster}"), pools);
                    }
                    continue;
                }
                all.remove(0).1
            }
            None => spec.pools.clone(),
        };
        if pools.is_empty() {
            return Err(source.error_at(
                &path!["shapes", name.as_str()],
                "a shape needs pools or an import",
                None,
            ));
        }
        shapes.insert(name.clone(), pools);
    }
    let known = |s: &str| shapes.contains_key(s);
    for (i, c) in scenario.clusters.iter().enumerate() {
        if !known(&c.shape) {
            return Err(source.error_at(
                &path!["clusters", i, "shape"],
                format!("unknown shape `{}`", c.shape),
                Some(format!(
                    "known: {}",
                    shapes.keys().cloned().collect::<Vec<_>>().join(", ")
                )),
            ));
        }
    }
    for (t, team) in scenario.teams.iter().enumerate() {
        for (i, r) in team.requests.iter().enumerate() {
            if !known(&r.shape) {
                return Err(source.error_at(
                    &path!["teams", t, "requests", i, "shape"],
                    format!("unknown shape `{}`", r.shape),
                    Some(format!(
                        "known: {}",
                        shapes.keys().cloned().collect::<Vec<_>>().join(", ")
                    )),
                ));
            }
            for (k, m) in [("from", Some(&r.from)), ("until", r.until.as_ref())] {
                if let Some(m) = m
                    && month_index(m).is_none()
                {
                    return Err(source.error_at(
                        &path!["teams", t, "requests", i, k],
                        format!("`{m}` is not a month"),
                        Some("write YYYY-MM".into()),
                    ));
                }
            }
        }
    }
    if let Some(s) = &scenario.analysis.max_clusters_shape
        && !known(s)
    {
        return Err(source.error_at(
            &path!["analysis", "max_clusters_shape"],
            format!("unknown shape `{s}`"),
            None,
        ));
    }
    check_ranges(&scenario, &shapes, &source)?;
    if scenario.platform.replicas == 0 || scenario.platform.replicas > 4 {
        return Err(source.error_at(
            &path!["platform", "replicas"],
            "replicas must be 1 to 4",
            None,
        ));
    }
    Ok(Loaded {
        scenario,
        shapes,
        source,
        dir,
    })
}
