//! Sign-in by an authenticating proxy in front of the portal: the proxy authenticates the
//! user and asserts who it is in a header (the user, and a header of comma-separated
//! groups); the portal turns that into Kubernetes impersonation (`Impersonate-User`,
//! `Impersonate-Group`) on the calls it makes with its impersonator identity, a service
//! account that may impersonate and nothing else. The API server then answers each call
//! as that user, by RBAC, exactly as with the user's own token.
//!
//! The trust boundary moves to the proxy: whoever can reach the portal without passing the
//! proxy can claim any identity. So the portal must be reachable only through the proxy
//! (it listens on loopback or behind a NetworkPolicy), and the proxy must replace, never
//! pass on, the identity headers a client sends. No cookie is kept in this mode; the CSRF
//! token of an identity is an HMAC of it under the key drawn at start.

use axum::http::{HeaderMap, HeaderName};
use ring::hmac;
use serde::{Deserialize, Serialize};

/// Longest user name and group list taken from the proxy's headers.
const MAX_USER: usize = 256;
const MAX_GROUPS: usize = 32;

/// Who the proxy says the user is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proxied {
    pub user: String,
    pub groups: Vec<String>,
}

/// The headers the proxy asserts, and the key that makes CSRF tokens.
pub struct ProxyAuth {
    user_header: HeaderName,
    groups_header: Option<HeaderName>,
    key: hmac::Key,
    /// The impersonator's client configuration.
    pub(super) base: kube::Config,
}

impl ProxyAuth {
    pub fn new(
        user_header: HeaderName,
        groups_header: Option<HeaderName>,
        key: &[u8; 32],
        base: kube::Config,
    ) -> ProxyAuth {
        ProxyAuth {
            user_header,
            groups_header,
            key: hmac::Key::new(hmac::HMAC_SHA256, key),
            base,
        }
    }

    /// The identity the request's headers assert, if it is one: a user of printable
    /// characters, each group too, bounded.
    pub fn identity(&self, headers: &HeaderMap) -> Option<Proxied> {
        let plain =
            |s: &str| !s.is_empty() && s.len() <= MAX_USER && !s.chars().any(char::is_control);
        let user = headers.get(&self.user_header)?.to_str().ok()?.trim();
        if !plain(user) {
            return None;
        }
        let groups: Vec<String> = match &self.groups_header {
            Some(h) => headers
                .get_all(h)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_string)
                .collect(),
            None => Vec::new(),
        };
        if groups.len() > MAX_GROUPS || !groups.iter().all(|g| plain(g)) {
            return None;
        }
        Some(Proxied {
            user: user.to_string(),
            groups,
        })
    }

    /// The CSRF token of an identity.
    pub fn csrf(&self, who: &Proxied) -> String {
        let text = format!("{}\n{}", who.user, who.groups.join("\n"));
        hmac::sign(&self.key, text.as_bytes())
            .as_ref()
            .iter()
            .take(16)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn auth() -> ProxyAuth {
        ProxyAuth::new(
            HeaderName::from_static("x-forwarded-user"),
            Some(HeaderName::from_static("x-forwarded-groups")),
            &[7; 32],
            kube::Config::new("https://127.0.0.1:1".parse().unwrap()),
        )
    }

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_proxys_headers_name_the_user_and_its_groups_and_nothing_else_does() {
        let a = auth();
        let who = a
            .identity(&headers(&[
                ("x-forwarded-user", "alice"),
                ("x-forwarded-groups", "local://g-paiement, ops"),
            ]))
            .unwrap();
        assert_eq!(who.user, "alice");
        assert_eq!(who.groups, ["local://g-paiement", "ops"]);
        assert_eq!(a.identity(&headers(&[("x-remote-user", "alice")])), None);
        assert_eq!(a.identity(&headers(&[("x-forwarded-user", " ")])), None);
        let bob = a
            .identity(&headers(&[("x-forwarded-user", "bob")]))
            .unwrap();
        assert_ne!(a.csrf(&who), a.csrf(&bob));
        assert_eq!(a.csrf(&who), a.csrf(&who.clone()));
        assert_eq!(a.csrf(&who).len(), 32);
    }
}
