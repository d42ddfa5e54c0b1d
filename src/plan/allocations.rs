//! `allocations.yaml`, the lock: node id -> role, hostname, management address. This file
//! is the data and its loading; `allocate` is the planning that extends it.
//!
//! Planning only ever adds to the lock. A node already in it keeps its hostname and address;
//! a new node takes the lowest free hostname index of its role and the lowest free pool
//! address; a node that left the inventory keeps its entry (reported as orphaned) until
//! someone runs `plan --release ID`. The `password_salt` makes password hashes stable across
//! renders without a fixed salt: it is random once, then recorded.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::files::fsio::{self, Mode};
use crate::files::secrets;
use crate::files::yaml::{self, InputError, Source};
use crate::path;
use crate::profile::Role;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The node that runs `mode: create`; every other node joins it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_init: Option<String>,
    #[serde(default)]
    pub nodes: Vec<Allocation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Allocation {
    pub id: String,
    pub role: Role,
    pub hostname: String,
    pub management_ip: Ipv4Addr,
    pub password_salt: String,
}

/// An RFC 1123 label: 1 to 63 of `a-z`, `0-9`, `-`, not starting or ending with `-`.
pub(crate) fn is_rfc1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

impl Lock {
    pub fn get(&self, id: &str) -> Option<&Allocation> {
        self.nodes.iter().find(|a| a.id == id)
    }

    /// Load the lock; a missing file is an empty lock. A symbolic link that is dangling or
    /// loops is an error: taking it as no lock would renumber every node.
    pub fn load(path: &Path) -> Result<(Lock, Option<Source>), InputError> {
        let there = yaml::input_exists(path).map_err(|mut e| {
            e.hint = Some("the lock is behind a broken link, not absent: point the link at the real allocations.yaml (or restore it from version control or a backup); delete the link only if you mean to renumber every node".into());
            e
        })?;
        if !there {
            return Ok((Lock::default(), None));
        }
        let (lock, src): (Lock, Source) = yaml::load(path)?;
        // An empty or comment-only lock is damage (a full disk, a truncation, a bad
        // merge), never "no lock": taking it as empty would renumber every node.
        let has_content = src
            .text
            .lines()
            .any(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        if !has_content {
            return Err(src.error_at(
                &path![],
                "allocations.yaml is empty: the lock is damaged, not absent",
                Some("restore it from version control or a backup; delete the file only if you mean to renumber every node".into()),
            ));
        }
        let mut names = BTreeSet::new();
        let mut ips = BTreeSet::new();
        let mut ids = BTreeSet::new();
        for (i, a) in lock.nodes.iter().enumerate() {
            if !ids.insert(a.id.as_str()) {
                return Err(src.error_at(
                    &path!["nodes", i, "id"],
                    format!("duplicate node id `{}`", a.id),
                    Some("a node has one allocation; delete one of the two entries".into()),
                ));
            }
            if !is_rfc1123_label(&a.hostname) {
                return Err(src.error_at(
                    &path!["nodes", i, "hostname"],
                    format!("`{}` is not a valid hostname (RFC 1123: 1-63 of a-z, 0-9 and `-`, not starting or ending with `-`)", crate::redfish::origin::shown(&a.hostname)),
                    Some("write a lowercase name such as hv-c01".into()),
                ));
            }
            if !names.insert(a.hostname.as_str()) {
                return Err(src.error_at(
                    &path!["nodes", i, "hostname"],
                    format!("duplicate hostname `{}`", a.hostname),
                    Some("every node needs its own hostname; edit or delete one entry".into()),
                ));
            }
            if !ips.insert(a.management_ip) {
                return Err(src.error_at(
                    &path!["nodes", i, "management_ip"],
                    format!("duplicate management address {}", a.management_ip),
                    Some("every node needs its own address; edit or delete one entry".into()),
                ));
            }
            if !secrets::is_valid_salt(&a.password_salt) {
                return Err(src.error_at(
                    &path!["nodes", i, "password_salt"],
                    "password_salt must be 16 characters of [./0-9A-Za-z]",
                    Some("delete the line; `rackplan plan` writes a new one".into()),
                ));
            }
        }
        if let Some(init) = &lock.cluster_init
            && !lock.nodes.iter().any(|a| a.id == *init)
        {
            return Err(src.error_at(
                &path!["cluster_init"],
                format!("cluster_init names `{init}`, which has no allocation: no node would create the cluster"),
                Some("name the id of a management node in this file".into()),
            ));
        }
        Ok((lock, Some(src)))
    }

    /// The checks that need the site: every address inside the management network, none
    /// equal to the VIP, the gateway or the network and broadcast addresses.
    pub(crate) fn validate_against(
        &self,
        src: &Source,
        m: &crate::site::ManagementNetwork,
    ) -> Result<(), InputError> {
        for (i, a) in self.nodes.iter().enumerate() {
            let ip = a.management_ip;
            let why = if ip == m.vip {
                Some(format!("{ip} is the cluster VIP"))
            } else if ip == m.gateway {
                Some(format!("{ip} is the gateway"))
            } else if !m.cidr.contains(&ip) {
                Some(format!("{ip} is outside the management network {}", m.cidr))
            } else if ip == m.cidr.network() || ip == m.cidr.broadcast() {
                Some(format!(
                    "{ip} is the network or broadcast address of {}",
                    m.cidr
                ))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(src.error_at(
                    &path!["nodes", i, "management_ip"],
                    format!("node {}: {why}", a.id),
                    Some("give the node a free address of management.pool, or delete the entry and run `rackplan plan`".into()),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn save(&self, path: &Path) -> Result<(), fsio::FsError> {
        let text = format!(
            "# rackplan allocations (the lock): written by `rackplan plan`.\n\
             # Entries are never renumbered; `rackplan plan --release ID` frees one.\n{}",
            yaml::to_string(self)
        );
        fsio::write_atomic(path, text.as_bytes(), Mode::Public)
    }
}
