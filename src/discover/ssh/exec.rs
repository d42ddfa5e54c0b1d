//! Running the probe over SSH (russh): strict host-key checking against the site's own
//! known_hosts file, an explicit accept-new that records unknown keys, a changed key as a
//! hard error, public-key authentication from a key file, one exec channel per host.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client;
use russh::keys::{PrivateKey, PrivateKeyWithHashAlg, PublicKeyOrCertificate};

/// What the host-key check concluded.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KeyCheck {
    NotReached,
    Known,
    Learned,
    Unknown,
    Changed(usize),
    Failed(String),
}

struct Handler {
    host: String,
    port: u16,
    known_hosts: PathBuf,
    accept_new: bool,
    result: Arc<Mutex<KeyCheck>>,
}

impl client::Handler for Handler {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let set = |k: KeyCheck| *self.result.lock().expect("not poisoned") = k;
        let PublicKeyOrCertificate::PublicKey { key, .. } = key else {
            set(KeyCheck::Failed(
                "the host presented a certificate; only plain host keys are checked".into(),
            ));
            return Ok(false);
        };
        let known = if self.known_hosts.exists() {
            russh::keys::check_known_hosts_path(&self.host, self.port, key, &self.known_hosts)
        } else {
            Ok(false)
        };
        match known {
            Ok(true) => {
                set(KeyCheck::Known);
                Ok(true)
            }
            Ok(false) if self.accept_new => match russh::keys::known_hosts::learn_known_hosts_path(
                &self.host,
                self.port,
                key,
                &self.known_hosts,
            ) {
                Ok(()) => {
                    set(KeyCheck::Learned);
                    Ok(true)
                }
                Err(e) => {
                    set(KeyCheck::Failed(format!(
                        "cannot record the host key in {}: {e}",
                        self.known_hosts.display()
                    )));
                    Ok(false)
                }
            },
            Ok(false) => {
                set(KeyCheck::Unknown);
                Ok(false)
            }
            Err(russh::keys::Error::KeyChanged { line }) => {
                set(KeyCheck::Changed(line));
                Ok(false)
            }
            Err(e) => {
                set(KeyCheck::Failed(format!(
                    "cannot read {}: {e}",
                    self.known_hosts.display()
                )));
                Ok(false)
            }
        }
    }
}

/// Why a host could not be probed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SshError {
    #[error(
        "host key of {host}:{port} is not in {}; run with --accept-new to record it (after checking it out of band)",
        known_hosts.display()
    )]
    UnknownHostKey {
        host: String,
        port: u16,
        known_hosts: PathBuf,
    },
    #[error(
        "HOST KEY CHANGED for {host}:{port} (known_hosts line {line}): refusing to connect; if the host was reinstalled, remove that line"
    )]
    HostKeyChanged {
        host: String,
        port: u16,
        line: usize,
    },
    /// The host key could not be checked or recorded (the handler's words).
    #[error("{0}")]
    HostKeyCheck(String),
    #[error("cannot connect: {0}")]
    Connect(russh::Error),
    /// The host could not be reached: why, in words with the fix (`crate::reach`).
    #[error("cannot connect: {0}")]
    Unreachable(String),
    #[error("authentication failed for user {user}: {source}")]
    Auth { user: String, source: AuthError },
    #[error("authentication refused for user {user}: {what} authorised on the host")]
    Refused { user: String, what: &'static str },
    #[error("cannot open a channel: {0}")]
    Channel(russh::Error),
    #[error("cannot run the probe: {0}")]
    Exec(russh::Error),
}

/// What the probe printed: at most the bound it was run with; `cut` when it printed more
/// (the rest was not read, and the channel was closed).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Answer {
    pub(crate) text: String,
    pub(crate) cut: bool,
}

impl SshError {
    /// Key and authentication problems do not get better by retrying.
    pub(crate) fn is_final(&self) -> bool {
        matches!(
            self,
            SshError::UnknownHostKey { .. }
                | SshError::HostKeyChanged { .. }
                | SshError::HostKeyCheck(_)
                | SshError::Auth { .. }
                | SshError::Refused { .. }
        )
    }
}

/// A login that went wrong (rather than being refused).
#[derive(Debug, thiserror::Error)]
pub(crate) enum AuthError {
    #[error("authentication failed: {0}")]
    Key(russh::Error),
    /// What went wrong with the agent, per attempt.
    #[error("{}", .0.join("; "))]
    Agent(Vec<String>),
}

/// A private key file that cannot be used. The texts say how to give a passphrase, never
/// what it was.
#[derive(Debug, thiserror::Error)]
pub(crate) enum KeyFileError {
    #[error(
        "the SSH key {} is protected by a passphrase: add it to ssh-agent (`ssh-add`), or give the passphrase in RACKPLAN_SSH_PASSPHRASE, with --passphrase-file FILE, or as `passphrase: {{env: VAR}}` in ssh.yaml",
        .0.display()
    )]
    Protected(PathBuf),
    #[error("the passphrase does not open the SSH key {}", .0.display())]
    WrongPassphrase(PathBuf),
    #[error("cannot load the SSH key {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: russh::keys::Error,
    },
}

pub(crate) struct Target {
    pub(crate) user: String,
    pub(crate) host: String,
    pub(crate) port: u16,
}

/// How to log in: the keys an ssh-agent holds (tried first), then a key file.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    /// The agent's socket (`SSH_AUTH_SOCK`).
    pub(crate) agent: Option<PathBuf>,
    pub(crate) key: Option<Arc<PrivateKey>>,
}

fn rsa_hash(key: &russh::keys::PublicKey) -> Option<russh::keys::HashAlg> {
    key.algorithm()
        .is_rsa()
        .then_some(russh::keys::HashAlg::Sha512)
}

/// Log in with the agent's keys, then the key file; `Ok(false)` when every key was refused.
async fn login(
    session: &mut client::Handle<Handler>,
    user: &str,
    auth: &Auth,
) -> Result<bool, AuthError> {
    let mut problems = Vec::new();
    if let Some(sock) = &auth.agent {
        match russh::keys::agent::client::AgentClient::connect_uds(sock).await {
            Ok(mut agent) => match agent.request_identities().await {
                Ok(ids) => {
                    for id in ids {
                        let russh::keys::agent::AgentIdentity::PublicKey { key, .. } = &id else {
                            continue;
                        };
                        match session
                            .authenticate_publickey_with(
                                user,
                                key.clone(),
                                rsa_hash(key),
                                &mut agent,
                            )
                            .await
                        {
                            Ok(r) if r.success() => return Ok(true),
                            Ok(_) => {}
                            Err(e) => problems.push(format!("the agent could not sign: {e}")),
                        }
                    }
                }
                Err(e) => problems.push(format!("the agent did not list its keys: {e}")),
            },
            Err(e) => problems.push(format!(
                "cannot reach the ssh-agent at {}: {e}",
                sock.display()
            )),
        }
    }
    if let Some(key) = &auth.key {
        let hash = rsa_hash(key.public_key());
        let r = session
            .authenticate_publickey(user, PrivateKeyWithHashAlg::new(key.clone(), hash))
            .await
            .map_err(AuthError::Key)?;
        if r.success() {
            return Ok(true);
        }
    }
    if problems.is_empty() {
        Ok(false)
    } else {
        Err(AuthError::Agent(problems))
    }
}

/// Run `script` on the host; its output (at most `max_output` bytes: what comes after is
/// not read, and the answer says it was cut), or an error in words.
pub(crate) async fn run(
    t: &Target,
    auth: Arc<Auth>,
    known_hosts: PathBuf,
    accept_new: bool,
    timeout: Duration,
    script: &str,
    max_output: usize,
) -> Result<(Answer, KeyCheck), SshError> {
    let result = Arc::new(Mutex::new(KeyCheck::NotReached));
    let handler = Handler {
        host: t.host.clone(),
        port: t.port,
        known_hosts: known_hosts.clone(),
        accept_new,
        result: result.clone(),
    };
    let config = Arc::new(client::Config {
        inactivity_timeout: Some(timeout),
        ..Default::default()
    });
    let connected = client::connect(config, (t.host.as_str(), t.port), handler).await;
    let check = result.lock().expect("not poisoned").clone();
    let mut session = match connected {
        Ok(s) => s,
        Err(e) => {
            return Err(match check {
                KeyCheck::Unknown => SshError::UnknownHostKey {
                    host: t.host.clone(),
                    port: t.port,
                    known_hosts,
                },
                KeyCheck::Changed(line) => SshError::HostKeyChanged {
                    host: t.host.clone(),
                    port: t.port,
                    line,
                },
                KeyCheck::Failed(m) => SshError::HostKeyCheck(m),
                _ => {
                    let address = format!("{}:{}", t.host, t.port);
                    let peer = crate::reach::Peer {
                        what: "the host",
                        address: &address,
                        set_in: "the host list (--hosts, ssh.yaml or the lock's addresses)",
                    };
                    match crate::reach::explain(&peer, &crate::reach::innermost(&e)) {
                        Some(words) => SshError::Unreachable(words),
                        None => SshError::Connect(e),
                    }
                }
            });
        }
    };
    let accepted = login(&mut session, &t.user, &auth)
        .await
        .map_err(|source| SshError::Auth {
            user: t.user.clone(),
            source,
        })?;
    if !accepted {
        let what = match (&auth.agent, &auth.key) {
            (Some(_), Some(_)) => "neither the agent's keys nor the key file is",
            (Some(_), None) => "none of the agent's keys is",
            _ => "the key is",
        };
        return Err(SshError::Refused {
            user: t.user.clone(),
            what,
        });
    }
    let mut channel = session
        .channel_open_session()
        .await
        .map_err(SshError::Channel)?;
    channel.exec(true, script).await.map_err(SshError::Exec)?;
    let mut out = Vec::new();
    let mut cut = false;
    while let Some(msg) = channel.wait().await {
        match msg {
            russh::ChannelMsg::Data { data } => {
                let room = max_output - out.len();
                if data.len() > room {
                    out.extend_from_slice(&data[..room]);
                    cut = true;
                    break;
                }
                out.extend_from_slice(&data);
            }
            russh::ChannelMsg::Eof | russh::ChannelMsg::Close => break,
            _ => {}
        }
    }
    let _ = session
        .disconnect(russh::Disconnect::ByApplication, "", "en")
        .await;
    let text = String::from_utf8_lossy(&out).into_owned();
    Ok((Answer { text, cut }, check))
}

/// Load a private key file (ed25519, ECDSA or RSA), decrypting it with `passphrase` when it
/// is protected. The error says how to give a passphrase, never what it was.
pub(crate) fn load_key(
    path: &std::path::Path,
    passphrase: Option<&str>,
) -> Result<russh::keys::PrivateKey, KeyFileError> {
    match russh::keys::load_secret_key(path, None) {
        Ok(k) => Ok(k),
        Err(russh::keys::Error::KeyIsEncrypted) => match passphrase {
            None => Err(KeyFileError::Protected(path.to_path_buf())),
            Some(p) => russh::keys::load_secret_key(path, Some(p))
                .map_err(|_| KeyFileError::WrongPassphrase(path.to_path_buf())),
        },
        Err(source) => Err(KeyFileError::Unreadable {
            path: path.to_path_buf(),
            source,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_and_login_problems_are_final_transport_ones_are_retried() {
        let unknown = SshError::UnknownHostKey {
            host: "h".into(),
            port: 22,
            known_hosts: PathBuf::from("known_hosts"),
        };
        assert!(unknown.is_final());
        assert!(
            unknown
                .to_string()
                .starts_with("host key of h:22 is not in known_hosts")
        );
        assert!(
            SshError::Refused {
                user: "root".into(),
                what: "the key is",
            }
            .is_final()
        );
        assert!(SshError::HostKeyCheck("cannot read known_hosts".into()).is_final());
        assert!(!SshError::Connect(russh::Error::Disconnect).is_final());
        assert_eq!(
            SshError::Auth {
                user: "root".into(),
                source: AuthError::Agent(vec!["a".into(), "b".into()]),
            }
            .to_string(),
            "authentication failed for user root: a; b"
        );
    }
}
