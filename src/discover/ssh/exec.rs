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
pub enum KeyCheck {
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

pub struct Target {
    pub user: String,
    pub host: String,
    pub port: u16,
}

/// Run `script` on the host; the output, or an error in words.
pub async fn run(
    t: &Target,
    key: Arc<PrivateKey>,
    known_hosts: PathBuf,
    accept_new: bool,
    timeout: Duration,
    script: &str,
    max_output: usize,
) -> Result<(String, KeyCheck), String> {
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
                KeyCheck::Unknown => format!(
                    "host key of {}:{} is not in {}; run with --accept-new to record it (after checking it out of band)",
                    t.host,
                    t.port,
                    known_hosts.display()
                ),
                KeyCheck::Changed(line) => format!(
                    "HOST KEY CHANGED for {}:{} (known_hosts line {line}): refusing to connect; if the host was reinstalled, remove that line",
                    t.host, t.port
                ),
                KeyCheck::Failed(m) => m,
                _ => format!("cannot connect: {e}"),
            });
        }
    };
    let auth = session
        .authenticate_publickey(&t.user, PrivateKeyWithHashAlg::new(key, None))
        .await
        .map_err(|e| format!("authentication failed: {e}"))?;
    if !auth.success() {
        return Err(format!(
            "authentication refused for user {}: the key is not authorised on the host",
            t.user
        ));
    }
    let mut channel = session
        .channel_open_session()
        .await
        .map_err(|e| format!("cannot open a channel: {e}"))?;
    channel
        .exec(true, script)
        .await
        .map_err(|e| format!("cannot run the probe: {e}"))?;
    let mut out = Vec::new();
    while let Some(msg) = channel.wait().await {
        match msg {
            russh::ChannelMsg::Data { data } => {
                if out.len() + data.len() > max_output {
                    return Err(format!("the probe printed more than {max_output} bytes"));
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
    Ok((String::from_utf8_lossy(&out).into_owned(), check))
}

/// Load a private key file (ed25519 or ECDSA, unencrypted).
pub fn load_key(path: &std::path::Path) -> Result<russh::keys::PrivateKey, String> {
    russh::keys::load_secret_key(path, None).map_err(|e| {
        format!(
            "cannot load the SSH key {}: {e} (encrypted keys need an agent, which is not supported yet)",
            path.display()
        )
    })
}
