//! What a new site holds: site.yaml from the commented template, bmcs.yaml (the addresses
//! of an inventory, or an example), a profile per role, fresh secrets, a `.gitignore`, the
//! schemas, and with an inventory the annotated nodes.yaml. Pure: nothing is written here.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::docs::{formats, modeline};
use crate::inventory::{Inventory, store};
use crate::plan::derive;
use crate::profile::Role;

const SITE_TEMPLATE: &str = include_str!("site_template.yaml");

/// The lines the site's `.gitignore` must hold: the secrets and the rendered configs (which
/// hold the token) stay out of version control.
pub(crate) const GITIGNORE_LINES: [&str; 2] = ["secrets/", "iso-config/"];

/// The site's own capacity scenario, which `simulate --site DIR` reads when no scenario is
/// given.
pub const STARTER_SCENARIO: &str = "scenario.yaml";

/// The starter scenario: the fleet is the site's (nodes.yaml and the profiles), the shapes
/// are the reference design's tenant clusters, and nothing runs yet, so the review answers
/// "how many clusters fit, and does every failure still restart". Platform and failure
/// inputs keep their documented defaults (Harvester's version comes from site.yaml).
fn starter_scenario(name: &str) -> String {
    format!(
        "{}# The capacity scenario of site `{name}`: `rackplan simulate --site .` reads it when no\n\
         # scenario is given. The fleet is this site's nodes (nodes.yaml and the role profiles);\n\
         # platform settings and failure rates keep their defaults (see `rackplan docs` for every key).\n\
         # Add the clusters that run and the teams that ask for more, then simulate again.\n\
         name: {name}\n\
         \n\
         fleet:\n\
         \x20 site: .   # this folder: nodes.yaml and the role profiles\n\
         \n\
         # Tenant cluster shapes: Rancher RKE2 clusters as VMs (3 control-plane + workers).\n\
         # `{{import: path/to/cluster.yaml}}` reads a shape from a Rancher Cluster instead.\n\
         shapes:\n\
         \x20 standard:\n\
         \x20   pools:\n\
         \x20     - {{name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}}\n\
         \x20     - {{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}}\n\
         \x20 large:\n\
         \x20   pools:\n\
         \x20     - {{name: cp, count: 3, vcpu: 8, memory_gib: 16, disks_gib: [80], anti_affinity: true}}\n\
         \x20     - {{name: workers, count: 6, vcpu: 16, memory_gib: 64, disks_gib: [500]}}\n\
         \n\
         # What runs today, e.g. `- {{shape: standard, count: 4}}`.\n\
         clusters: []\n\
         \n\
         # Teams with quotas and dated requests, e.g.\n\
         #   - name: payments\n\
         #     vcpu_quota: 300\n\
         #     requests:\n\
         #       - {{shape: standard, count: 2, from: 2027-01}}\n\
         teams: []\n\
         \n\
         analysis:\n\
         \x20 max_clusters_shape: standard\n",
        modeline("schemas/scenario.schema.json")
    )
}

/// Whose a file is, which decides when an existing one is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The schemas follow the binary: always replaced.
    Binary,
    /// Derived from the inventory (profiles, nodes.yaml): replaced when derived again.
    Derived,
    /// Shipped profiles, site.yaml, bmcs.yaml: people's once written; `--force` replaces.
    People,
    /// `.gitignore`: people's; missing lines are added, nothing is removed.
    GitIgnore,
    /// Fresh secrets: never replaced (a new token would lock out an installed cluster).
    Secret,
}

/// One file of a new site, path relative to the site folder.
#[derive(Debug, Clone)]
pub(crate) struct SiteFile {
    pub(crate) rel: String,
    pub(crate) bytes: Vec<u8>,
    pub(crate) owner: Owner,
}

/// Everything a new site holds, and what the derivation found.
#[derive(Debug, Clone)]
pub(crate) struct Contents {
    pub(crate) files: Vec<SiteFile>,
    /// Role per node, when derived from an inventory.
    pub(crate) roles: BTreeMap<String, Role>,
    /// Profile errors the derivation could not remove, per role.
    pub(crate) remaining: Vec<String>,
}

/// The shipped profiles, for roles the inventory has no node of (or without one).
fn shipped_profile(role: Role) -> &'static str {
    match role {
        Role::Management => include_str!("../../profiles/management.yaml"),
        Role::Compute => include_str!("../../profiles/compute.yaml"),
        Role::Witness => include_str!("../../profiles/witness.yaml"),
    }
}

/// Drop a `# yaml-language-server` line a shipped file carries (it points into the repo).
fn without_modeline(text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with("# yaml-language-server:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn random_secret(len: usize) -> String {
    // 62 symbols; the bias of a byte modulo 62 is irrelevant for a placeholder secret
    // that people are told to replace, but the value is still unguessable.
    const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut bytes = vec![0u8; len];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    bytes
        .iter()
        .map(|b| ALNUM[usize::from(*b) % ALNUM.len()] as char)
        .collect()
}

/// A site name from the folder name: lowercase, `-` for anything else, at most 63.
pub(crate) fn site_name(dir: &Path) -> String {
    let raw = dir
        .canonicalize()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .or_else(|| dir.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    let mut s: String = raw
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    s = s.trim_matches('-').to_string();
    s.truncate(63);
    let s = s.trim_end_matches('-').to_string();
    if s.is_empty() { "site".into() } else { s }
}

fn profiles(
    inventory: Option<&Inventory>,
    files: &mut Vec<SiteFile>,
) -> (BTreeMap<String, Role>, Vec<String>) {
    let mut roles = BTreeMap::new();
    let mut remaining = Vec::new();
    let mut derived = BTreeMap::new();
    if let Some(inv) = inventory {
        let (d, r) = derive::derive_all(inv);
        derived = d;
        roles = r;
    }
    for role in Role::ALL {
        let (body, owner) = match derived.get(&role) {
            Some(d) => {
                for e in &d.remaining {
                    remaining.push(format!("{role}: {e}"));
                }
                (
                    format!(
                        "# The {role} profile, derived from the {} node(s) found: the largest shape all of\n# them have. Tighten it to your hardware standard; `rackplan check` holds every node to it.\n{}",
                        d.nodes.len(),
                        crate::files::yaml::to_string(&d.profile)
                    ),
                    Owner::Derived,
                )
            }
            None => (without_modeline(shipped_profile(role)), Owner::People),
        };
        files.push(SiteFile {
            rel: format!("profiles/{role}.yaml"),
            bytes: format!("{}{body}", modeline("../schemas/profile.schema.json")).into_bytes(),
            // With an inventory, every profile is what was asked for (derived or shipped).
            owner: if inventory.is_some() {
                Owner::Derived
            } else {
                owner
            },
        });
    }
    (roles, remaining)
}

fn bmcs(inventory: Option<&Inventory>) -> String {
    let mut bmcs = modeline("schemas/bmcs.schema.json");
    bmcs.push_str(
        "# The BMCs `rackplan discover redfish` crawls. Credentials come from an environment variable\n# or a file (`{file: secrets/bmc-password}`), never from this file. TLS: the system trust store,\n# a `ca_bundle`, a `pin_sha256`, or `trust_on_first_use: true` (the pin is recorded on the first run).\n",
    );
    let addresses: BTreeSet<String> = inventory
        .iter()
        .flat_map(|i| &i.nodes)
        .filter_map(|n| n.bmc.as_ref().map(|b| b.address.clone()))
        .collect();
    if addresses.is_empty() {
        bmcs.push_str("bmcs:\n  - address: https://10.20.0.11\n    credentials:\n      username: root\n      password: {env: BMC_PASSWORD}\n    tls:\n      trust_on_first_use: true\n    rack: r01\n");
    } else {
        bmcs.push_str("bmcs:\n");
        for a in &addresses {
            let _ = writeln!(bmcs, "  - address: \"{a}\"");
            bmcs.push_str("    # credentials: {username: root, password: {env: BMC_PASSWORD}}\n");
        }
    }
    bmcs
}

/// The files of a new site named `name`, from an inventory when one is given.
pub(crate) fn site_files(name: &str, inventory: Option<&Inventory>) -> Contents {
    let mut files = Vec::new();
    let (roles, remaining) = profiles(inventory, &mut files);
    let node_count = inventory.map_or(0, |i| i.nodes.len());
    let site = SITE_TEMPLATE
        .replace("{modeline}", &modeline("schemas/site.schema.json"))
        .replace("{name}", name)
        .replace(
            "{nodes}",
            &if node_count > 0 {
                format!("{node_count} node(s) found by discovery")
            } else {
                "no inventory yet: run `rackplan discover redfish --site .`".into()
            },
        );
    let mut push = |rel: &str, bytes: Vec<u8>, owner: Owner| {
        files.push(SiteFile {
            rel: rel.to_string(),
            bytes,
            owner,
        });
    };
    push("site.yaml", site.into_bytes(), Owner::People);
    push("bmcs.yaml", bmcs(inventory).into_bytes(), Owner::People);
    push(
        "secrets/token",
        format!("{}\n", random_secret(48)).into_bytes(),
        Owner::Secret,
    );
    push(
        "secrets/password",
        format!("{}\n", random_secret(24)).into_bytes(),
        Owner::Secret,
    );
    let mut gitignore = String::from(
        "# Secrets and the rendered configs (which hold the token) stay out of version control.\n",
    );
    for l in GITIGNORE_LINES {
        gitignore.push_str(l);
        gitignore.push('\n');
    }
    push(".gitignore", gitignore.into_bytes(), Owner::GitIgnore);
    push(
        STARTER_SCENARIO,
        starter_scenario(name).into_bytes(),
        Owner::People,
    );
    for f in formats() {
        push(
            &format!("schemas/{}.schema.json", f.file),
            format!(
                "{}\n",
                serde_json::to_string_pretty(&f.schema).expect("JSON")
            )
            .into_bytes(),
            Owner::Binary,
        );
    }
    if let Some(inv) = inventory {
        let mut inv = inv.clone();
        for n in &mut inv.nodes {
            if n.annotations.role.is_none() {
                n.annotations.role = roles.get(&n.id).copied();
            }
        }
        let text = format!(
            "{}# Discovered inventory; each node's `annotations.role` was set by `rackplan init`.\n{}",
            modeline("schemas/nodes.schema.json"),
            store::to_text(&inv)
        );
        push("nodes.yaml", text.into_bytes(), Owner::Derived);
    }
    Contents {
        files,
        roles,
        remaining,
    }
}
