//! Render a site: resolve its secrets, build every output file (per-node installer configs,
//! manifests, the iPXE menu, the catalogue) and write them with an index of what rackplan
//! owns.

use super::{bundles, ipxe, manifests, node, offers, operator_bundle, summary, validate};
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::node::{NodeContext, ResolvedSecrets};
use crate::files::fsio::{self, FsError, Mode};
use crate::files::secrets::SecretRef;
use crate::files::yaml::InputError;
use crate::path;
use crate::plan::Inputs;
use crate::plan::check::check;
use crate::plan::findings::{Finding, has_errors};
use crate::profile::Role;

/// The index of files a render wrote, so the next render can remove what it no longer makes.
const INDEX: &str = ".rackplan-files";

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Input(#[from] Box<InputError>),
    #[error("{} node(s) have error findings; nothing was rendered", count_nodes(.0))]
    Findings(Vec<Finding>),
    #[error("the plan is out of date: {0}")]
    Stale(String),
    #[error("generated config for {node} would fail the installer's validation: {}", problems.join("; "))]
    Invalid { node: String, problems: Vec<String> },
    #[error(transparent)]
    Fs(#[from] FsError),
    #[error(transparent)]
    Deploy(#[from] super::operator_deploy::DeployError),
}

fn count_nodes(f: &[Finding]) -> usize {
    f.iter()
        .filter(|f| f.blocks())
        .map(|f| f.node.as_str())
        .collect::<BTreeSet<_>>()
        .len()
}

/// One generated file.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct OutputFile {
    /// Path relative to the output directory.
    pub(crate) path: String,
    pub(crate) kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) node: Option<String>,
    pub(crate) secret: bool,
    #[serde(skip)]
    pub(crate) bytes: Vec<u8>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct RenderOutcome {
    pub(crate) out_dir: String,
    pub(crate) files: Vec<OutputFile>,
    pub(crate) removed: Vec<String>,
    /// Findings acknowledged in nodes.yaml that were rendered in spite of (SUMMARY.md lists
    /// them too).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) acknowledged: Vec<Finding>,
}

fn resolve(inputs: &Inputs) -> Result<ResolvedSecrets, Box<InputError>> {
    let s = &inputs.site.site.secrets;
    let src = &inputs.site.source;
    let dir = &inputs.site.dir;
    let get = |key: &str, r: &SecretRef| {
        r.resolve(dir).map_err(|msg| {
            Box::new(src.error_at(
                &path!["secrets", key],
                msg.to_string(),
                Some("secrets are read from the named environment variable or file (relative to the site directory)".into()),
            ))
        })
    };
    let token = get("token", &s.token)?;
    if !token.expose().chars().all(|c| (' '..='~').contains(&c)) {
        return Err(Box::new(src.error_at(
            &path!["secrets", "token"],
            "the token holds characters the installer rejects",
            Some("use printable ASCII only (no tabs, newlines or non-ASCII)".into()),
        )));
    }
    let password = s
        .password
        .as_ref()
        .map(|r| get("password", r))
        .transpose()?;
    let password_hash = s
        .password_hash
        .as_ref()
        .map(|r| get("password_hash", r))
        .transpose()?;
    if let Some(h) = &password_hash {
        let t = h.expose();
        if !(t.starts_with("$6$") || t.starts_with("$5$")) || t.split('$').count() < 4 {
            return Err(Box::new(src.error_at(
                &path!["secrets", "password_hash"],
                "the password hash is not a SHA crypt hash",
                Some("give a `$6$...` hash (e.g. from `openssl passwd -6`), or use `password` to have rackplan hash it".into()),
            )));
        }
    }
    let ssh_keys = match &s.ssh_authorized_keys {
        Some(r) => get("ssh_authorized_keys", r)?
            .expose()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    Ok(ResolvedSecrets {
        token,
        password,
        password_hash,
        ssh_keys,
    })
}

/// Build every file in memory; nothing is written.
/// Every planned node's webhook key, by hostname, for `serve` to check webhooks against.
pub fn webhook_keys(inputs: &Inputs) -> Result<HashMap<String, String>, RenderError> {
    let secrets = resolve(inputs)?;
    Ok(inputs
        .lock
        .nodes
        .iter()
        .map(|a| {
            (
                a.hostname.clone(),
                crate::files::secrets::webhook_key(&secrets.token, &a.hostname),
            )
        })
        .collect())
}

pub(crate) fn build(inputs: &Inputs) -> Result<Vec<OutputFile>, RenderError> {
    build_all(inputs).map(|(files, _)| files)
}

/// Every file, and the findings people acknowledged that were rendered in spite of
/// (listed in SUMMARY.md too).
pub(crate) fn build_all(inputs: &Inputs) -> Result<(Vec<OutputFile>, Vec<Finding>), RenderError> {
    let report = check(inputs);
    if has_errors(&report.findings) {
        return Err(RenderError::Findings(report.findings));
    }
    let acknowledged: Vec<Finding> = report
        .findings
        .iter()
        .filter(|f| f.acknowledged.is_some())
        .cloned()
        .collect();
    let lock = &inputs.lock;
    for n in &inputs.inventory.nodes {
        match lock.get(&n.id) {
            None => {
                return Err(RenderError::Stale(format!(
                    "node {} has no allocation; run `rackplan plan`",
                    n.id
                )));
            }
            Some(a) if a.role != report.roles[&n.id].role => {
                return Err(RenderError::Stale(format!(
                    "node {} is {} in the lock but {} now; run `rackplan plan`",
                    n.id, a.role, report.roles[&n.id].role
                )));
            }
            Some(_) => {}
        }
    }
    let secrets = resolve(inputs)?;
    let site = &inputs.site.site;
    let mut planned: Vec<_> = inputs
        .inventory
        .nodes
        .iter()
        .map(|n| {
            let a = lock.get(&n.id).expect("checked above");
            let p = inputs
                .profiles
                .get(a.role)
                .expect("check found every profile");
            (n, p, a)
        })
        .collect();
    planned.sort_by(|x, y| (x.2.role, &x.2.hostname).cmp(&(y.2.role, &y.2.hostname)));

    // Each node's config (a SHA-512-crypt hash, the installer's rules) is independent of
    // the others: built across cores, kept in the planned order.
    use rayon::prelude::*;
    let per_node: Vec<([OutputFile; 2], summary::Installed)> = planned
        .par_iter()
        .map(|(node, profile, alloc)| node_files(inputs, &secrets, node, profile, alloc))
        .collect::<Result<_, _>>()?;
    let (per_node, installed): (Vec<[OutputFile; 2]>, Vec<summary::Installed>) =
        per_node.into_iter().unzip();
    let mut files: Vec<OutputFile> = per_node.into_iter().flatten().collect();
    let for_manifests: Vec<_> = planned
        .iter()
        .filter(|(_, _, a)| a.role != Role::Witness)
        .map(|(n, p, a)| (*n, *p, a.hostname.as_str()))
        .collect();
    let manifest_files = manifests::build(site, &for_manifests);
    // `check` refuses a network a role gives no ports; this holds whatever the profiles say.
    for doc in manifest_files.iter().flat_map(|m| &m.docs) {
        if doc["kind"] == "VlanConfig"
            && doc
                .pointer("/spec/uplink/nics")
                .and_then(serde_json::Value::as_array)
                .is_none_or(Vec::is_empty)
        {
            return Err(RenderError::Invalid {
                node: format!(
                    "VlanConfig {}",
                    doc.pointer("/metadata/name")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or("?")
                ),
                problems: vec![
                    "uplink.nics is empty: give the network ports in the role profile".into(),
                ],
            });
        }
    }
    for m in &manifest_files {
        files.push(OutputFile {
            path: format!("manifests/{}", m.path()),
            kind: "manifest",
            node: None,
            secret: false,
            bytes: manifests::to_yaml(m).into_bytes(),
        });
    }
    files.push(OutputFile {
        path: "manifests/kustomization.yaml".into(),
        kind: "kustomization",
        node: None,
        secret: false,
        bytes: bundles::kustomization(&manifest_files).into_bytes(),
    });
    for b in bundles::present(&manifest_files) {
        if let Some(text) = bundles::bundle_kustomization(b, &manifest_files) {
            files.push(OutputFile {
                path: format!("manifests/{}/kustomization.yaml", b.dir()),
                kind: "kustomization",
                node: None,
                secret: false,
                bytes: text.into_bytes(),
            });
        }
        if let Some(text) = bundles::fleet_yaml(site, b, &manifest_files) {
            files.push(OutputFile {
                path: format!("manifests/{}/fleet.yaml", b.dir()),
                kind: "fleet-bundle",
                node: None,
                secret: false,
                bytes: text.into_bytes(),
            });
        }
    }
    let offers = offers::offers(inputs)?.filter(|o| !o.shapes.is_empty());
    let shapes: Vec<String> = offers
        .iter()
        .flat_map(|o| o.shapes.iter().map(|(s, _)| s.clone()))
        .collect();
    for (shape, text) in offers.iter().flat_map(offers::Offers::files) {
        files.push(OutputFile {
            path: format!("catalogue/{shape}.yaml"),
            kind: "catalogue",
            node: None,
            secret: false,
            bytes: text.into_bytes(),
        });
    }
    if let (Some(c), Some(offers)) = (&site.catalogue, &offers) {
        let scenario = crate::simulate::scenario::load(&inputs.site.dir.join(&c.scenario))
            .map_err(Box::new)?;
        let teams = operator_bundle::team_namespaces(&scenario)?;
        for (path, text) in operator_bundle::files(site, &c.namespace, &teams, offers)? {
            files.push(OutputFile {
                path,
                kind: "operator",
                node: None,
                secret: false,
                bytes: text.into_bytes(),
            });
        }
    }
    let summary = summary::render(
        inputs,
        &summary::Rendered {
            planned: &planned,
            installed: &installed,
            manifests: &manifest_files,
            catalogue: &shapes,
            acknowledged: &acknowledged,
        },
    );
    files.push(OutputFile {
        path: "SUMMARY.md".into(),
        kind: "summary",
        node: None,
        secret: false,
        bytes: summary.into_bytes(),
    });
    Ok((files, acknowledged))
}

/// A node's install config (checked against the installer's rules) and its iPXE script,
/// and what SUMMARY.md says of it, read off the config itself.
fn node_files(
    inputs: &Inputs,
    secrets: &ResolvedSecrets,
    node: &crate::inventory::Node,
    profile: &crate::profile::Profile,
    alloc: &crate::plan::Allocation,
) -> Result<([OutputFile; 2], summary::Installed), RenderError> {
    let site = &inputs.site.site;
    let create = inputs.lock.cluster_init.as_deref() == Some(alloc.id.as_str());
    let cfg = node::build(&NodeContext {
        site,
        node,
        alloc,
        profile,
        create,
        secrets,
    });
    let problems = validate::installer_check(&cfg, true);
    if !problems.is_empty() {
        return Err(RenderError::Invalid {
            node: alloc.hostname.clone(),
            problems,
        });
    }
    let header = format!(
        "# Harvester install config for {} (node {}), written by rackplan.\n\
         # Holds the cluster token and a password hash: keep it private (mode 0600).\n",
        alloc.hostname, alloc.id
    );
    let installed = summary::Installed::of(&cfg);
    Ok((
        [
            OutputFile {
                path: format!("nodes/{}/config.yaml", alloc.hostname),
                kind: "install-config",
                node: Some(alloc.id.clone()),
                secret: true,
                bytes: format!("{header}{}", crate::files::yaml::to_string(&cfg)).into_bytes(),
            },
            OutputFile {
                path: format!("nodes/{}/boot.ipxe", alloc.hostname),
                kind: "ipxe",
                node: Some(alloc.id.clone()),
                secret: false,
                bytes: ipxe::script(site, alloc, create).into_bytes(),
            },
        ],
        installed,
    ))
}

/// Write the files into `out`, removing what an earlier render wrote and this one did not.
pub(crate) fn write(out: &Path, files: Vec<OutputFile>) -> Result<RenderOutcome, RenderError> {
    let old: BTreeSet<String> = std::fs::read_to_string(out.join(INDEX))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let new: BTreeSet<String> = files.iter().map(|f| f.path.clone()).collect();
    // Temporary files of a run that was killed may hold secrets.
    fsio::remove_leftovers(out);
    // Every file is written in full first; only then are they renamed into place. A full
    // disk fails the run while the old output is still whole (the staged files are
    // dropped, which removes them), never leaving some configs new and some old.
    // Staging (write and fsync each temporary file) runs across cores; the renames and the
    // one fsync per directory follow on one thread.
    use rayon::prelude::*;
    let staged: Vec<Option<fsio::Staged>> = files
        .par_iter()
        .map(|f| {
            let mode = if f.secret { Mode::Secret } else { Mode::Public };
            fsio::stage(&out.join(&f.path), &f.bytes, mode)
        })
        .collect::<Result<_, _>>()?;
    fsio::commit_all(staged.into_iter().flatten().collect())?;
    let mut removed = Vec::new();
    for stale in old.difference(&new) {
        // Only plain relative paths we wrote ourselves.
        if stale.split('/').any(|c| c == ".." || c.is_empty()) {
            continue;
        }
        let p = out.join(stale);
        if p.is_file() {
            std::fs::remove_file(&p).map_err(|source| FsError {
                action: "cannot remove",
                path: p.clone(),
                source,
            })?;
            if let Some(parent) = p.parent() {
                let _ = std::fs::remove_dir(parent);
            }
            removed.push(stale.clone());
        }
    }
    let index: String = new.iter().map(|p| format!("{p}\n")).collect();
    fsio::write_atomic(&out.join(INDEX), index.as_bytes(), Mode::Public)?;
    Ok(RenderOutcome {
        out_dir: out.display().to_string(),
        files,
        removed,
        acknowledged: Vec::new(),
    })
}

/// Default output directory: `iso-config/<site>/` beside the `inventory/` folder that holds
/// the site (the repository layout), else `iso-config/` inside the site folder, so the
/// output never depends on the folder rackplan was started from.
pub(crate) fn default_out_dir(site_dir: &Path, site_name: &str) -> PathBuf {
    match site_dir
        .parent()
        .filter(|p| p.file_name().is_some_and(|n| n == "inventory"))
        .and_then(Path::parent)
    {
        Some(root) => root.join("iso-config").join(site_name),
        None => site_dir.join("iso-config"),
    }
}
