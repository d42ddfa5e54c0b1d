//! `bmcs.yaml`: which BMCs to crawl and how to reach them.
//!
//! ```yaml
//! bmcs:
//!   - address: https://10.20.0.11          # scheme://host[:port]; https unless said
//!     credentials:
//!       username: root
//!       password: {env: BMC_PASSWORD}       # or {file: path}; never literal
//!     auth: auto                            # auto (session, then Basic) | session | basic
//!     tls:
//!       pin_sha256: "3f:a1:..."             # or ca_bundle: certs/bmc-ca.pem
//!     rack: r01
//! ```
//! The smallest valid file is `bmcs: [{address: "http://127.0.0.1:8001"}]`: no credentials
//! means none are sent.

use serde::{Deserialize, Serialize};

use std::path::Path;

use crate::files::secrets::SecretRef;
use crate::files::yaml::{self, InputError, Source};
use crate::path;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BmcsFile {
    #[serde(default)]
    pub(crate) bmcs: Vec<BmcEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BmcEntry {
    /// `https://10.20.0.11`, `10.20.0.11`, `http://127.0.0.1:8001`.
    pub(crate) address: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) port: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scheme: Option<Scheme>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) credentials: Option<Credentials>,
    #[serde(default)]
    pub(crate) auth: AuthMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tls: Option<TlsSpec>,
    /// Copied into `annotations.rack` of nodes first seen behind this BMC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rack: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Scheme {
    Http,
    Https,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub(crate) enum AuthMode {
    /// Session login, falling back to Basic when the BMC gives no token.
    #[default]
    Auto,
    Session,
    Basic,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Credentials {
    pub(crate) username: String,
    pub(crate) password: SecretRef,
}

/// How the BMC's certificate is trusted. Without this block the system trust store is used.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TlsSpec {
    /// SHA-256 of the leaf certificate (hex, colons optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) pin_sha256: Option<String>,
    /// PEM file of CA certificates, relative to the site directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ca_bundle: Option<String>,
    /// Accept the certificate seen on the next run and record its pin here.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) trust_on_first_use: bool,
}

/// Why a BMC entry's address is not a base URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum AddressError {
    #[error("unsupported scheme `{0}` (use http or https)")]
    Scheme(String),
    #[error("address says {said} but `scheme` says {want}")]
    SchemeConflict { said: String, want: &'static str },
    #[error("`{0}` is not host[:port]")]
    NotHostPort(String),
    #[error("the port is given twice (in address and in `port`)")]
    PortTwice,
}

/// A BMC address resolved to a base URL (`scheme://host:port`, no trailing slash).
pub(crate) fn base_url(entry: &BmcEntry) -> Result<String, AddressError> {
    let raw = entry.address.trim().trim_end_matches('/');
    let (scheme, rest) = match raw.split_once("://") {
        Some((s, r)) => (s.to_ascii_lowercase(), r),
        None => (
            match entry.scheme {
                Some(Scheme::Http) => "http".to_string(),
                _ => "https".to_string(),
            },
            raw,
        ),
    };
    if scheme != "http" && scheme != "https" {
        return Err(AddressError::Scheme(scheme));
    }
    if let Some(s) = entry.scheme {
        let want = if s == Scheme::Http { "http" } else { "https" };
        if raw.contains("://") && want != scheme {
            return Err(AddressError::SchemeConflict { said: scheme, want });
        }
    }
    if rest.is_empty() || rest.contains('/') || rest.contains('@') {
        return Err(AddressError::NotHostPort(entry.address.clone()));
    }
    let has_port = if rest.starts_with('[') {
        rest.contains("]:")
    } else {
        rest.rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    };
    let host_port = match (entry.port, has_port) {
        (Some(p), false) => format!("{rest}:{p}"),
        (Some(_), true) => return Err(AddressError::PortTwice),
        (None, _) => rest.to_string(),
    };
    Ok(format!("{scheme}://{host_port}"))
}

/// Read `bmcs.yaml` and check every entry's address and password reference, with located
/// errors: an empty list, an address that is not `scheme://host[:port]`, a literal password.
pub(crate) fn load(path: &Path) -> Result<(BmcsFile, Source), InputError> {
    let (file, src): (BmcsFile, Source) = yaml::load(path)?;
    validate(&file, &src)?;
    Ok((file, src))
}

/// The checks of [`load`] on a file already parsed.
pub(crate) fn validate(file: &BmcsFile, src: &Source) -> Result<(), InputError> {
    if file.bmcs.is_empty() {
        return Err(src.error_at(
            &path!["bmcs"],
            "no BMC listed",
            Some("add entries like `- address: https://10.20.0.11`".into()),
        ));
    }
    for (i, e) in file.bmcs.iter().enumerate() {
        if let Err(msg) = base_url(e) {
            return Err(src.error_at(
                &path!["bmcs", i, "address"],
                msg.to_string(),
                Some("write scheme://host[:port], e.g. https://10.20.0.11".into()),
            ));
        }
        if let Some(c) = &e.credentials
            && let Err(msg) = c.password.check_shape()
        {
            return Err(src.error_at(
                &path!["bmcs", i, "credentials", "password"],
                msg.to_string(),
                Some("write `{env: VAR}` or `{file: path}`".into()),
            ));
        }
    }
    Ok(())
}

/// The entry of `file` whose base URL is `address`, or a bare entry for that address (no
/// credentials, default trust) when bmcs.yaml does not list it.
pub(crate) fn entry_for(file: &BmcsFile, address: &str) -> BmcEntry {
    file.bmcs
        .iter()
        .find(|e| base_url(e).ok().as_deref() == Some(address))
        .cloned()
        .unwrap_or_else(|| BmcEntry {
            address: address.to_string(),
            port: None,
            scheme: None,
            credentials: None,
            auth: AuthMode::Auto,
            tls: None,
            rack: None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(address: &str, port: Option<u16>, scheme: Option<Scheme>) -> BmcEntry {
        BmcEntry {
            address: address.into(),
            port,
            scheme,
            credentials: None,
            auth: AuthMode::Auto,
            tls: None,
            rack: None,
        }
    }

    #[test]
    fn addresses_resolve() {
        assert_eq!(
            base_url(&entry("http://127.0.0.1:8001", None, None)).unwrap(),
            "http://127.0.0.1:8001"
        );
        assert_eq!(
            base_url(&entry("10.0.0.5", None, None)).unwrap(),
            "https://10.0.0.5"
        );
        assert_eq!(
            base_url(&entry("10.0.0.5", Some(8443), None)).unwrap(),
            "https://10.0.0.5:8443"
        );
        assert_eq!(
            base_url(&entry("10.0.0.5", None, Some(Scheme::Http))).unwrap(),
            "http://10.0.0.5"
        );
        assert_eq!(
            base_url(&entry("ftp://x", None, None)),
            Err(AddressError::Scheme("ftp".into()))
        );
        assert_eq!(
            base_url(&entry("10.0.0.5:443", Some(443), None)),
            Err(AddressError::PortTwice)
        );
        assert_eq!(
            base_url(&entry("http://10.0.0.5/redfish", None, None))
                .unwrap_err()
                .to_string(),
            "`http://10.0.0.5/redfish` is not host[:port]"
        );
    }
}
