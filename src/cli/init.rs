//! `rackplan init DIR [--from nodes.yaml]`: a self-contained site to start from. Every
//! file it writes names its schema (editors complete and check it), every site.yaml key is
//! there with a comment, the profiles sit beside the site (no path back into this
//! repository), and the secrets are fresh random files (mode 0600) to replace. With
//! `--from`, the inventory is copied in with each node's role annotated and the profiles
//! are derived from that hardware, so `check` starts from zero profile errors.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::error::{Error, exit};
use super::{Ctx, term};
use crate::files::fsio::{self, Mode};
use crate::inventory::store;
use crate::plan::derive;
use crate::profile::Role;
use crate::report;

const SITE_TEMPLATE: &str = include_str!("init_site.yaml");

/// The shipped profiles, for roles the inventory has no node of (or without `--from`).
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
fn site_name(dir: &Path) -> String {
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

#[derive(Serialize)]
pub struct InitOutcome {
    pub dir: String,
    pub written: Vec<String>,
    pub kept: Vec<String>,
    /// Role per node, when derived from an inventory.
    pub roles: std::collections::BTreeMap<String, Role>,
    /// Profile errors the derivation could not remove, per role.
    pub remaining: Vec<String>,
    pub next: Vec<String>,
}

pub fn run(
    dir: &Path,
    from: Option<&PathBuf>,
    name: Option<&str>,
    force: bool,
    ctx: &Ctx,
) -> Result<u8, Error> {
    let name = name.map_or_else(|| site_name(dir), str::to_string);
    if !crate::site::types::is_dns_label(&name, 63) {
        return Err(Error::Usage(format!(
            "--name {name}: a site name is at most 63 lowercase letters, digits and `-`"
        )));
    }
    let inventory = match from {
        Some(p) => Some(store::load(p)?.0),
        None => None,
    };
    let mut files: Vec<(String, Vec<u8>, Mode)> = Vec::new();
    let mut roles = std::collections::BTreeMap::new();
    let mut remaining = Vec::new();
    // Profiles: derived per role found, shipped for the others.
    let mut derived = std::collections::BTreeMap::new();
    if let Some(inv) = &inventory {
        let (d, r) = derive::derive_all(inv);
        derived = d;
        roles = r;
    }
    for role in Role::ALL {
        let body = match derived.get(&role) {
            Some(d) => {
                for e in &d.remaining {
                    remaining.push(format!("{role}: {e}"));
                }
                format!(
                    "# The {role} profile, derived from the {} node(s) found: the largest shape all of\n# them have. Tighten it to your hardware standard; `rackplan check` holds every node to it.\n{}",
                    d.nodes.len(),
                    crate::files::yaml::to_string(&d.profile)
                )
            }
            None => without_modeline(shipped_profile(role)),
        };
        files.push((
            format!("profiles/{role}.yaml"),
            format!(
                "{}{body}",
                super::docs::modeline("../schemas/profile.schema.json")
            )
            .into_bytes(),
            Mode::Public,
        ));
    }
    let node_count = inventory.as_ref().map_or(0, |i| i.nodes.len());
    let site = SITE_TEMPLATE
        .replace(
            "{modeline}",
            &super::docs::modeline("schemas/site.schema.json"),
        )
        .replace("{name}", &name)
        .replace(
            "{nodes}",
            &if node_count > 0 {
                format!("{node_count} node(s) found by discovery")
            } else {
                "no inventory yet: run `rackplan discover redfish --site .`".into()
            },
        );
    files.push(("site.yaml".into(), site.into_bytes(), Mode::Public));
    let mut bmcs = super::docs::modeline("schemas/bmcs.schema.json");
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
    files.push(("bmcs.yaml".into(), bmcs.into_bytes(), Mode::Public));
    files.push((
        "secrets/token".into(),
        format!("{}\n", random_secret(48)).into_bytes(),
        Mode::Secret,
    ));
    files.push((
        "secrets/password".into(),
        format!("{}\n", random_secret(24)).into_bytes(),
        Mode::Secret,
    ));
    files.push((
        ".gitignore".into(),
        b"# Secrets and the rendered configs (which hold the token) stay out of version control.\nsecrets/\niso-config/\n".to_vec(),
        Mode::Public,
    ));
    for f in super::docs::formats() {
        files.push((
            format!("schemas/{}.schema.json", f.file),
            format!(
                "{}\n",
                serde_json::to_string_pretty(&f.schema).expect("JSON")
            )
            .into_bytes(),
            Mode::Public,
        ));
    }
    if let Some(mut inv) = inventory.clone() {
        for n in &mut inv.nodes {
            if n.annotations.role.is_none() {
                n.annotations.role = roles.get(&n.id).copied();
            }
        }
        let text = store::to_text(&inv);
        let text = format!(
            "{}# Discovered inventory; each node's `annotations.role` was set by `rackplan init`.\n{text}",
            super::docs::modeline("schemas/nodes.schema.json")
        );
        files.push(("nodes.yaml".into(), text.into_bytes(), Mode::Public));
    }

    let _lock = if dir.exists() {
        Some(ctx.lock_site(dir)?)
    } else {
        None
    };
    let mut written = Vec::new();
    let mut kept = Vec::new();
    // Schemas always follow the binary. With --from, the derived profiles and the annotated
    // inventory are what was asked for and replace earlier ones. site.yaml, bmcs.yaml and
    // .gitignore are people's and are replaced only with --force; secrets never (a new
    // token would lock out an installed cluster).
    let mut staged = Vec::new();
    for (rel, bytes, mode) in &files {
        let path = dir.join(rel);
        let replace = rel.starts_with("schemas/")
            || (from.is_some() && (rel.starts_with("profiles/") || rel == "nodes.yaml"))
            || (force && !rel.starts_with("secrets/"));
        if path.exists() && !replace {
            kept.push(rel.clone());
            continue;
        }
        if let Some(s) = fsio::stage(&path, bytes, *mode)? {
            staged.push(s);
        }
        written.push(rel.clone());
    }
    for s in staged {
        s.commit()?;
    }
    let shown = |rel: &str| dir.join(rel).display().to_string();
    let site_arg = dir.display().to_string();
    let mut next = Vec::new();
    if inventory.is_none() {
        next.push(format!(
            "edit {} (BMC addresses and credentials)",
            shown("bmcs.yaml")
        ));
        next.push(format!("rackplan discover redfish --site {site_arg}"));
        next.push(format!(
            "rackplan init {site_arg} --from {}   (profiles from the hardware found)",
            shown("nodes.yaml")
        ));
    }
    let no_paths = inventory
        .iter()
        .flat_map(|i| &i.nodes)
        .filter(|n| !n.disks.is_empty() && n.disks.iter().all(|d| d.path.is_none()))
        .count();
    if no_paths > 0 {
        next.push(format!(
            "rackplan discover ssh --site {site_arg}   ({no_paths} node(s) have no OS disk paths yet; the install config needs /dev/disk/by-id)"
        ));
    }
    next.push(format!(
        "edit {} (networks, VIP, DNS, NTP) and replace the secrets in {}",
        shown("site.yaml"),
        shown("secrets")
    ));
    next.push(format!("rackplan check --site {site_arg}"));
    next.push(format!("rackplan plan --site {site_arg}"));
    next.push(format!("rackplan render --site {site_arg}"));
    let outcome = InitOutcome {
        dir: dir.display().to_string(),
        written: written.iter().map(|r| shown(r)).collect(),
        kept: kept.iter().map(|r| shown(r)).collect(),
        roles,
        remaining,
        next,
    };
    if ctx.json {
        term::outln(&report::json(&outcome));
    } else {
        let mut s = String::new();
        for w in &outcome.written {
            let _ = writeln!(s, "wrote {w}");
        }
        for k in &outcome.kept {
            let _ = writeln!(s, "kept  {k} (exists)");
        }
        if !outcome.roles.is_empty() {
            let mut count = std::collections::BTreeMap::<Role, usize>::new();
            for r in outcome.roles.values() {
                *count.entry(*r).or_default() += 1;
            }
            let _ = writeln!(
                s,
                "roles: {}",
                count
                    .iter()
                    .map(|(r, n)| format!("{n} {r}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for r in &outcome.remaining {
            let _ = writeln!(s, "not fixable by a profile: {r}");
        }
        let _ = writeln!(s, "next:");
        for n in &outcome.next {
            let _ = writeln!(s, "  {n}");
        }
        term::out(&s);
    }
    Ok(exit::OK)
}
