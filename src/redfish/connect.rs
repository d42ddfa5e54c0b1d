//! One BMC's client as bmcs.yaml describes it: its trust (pin, CA bundle, first use),
//! its credentials, and a login; shared by discovery and boot.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::client::{BmcClient, ClientError, Limits, LoginError};
use super::config::{self, AddressError, AuthMode, BmcEntry};
use super::fetch::{Fetch, FetchError};
use super::origin::OriginError;
use super::tls::{self, CaBundleError};
use crate::files::secrets::SecretError;

/// Why a BMC's certificate cannot be trusted as bmcs.yaml says.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TrustError {
    #[error("tls.pin_sha256 `{0}` is not a SHA-256 fingerprint (64 hex digits)")]
    Pin(String),
    #[error("cannot read CA bundle {}: {source}", path.display())]
    CaRead {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    CaBundle(#[from] CaBundleError),
}

/// Why no client could be made for a BMC, or its login failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConnectError {
    #[error(transparent)]
    Address(#[from] AddressError),
    #[error(transparent)]
    Trust(#[from] TrustError),
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error(transparent)]
    Origin(#[from] OriginError),
    #[error("credentials.password: {0}")]
    Password(#[from] SecretError),
    /// The ServiceRoot could not be read; the text is [`explain`]'s.
    #[error("ServiceRoot: {0}")]
    ServiceRoot(String),
    #[error(transparent)]
    Login(#[from] LoginError),
}

/// How the certificate of `entry` is trusted: `None` for plain http or the default trust
/// store, and whether the config records a first-use pin into `seen`.
pub(crate) fn tls_for(
    entry: &BmcEntry,
    url: &str,
    site_dir: &Path,
    tofu: bool,
    seen: &Arc<Mutex<Option<String>>>,
) -> Result<(Option<rustls::ClientConfig>, bool), TrustError> {
    if !url.starts_with("https://") {
        return Ok((None, false));
    }
    let spec = entry.tls.clone().unwrap_or_default();
    if let Some(pin) = &spec.pin_sha256 {
        let p = tls::normalize_pin(pin).ok_or_else(|| TrustError::Pin(pin.clone()))?;
        return Ok((Some(tls::pinned(&p)), false));
    }
    if let Some(bundle) = &spec.ca_bundle {
        let path = site_dir.join(bundle);
        let pem = std::fs::read(&path).map_err(|source| TrustError::CaRead {
            path: path.clone(),
            source,
        })?;
        return Ok((Some(tls::ca_bundle(&pem)?), false));
    }
    if spec.trust_on_first_use || tofu {
        return Ok((Some(tls::first_use(seen.clone())), true));
    }
    Ok((None, false))
}

/// A failed request to the BMC at `address` in words: credentials, certificates and no
/// answer in time say what to do (`flag`: the option that gives more time, if any).
pub(crate) fn explain(e: &FetchError, address: &str, flag: Option<&str>) -> String {
    match e {
        FetchError::Status(401 | 403, _) => {
            format!("{e}: authentication failed; check the credentials in bmcs.yaml")
        }
        FetchError::Timeout(d) => crate::reach::timed_out(
            &crate::reach::Peer {
                what: "the BMC",
                address,
                set_in: "bmcs.yaml",
            },
            Some(*d),
            flag,
        ),
        FetchError::Transport(t) if tls::in_words(t).is_some() => {
            format!(
                "TLS refused: {}. To trust this BMC, give tls.pin_sha256 (its certificate's SHA-256) or tls.ca_bundle in bmcs.yaml, or run once with --trust-on-first-use, which records the pin. (detail: {t})",
                tls::in_words(t).unwrap_or_default()
            )
        }
        _ => e.to_string(),
    }
}

/// A logged-in client for one BMC of bmcs.yaml (or an address with no entry: no
/// credentials, default trust). First-use trust is not offered here: boot acts on the
/// machine, so the BMC must already be pinned or trusted.
pub(crate) async fn open(
    entry: &BmcEntry,
    site_dir: &Path,
    limits: &Limits,
) -> Result<BmcClient, ConnectError> {
    tls::install_provider();
    let url = config::base_url(entry)?;
    let seen = Arc::new(Mutex::new(None));
    let mut e = entry.clone();
    if let Some(t) = e.tls.as_mut() {
        t.trust_on_first_use = false;
    }
    let (tls, _) = tls_for(&e, &url, site_dir, false, &seen)?;
    let client = BmcClient::new(&url, BmcClient::http(tls, limits)?, limits.clone())?;
    if let Some(c) = &entry.credentials {
        let pw = c.password.resolve(site_dir)?;
        let root = client
            .get("/redfish/v1")
            .await
            .map_err(|e| ConnectError::ServiceRoot(explain(&e, &url, None)))?;
        let sessions = root
            .pointer("/Links/Sessions")
            .and_then(crate::redfish::fetch::link)
            .unwrap_or_else(|| "/redfish/v1/SessionService/Sessions".into());
        client
            .login(
                &sessions,
                &c.username,
                pw,
                entry.auth == AuthMode::Session,
                entry.auth != AuthMode::Basic,
            )
            .await?;
    }
    Ok(client)
}
