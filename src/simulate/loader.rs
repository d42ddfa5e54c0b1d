//! Loading a scenario file: the YAML model of `scenario`, the Rancher cluster files it
//! imports as shapes (`rancher`), and the fleet it describes (`topology`, or a site's
//! inventory attached by `site_fleet`). Kept apart from the model so that the model, the
//! importer and the topology do not import each other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::scenario::{Pool, Scenario, month_index};
use crate::files::yaml::{self, InputError, Source};
use crate::path;

/// A scenario with shapes resolved (imports read) and the file it came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub scenario: Scenario,
    pub shapes: BTreeMap<String, Vec<Pool>>,
    pub source: Source,
    pub dir: PathBuf,
    /// The fleet from a site inventory, when the scenario (or --site) names one.
    pub site_topology: Option<super::topology::Topology>,
}

impl Loaded {
    pub fn topology(&self) -> super::topology::Topology {
        self.site_topology
            .clone()
            .unwrap_or_else(|| super::topology::Topology::from_scenario(&self.scenario))
    }
}

pub fn load(path: &Path) -> Result<Loaded, InputError> {
    let (scenario, source): (Scenario, Source) = yaml::load(path)?;
    let dir = path
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
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
                super::rancher::pools(&text).map_err(|e| {
                    source.error_at(
                        &path!["shapes", name.as_str(), "import"],
                        format!("{}: {e}", p.display()),
                        None,
                    )
                })?
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
                    None,
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
        site_topology: None,
    })
}
