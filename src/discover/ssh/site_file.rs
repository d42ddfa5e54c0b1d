//! `ssh.yaml` in a site folder: the defaults of `discover ssh`.
//!
//! ```yaml
//! user: root                 # when a host does not name one
//! identity: keys/id_ed25519  # relative to the site folder (the agent's keys go first)
//! passphrase: {env: SSH_KEY_PASSPHRASE}   # for a protected key: a variable or a file
//! known_hosts: known_hosts   # the site's own file (default: known_hosts)
//! accept_new: false          # record keys of hosts not yet known
//! hosts: [root@10.10.0.11, 10.10.0.12:2222]
//! ```

use std::path::Path;

use serde::Deserialize;

use crate::files::yaml::{self, InputError, Source};

#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SshFile {
    #[serde(default)]
    pub(crate) user: Option<String>,
    #[serde(default)]
    pub(crate) identity: Option<String>,
    /// The identity's passphrase, from an environment variable or a file.
    #[serde(default)]
    pub(crate) passphrase: Option<crate::files::secrets::SecretRef>,
    #[serde(default)]
    pub(crate) known_hosts: Option<String>,
    #[serde(default)]
    pub(crate) accept_new: bool,
    #[serde(default)]
    pub(crate) hosts: Vec<String>,
}

/// `DIR/ssh.yaml` if it exists, with its source for located errors.
pub(crate) fn load(dir: &Path) -> Result<Option<(SshFile, Source)>, InputError> {
    let path = dir.join("ssh.yaml");
    if !path.exists() {
        return Ok(None);
    }
    let (file, src): (SshFile, Source) = yaml::load(&path)?;
    Ok(Some((file, src)))
}
