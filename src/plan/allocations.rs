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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// The node that runs `mode: create`; every other node joins it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_init: Option<String>,
    #[serde(default)]
    pub nodes: Vec<Allocation>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allocation {
    pub id: String,
    pub role: Role,
    pub hostname: String,
    pub management_ip: Ipv4Addr,
    pub password_salt: String,
}

impl Lock {
    pub fn get(&self, id: &str) -> Option<&Allocation> {
        self.nodes.iter().find(|a| a.id == id)
    }

    /// Load the lock; a missing file is an empty lock.
    pub fn load(path: &Path) -> Result<(Lock, Option<Source>), InputError> {
        if !path.exists() {
            return Ok((Lock::default(), None));
        }
        let (lock, src): (Lock, Source) = yaml::load(path)?;
        let mut names = BTreeSet::new();
        let mut ips = BTreeSet::new();
        for (i, a) in lock.nodes.iter().enumerate() {
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
        Ok((lock, Some(src)))
    }

    pub fn save(&self, path: &Path) -> Result<(), fsio::FsError> {
        let text = format!(
            "# rackplan allocations (the lock): written by `rackplan plan`.\n\
             # Entries are never renumbered; `rackplan plan --release ID` frees one.\n{}",
            yaml::to_string(self)
        );
        fsio::write_atomic(path, text.as_bytes(), Mode::Public)
    }
}
