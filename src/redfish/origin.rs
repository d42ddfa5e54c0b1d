//! A BMC's origin (scheme, host, port, as bmcs.yaml configures it) and the rule that binds
//! credentials to it: every URL a BMC names (an `@odata.id`, a session `Location`, an action
//! `target`, a redirect) is resolved against the origin and refused unless it stays there.
//! A BMC that points elsewhere gets the refusal as a finding; nothing is sent.

use url::Url;

/// The scheme, host and port that credentials for one BMC belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    base: Url,
}

/// A URL a BMC named that leaves its origin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the BMC pointed at {shown}; refused (only {origin} is trusted with its credentials)")]
pub(crate) struct OffOrigin {
    /// What the BMC named, cut and stripped of control characters for display.
    pub(crate) shown: String,
    pub(crate) origin: String,
}

/// A base URL that cannot be an origin for credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OriginError {
    #[error("`{base}` is not a URL: {source}")]
    NotAUrl {
        base: String,
        source: url::ParseError,
    },
    #[error("`{0}` is not an http(s) URL with a host")]
    NotHttp(String),
    #[error("write credentials in `credentials`, not in the address")]
    Credentials,
}

impl Origin {
    /// The origin of a base URL such as `https://10.20.0.11:443`.
    pub(crate) fn parse(base: &str) -> Result<Origin, OriginError> {
        let base = Url::parse(base).map_err(|source| OriginError::NotAUrl {
            base: base.to_string(),
            source,
        })?;
        if !matches!(base.scheme(), "http" | "https") || base.host_str().is_none() {
            return Err(OriginError::NotHttp(base.to_string()));
        }
        if !base.username().is_empty() || base.password().is_some() {
            return Err(OriginError::Credentials);
        }
        Ok(Origin { base })
    }

    /// `scheme://host:port`, as shown to people.
    pub(crate) fn as_str(&self) -> String {
        self.base.origin().ascii_serialization()
    }

    /// Resolve `reference` (a path such as `/redfish/v1/Systems/1`, or an absolute URL)
    /// against this origin; anything that lands on another scheme, host or port (an
    /// absolute URL elsewhere, `//host/x`, `@host:port/x`, a downgrade to http) is refused.
    pub(crate) fn resolve(&self, reference: &str) -> Result<Url, OffOrigin> {
        let refused = || OffOrigin {
            shown: shown(reference),
            origin: self.as_str(),
        };
        if reference.chars().any(char::is_control) {
            return Err(refused());
        }
        // A bare `@host:port/...` would read as userinfo once glued to the base; as a
        // reference it is a relative path, which is what url::Url::join makes of it.
        let url = self.base.join(reference).map_err(|_| refused())?;
        if url.origin() != self.base.origin()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(refused());
        }
        Ok(url)
    }
}

/// A BMC-supplied string made safe to show: control characters dropped, at most 120 chars.
pub(crate) fn shown(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).take(120).collect();
    if s.chars().count() > 120 {
        format!("{clean}...")
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_same_origin_urls_resolve() {
        let o = Origin::parse("https://10.20.0.11").unwrap();
        assert_eq!(
            o.resolve("/redfish/v1/Systems/1").unwrap().as_str(),
            "https://10.20.0.11/redfish/v1/Systems/1"
        );
        assert_eq!(
            o.resolve("https://10.20.0.11:443/redfish/v1")
                .unwrap()
                .as_str(),
            "https://10.20.0.11/redfish/v1"
        );
    }

    #[test]
    fn every_way_out_is_refused() {
        let o = Origin::parse("https://127.0.0.1:8443").unwrap();
        for r in [
            "https://127.0.0.2:8443/redfish/v1",
            "http://127.0.0.1:8443/redfish/v1",
            "https://127.0.0.1:9443/redfish/v1",
            "//127.0.0.2/redfish/v1",
            "https://user@127.0.0.1:8443/x",
            "/redfish/v1\nHost: evil",
        ] {
            let e = o.resolve(r).unwrap_err();
            assert!(e.to_string().contains("refused"), "{r}: {e}");
            assert!(!e.shown.contains('\n'));
        }
        // `@host:port/...` is a relative path here, not userinfo: it stays on the origin.
        let u = o.resolve("@127.0.0.2:9000/redfish/v1").unwrap();
        assert_eq!(u.host_str(), Some("127.0.0.1"));
    }

    #[test]
    fn addresses_with_credentials_are_not_origins() {
        assert_eq!(
            Origin::parse("https://root:calvin@10.0.0.1"),
            Err(OriginError::Credentials)
        );
        assert!(matches!(
            Origin::parse("ftp://10.0.0.1"),
            Err(OriginError::NotHttp(_))
        ));
    }
}
