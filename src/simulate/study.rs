//! The simulator's one front door: a `Study` is opened from one `StudyInput` that names
//! the scenario (a file, text from standard input, or none) and the fleet (the scenario's
//! node classes, a site's inventory, or the running fleet of a dump). Opening resolves the
//! fleet once and runs every fleet check, so `simulate`, `admit` and `--drain` see the same
//! fleet and the same errors. The questions (`questions/`) take an opened study.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::files::yaml::{InputError, Source};
use crate::live::LiveError;
use crate::simulate::failure::headroom::{self, Spec};
use crate::simulate::failure::rebuild::{WhatIfError, check_what_if};
use crate::simulate::fleet::{self, Assumption, LiveFleet, LiveSummary, Topology};
use crate::simulate::place::{Placement, workload};
use crate::simulate::scenario::{self, NodeClass, Pool, RebuildWhatIf, Scenario};

/// Where the scenario comes from.
#[derive(Debug, Clone, Copy)]
pub enum ScenarioInput<'a> {
    File(&'a Path),
    /// Text already read (standard input); `name` names it in messages.
    Text {
        name: &'a Path,
        text: &'a str,
    },
    /// No scenario: a dump alone, with every default named in the assumptions table.
    None,
}

/// Everything a study is opened from.
#[derive(Debug, Clone)]
pub struct StudyInput<'a> {
    pub scenario: ScenarioInput<'a>,
    /// `--site`: a site's inventory as the fleet (else the scenario's `fleet.site`).
    pub site: Option<&'a Path>,
    /// `--from-cluster`: the fleet as it runs.
    pub dump: Option<&'a Path>,
    /// `--rebuild-data` and `--rebuild-node`: replaces the scenario's `rebuild:`.
    pub rebuild_what_if: Option<RebuildWhatIf>,
}

/// Why a fleet cannot be studied; `key` is the scenario key it concerns.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FleetProblem {
    #[error("the fleet has no nodes: every class has count 0")]
    NoNodes,
    #[error("headroom.sets `{set}`: no host `{host}` in the fleet")]
    NoHost { set: String, host: String },
    #[error("headroom.sets `{set}`: no rack `{rack}`; racks are {racks}")]
    NoRack {
        set: String,
        rack: String,
        racks: String,
    },
    #[error(transparent)]
    WhatIf(#[from] WhatIfError),
}

impl FleetProblem {
    /// The scenario key the problem is located at.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            FleetProblem::NoNodes => "fleet",
            FleetProblem::NoHost { .. } | FleetProblem::NoRack { .. } => "headroom",
            FleetProblem::WhatIf(_) => "rebuild",
        }
    }
}

/// Why a study could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// A located error in the scenario (or a file it imports).
    #[error(transparent)]
    Input(#[from] Box<InputError>),
    /// The site's files.
    #[error(transparent)]
    Site(#[from] crate::plan::LoadError),
    #[error("--site and --from-cluster: give one fleet; the dump's Nodes are the fleet")]
    SiteAndDump,
    #[error("{}", .0)]
    Dump(#[from] LiveError),
    #[error("{}: {source}", path.display())]
    Adopt {
        path: PathBuf,
        source: fleet::AdoptError,
    },
    /// A fleet problem found with a dump as the fleet (no scenario key to point at).
    #[error("{}: {problem}", path.display())]
    DumpFleet {
        path: PathBuf,
        problem: FleetProblem,
    },
    /// The `--rebuild-data` what-if does not fit the fleet.
    #[error("--rebuild-data: {0}")]
    WhatIfFlag(WhatIfError),
}

impl From<InputError> for StudyError {
    fn from(e: InputError) -> Self {
        StudyError::Input(Box::new(e))
    }
}

/// A scenario with its shapes resolved and its fleet attached and checked.
#[derive(Debug, Clone)]
pub struct Study {
    pub scenario: Scenario,
    pub shapes: BTreeMap<String, Vec<Pool>>,
    pub(crate) source: Source,
    pub(crate) dir: PathBuf,
    /// The fleet from a site inventory, when the scenario (or --site) names one.
    pub(crate) site_topology: Option<Topology>,
    /// The running fleet of a dump (`--from-cluster`): what runs stays where it is, and
    /// the scenario's clusters are what-ifs placed beside it.
    pub(crate) live: Option<Arc<LiveFleet>>,
    /// What the report says about the dump: its summary and the inputs with their sources.
    pub(crate) live_summary: Option<(LiveSummary, Vec<Assumption>)>,
    /// Where the Harvester version came from: `dump`, `site`, `scenario` or `default`.
    pub(crate) harvester_version_from: &'static str,
    /// The dump named its Longhorn version (`current-longhorn-version`).
    pub(crate) longhorn_version_from_dump: bool,
    /// Set when the site's Harvester version replaced a different one the scenario named.
    pub(crate) harvester_version_note: Option<String>,
    /// The dump's ClusterRequests whose clusters the operator will delete, soonest first.
    pub(crate) expiries: Vec<fleet::Expiry>,
    /// What a dump says that a delivery's time depends on.
    pub(crate) delivery_live: Option<crate::simulate::delivery::LiveFacts>,
    /// What the site's catalogue says (its image, user-data and shapes), when the caller
    /// read it.
    pub delivery_site: Option<crate::simulate::delivery::SiteCatalogue>,
    /// What the dump holds for the control-plane model: every object by kind, the API
    /// server's and etcd's metrics saved beside it, and Longhorn's
    /// `guaranteed-instance-manager-cpu` setting.
    pub(crate) census: Option<crate::live::census::Census>,
    pub(crate) metrics: Option<crate::live::metrics::ControlPlaneMetrics>,
    pub(crate) instance_manager_cpu: Option<String>,
    /// The site offers a catalogue whose clusters keep their etcd snapshots on their own
    /// VMs (no `compliance.snapshot_target`).
    pub(crate) snapshots_stay_local: bool,
}

impl Study {
    /// Open a study: load the scenario, attach its fleet, and check the fleet as a whole.
    pub fn open(input: &StudyInput<'_>) -> Result<Study, StudyError> {
        Study::open_with(input, None)
    }

    /// A scenario (its shapes, teams, headroom and platform defaults) on a fleet state
    /// already read, from an API server rather than a dump; `origin` names it in messages.
    /// As with a dump, the state's settings win and its VMs are what runs.
    pub fn on_state(
        scenario: ScenarioInput<'_>,
        state: &crate::live::LiveState,
        origin: &Path,
    ) -> Result<Study, StudyError> {
        let input = StudyInput {
            scenario,
            site: None,
            dump: Some(origin),
            rebuild_what_if: None,
        };
        Study::open_with(&input, Some(state))
    }

    /// `open`, with the state of `input.dump` given rather than read from it.
    fn open_with(
        input: &StudyInput<'_>,
        state: Option<&crate::live::LiveState>,
    ) -> Result<Study, StudyError> {
        let loaded = match input.scenario {
            ScenarioInput::File(f) => scenario::load(f)?,
            ScenarioInput::Text { name, text } => {
                scenario::load_text(name, text, PathBuf::from("."))?
            }
            ScenarioInput::None => scenario::load_text(
                Path::new("<no scenario>"),
                "name: the fleet as it runs\n",
                PathBuf::from("."),
            )?,
        };
        let mut study = Study {
            scenario: loaded.scenario,
            shapes: loaded.shapes,
            source: loaded.source,
            dir: loaded.dir,
            site_topology: None,
            live: None,
            live_summary: None,
            harvester_version_from: "default",
            longhorn_version_from_dump: false,
            harvester_version_note: None,
            expiries: Vec::new(),
            delivery_live: None,
            delivery_site: None,
            census: None,
            metrics: None,
            instance_manager_cpu: None,
            snapshots_stay_local: false,
        };
        if study
            .source
            .has(&crate::path!["platform", "harvester_version"])
        {
            study.harvester_version_from = "scenario";
        }
        if let Some(w) = &input.rebuild_what_if {
            study.scenario.rebuild = Some(w.clone());
        }
        let scenario_given = !matches!(input.scenario, ScenarioInput::None);
        if let Some(dump) = input.dump {
            if input.site.is_some() {
                return Err(StudyError::SiteAndDump);
            }
            if let Some(state) = state {
                study.attach_state(state, dump, scenario_given)?;
            } else {
                let state = crate::live::read(dump)?;
                study.attach_state(&state, dump, scenario_given)?;
                crate::live::release(state);
            }
            if let Err(problem) = study.check_fleet() {
                return Err(
                    if scenario_given && !matches!(problem, FleetProblem::NoNodes) {
                        study.locate(&problem).into()
                    } else {
                        StudyError::DumpFleet {
                            path: dump.to_path_buf(),
                            problem,
                        }
                    },
                );
            }
        } else {
            let named = study.scenario.fleet.site.as_deref();
            let site = input
                .site
                .map(Path::to_path_buf)
                .or_else(|| named.map(|s| study.dir.join(s)));
            if let Some(dir) = site {
                let inputs = crate::plan::load_inputs(&dir)?;
                study.attach_site(&inputs)?;
            } else if study.scenario.fleet.classes.is_empty() {
                return Err(study
                    .source
                    .error_at(
                        &crate::path!["fleet"],
                        "no node classes and no site",
                        Some("add fleet.classes or fleet.site".into()),
                    )
                    .into());
            }
            if let Err(problem) = study.check_fleet() {
                return Err(match problem {
                    FleetProblem::WhatIf(w) if input.rebuild_what_if.is_some() => {
                        StudyError::WhatIfFlag(w)
                    }
                    problem => study.locate(&problem).into(),
                });
            }
        }
        Ok(study)
    }

    /// A scenario file with the fleet it describes (its node classes or its `fleet.site`).
    pub fn from_file(path: &Path) -> Result<Study, StudyError> {
        Study::open(&StudyInput {
            scenario: ScenarioInput::File(path),
            site: None,
            dump: None,
            rebuild_what_if: None,
        })
    }

    /// A scenario's text (named `t.yaml`), with a dump of the fleet as it runs: the
    /// simulator's unit tests.
    #[cfg(test)]
    pub(crate) fn from_text(text: &str, dump: Option<&Path>) -> Study {
        Study::open(&StudyInput {
            scenario: ScenarioInput::Text {
                name: Path::new("t.yaml"),
                text,
            },
            site: None,
            dump,
            rebuild_what_if: None,
        })
        .expect("the test's scenario opens")
    }

    /// A fleet problem as a located error at its scenario key.
    fn locate(&self, problem: &FleetProblem) -> InputError {
        self.source
            .error_at(&crate::path![problem.key()], problem.to_string(), None)
    }

    /// The site's inventory as the fleet; a site with no nodes is an error located at the
    /// scenario's `fleet.site`.
    fn attach_site(&mut self, inputs: &crate::plan::Inputs) -> Result<(), InputError> {
        // The site names the Harvester it installs: that version wins, as a dump's does.
        let site_version = &inputs.site.site.harvester.version;
        if crate::simulate::scenario::version(site_version).is_some() {
            let given = &self.scenario.platform.harvester_version;
            if self.harvester_version_from == "scenario" && given != site_version {
                self.harvester_version_note =
                    Some(format!("the scenario says {given}; the site wins"));
            }
            self.scenario
                .platform
                .harvester_version
                .clone_from(site_version);
            self.harvester_version_from = "site";
        }
        let p = &self.scenario.platform;
        let topo = fleet::site_topology(inputs, p.reserved_cpu, p.reserved_memory_gib);
        if topo.hosts.is_empty() {
            return Err(self.source.error_at(
                &crate::path!["fleet", "site"],
                "the site's inventory has no nodes",
                None,
            ));
        }
        self.site_topology = Some(topo);
        let site = &inputs.site.site;
        self.snapshots_stay_local = site.catalogue.is_some()
            && site
                .compliance
                .as_ref()
                .is_none_or(|c| c.snapshot_target.is_none());
        Ok(())
    }

    /// The running fleet of a dump as the fleet: its settings win, its VMs replace the
    /// scenario's clusters.
    fn attach_state(
        &mut self,
        state: &crate::live::LiveState,
        dump: &Path,
        scenario_given: bool,
    ) -> Result<(), StudyError> {
        let (platform, assumptions) =
            fleet::platform(state, &self.scenario.platform, scenario_given);
        if state
            .settings
            .harvester
            .get("server-version")
            .is_some_and(|v| scenario::version(v).is_some())
        {
            self.harvester_version_from = "dump";
        }
        self.longhorn_version_from_dump =
            platform.longhorn_version != self.scenario.platform.longhorn_version;
        self.scenario.platform = platform;
        let adopted =
            fleet::adopt(state, &self.scenario.platform).map_err(|source| StudyError::Adopt {
                path: dump.to_path_buf(),
                source,
            })?;
        let mut summary = fleet::summary(state, &adopted, &dump.display().to_string());
        self.expiries = fleet::scheduled_expiries(&state.rancher, &mut summary.notes);
        self.delivery_live = Some(crate::simulate::delivery::LiveFacts::read(state));
        let s = &mut self.scenario;
        if !s.clusters.is_empty() {
            let n: u32 = s.clusters.iter().map(|c| c.count).sum();
            summary.scenario_overridden.push(format!(
                "clusters: the scenario's {n} running cluster(s) are not placed; the dump's VMs are what runs"
            ));
            s.clusters.clear();
        }
        if !s.fleet.classes.is_empty() || s.fleet.site.is_some() {
            summary.scenario_overridden.push(
                "fleet: the scenario's node classes and site are not used; the dump's Nodes are the fleet".into(),
            );
        }
        for a in assumptions
            .iter()
            .filter(|a| a.note.as_deref().is_some_and(|n| n.contains("dump wins")))
        {
            summary.scenario_overridden.push(format!(
                "{}: {}",
                a.input,
                a.note.clone().unwrap_or_default()
            ));
        }
        if s.name.is_empty() || !scenario_given {
            s.name = format!("the fleet in {}", dump.display());
        } else {
            s.name = format!("{} on the fleet in {}", s.name, dump.display());
        }
        self.live = Some(Arc::new(adopted));
        self.live_summary = Some((summary, assumptions));
        self.census = Some(state.census.clone());
        self.metrics.clone_from(&state.metrics);
        self.instance_manager_cpu = state
            .settings
            .longhorn
            .get("guaranteed-instance-manager-cpu")
            .cloned();
        Ok(())
    }

    /// What can be checked only once the fleet is known: it has nodes, the named failure
    /// sets' hosts and racks exist, and the rebuild what-if fits its node.
    fn check_fleet(&self) -> Result<(), FleetProblem> {
        let topo = self.topology();
        if topo.hosts.is_empty() {
            return Err(FleetProblem::NoNodes);
        }
        for set in &self.scenario.headroom.sets {
            for n in &set.nodes {
                if topo.host_index(n).is_none() {
                    return Err(FleetProblem::NoHost {
                        set: set.name.clone(),
                        host: n.clone(),
                    });
                }
            }
            for r in &set.racks {
                if !topo.racks.contains(r) {
                    return Err(FleetProblem::NoRack {
                        set: set.name.clone(),
                        rack: r.clone(),
                        racks: topo.racks.join(", "),
                    });
                }
            }
        }
        if let Some(w) = &self.scenario.rebuild {
            check_what_if(
                &topo,
                w,
                self.fleet_classes(),
                &self.scenario.platform,
                &self.shapes,
            )?;
        }
        Ok(())
    }

    /// The fleet's hosts: the dump's, the site's, or the scenario's node classes.
    pub fn topology(&self) -> Topology {
        if let Some(l) = &self.live {
            return l.placement.topo().clone();
        }
        self.site_topology
            .clone()
            .unwrap_or_else(|| Topology::from_scenario(&self.scenario))
    }

    /// The scenario's node classes when they are the fleet (not a site or a dump), else
    /// none.
    pub(crate) fn fleet_classes(&self) -> &[NodeClass] {
        if self.site_topology.is_none() && self.live.is_none() {
            &self.scenario.fleet.classes
        } else {
            &[]
        }
    }

    /// Place `clusters` (shape pool lists) on the fleet: from scratch, or beside what runs
    /// on a dump's fleet.
    pub fn place(&self, clusters: &[&[Pool]]) -> Placement {
        self.place_on(self.topology(), clusters)
    }

    /// `place` on `topo`: the fleet's hosts, perhaps with more appended.
    pub(crate) fn place_on(&self, topo: Topology, clusters: &[&[Pool]]) -> Placement {
        let s = &self.scenario;
        let (vms, vols) = workload(clusters, &s.platform);
        match &self.live {
            Some(live) => live.placement.extend(topo, vms, vols, &s.platform),
            None => Placement::build(topo, vms, vols, &s.platform),
        }
    }

    /// The clusters running now, as pool lists.
    pub fn current(&self) -> Vec<&[Pool]> {
        let mut out = Vec::new();
        for c in &self.scenario.clusters {
            for _ in 0..c.count {
                out.push(self.shapes[&c.shape].as_slice());
            }
        }
        out
    }

    /// The headroom checks the scenario asks for, with its named sets resolved on `topo`.
    pub(crate) fn headroom_spec(&self, topo: &Topology) -> Spec {
        headroom::spec(&self.scenario.headroom, topo)
    }
}
