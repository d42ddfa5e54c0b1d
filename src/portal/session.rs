//! The signed-in user's session, kept by the browser only: the bearer token the user gave,
//! the team namespaces it may ask in, a CSRF token and an expiry, sealed with
//! ChaCha20-Poly1305 (`ring::aead`) under a key drawn at start and never written anywhere.
//! The cookie is opaque to the browser and to anyone who reads it; a cookie changed by one
//! bit, sealed by another process or a restarted portal, or past its expiry opens to
//! nothing, and the user signs in again.

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use serde::{Deserialize, Serialize};

use base64::Engine as _;

/// The cookie's name.
pub const COOKIE: &str = "rackplan_portal";
/// Longest cookie value opened (a browser keeps 4 KiB a cookie).
const MAX_COOKIE: usize = 4096;
/// Longest token accepted at sign-in (a service account JWT is about 1 KiB).
pub const MAX_TOKEN: usize = 2048;

/// Why a session could not be made.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no randomness from the operating system: {0}")]
    Random(String),
    #[error("the session key: {0}")]
    Key(String),
    #[error("the session is too large for a cookie ({0} bytes): sign in with fewer teams")]
    TooLarge(usize),
}

/// One user's session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The bearer token every Kubernetes call is made with.
    pub token: String,
    /// Sent back in every form and checked on every POST.
    pub csrf: String,
    /// Seconds since the epoch.
    pub expires: i64,
    /// The team namespaces the user may create requests in, with their team, as the API
    /// server answered at sign-in (what the pages offer; the API server decides each call).
    pub teams: Vec<(String, String)>,
    /// Behind an authenticating proxy: who it says the user is (no token then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proxied: Option<super::proxy::Proxied>,
}

impl Session {
    /// A session for `token` that lasts `seconds` from `now`, with a fresh CSRF token.
    pub fn new(
        token: String,
        teams: Vec<(String, String)>,
        now: i64,
        seconds: i64,
    ) -> Result<Session, SessionError> {
        Ok(Session {
            token,
            csrf: hex(&random::<16>()?),
            expires: now.saturating_add(seconds),
            teams,
            proxied: None,
        })
    }

    /// The team of namespace `ns`, when the user may ask there.
    pub fn team_of(&self, ns: &str) -> Option<&str> {
        self.teams
            .iter()
            .find(|(n, _)| n == ns)
            .map(|(_, t)| t.as_str())
    }
}

/// Seals and opens sessions with the process's key.
pub struct Sealer {
    key: LessSafeKey,
}

impl Sealer {
    /// A sealer with a key drawn now.
    pub fn random() -> Result<Sealer, SessionError> {
        Self::with_key(&random::<32>()?)
    }

    pub fn with_key(key: &[u8; 32]) -> Result<Sealer, SessionError> {
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, key)
            .map_err(|_| SessionError::Key("refused by ring".into()))?;
        Ok(Sealer {
            key: LessSafeKey::new(unbound),
        })
    }

    /// The cookie value of `s`: base64url of a random nonce and the sealed JSON.
    pub fn seal(&self, s: &Session) -> Result<String, SessionError> {
        let nonce = random::<NONCE_LEN>()?;
        let mut data = serde_json::to_vec(s).map_err(|e| SessionError::Key(e.to_string()))?;
        self.key
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(COOKIE.as_bytes()),
                &mut data,
            )
            .map_err(|_| SessionError::Key("sealing failed".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        let text = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(out);
        if text.len() > MAX_COOKIE {
            return Err(SessionError::TooLarge(text.len()));
        }
        Ok(text)
    }

    /// The session a cookie value holds, if it was sealed here and has not expired at
    /// `now`.
    pub fn open(&self, cookie: &str, now: i64) -> Option<Session> {
        if cookie.len() > MAX_COOKIE {
            return None;
        }
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(cookie)
            .ok()?;
        if raw.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = raw.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut sealed = sealed.to_vec();
        let plain = self
            .key
            .open_in_place(nonce, Aad::from(COOKIE.as_bytes()), &mut sealed)
            .ok()?;
        let s: Session = serde_json::from_slice(plain).ok()?;
        (s.expires > now).then_some(s)
    }
}

/// The value of cookie `name` in a `Cookie` header.
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').find_map(|kv| {
        let (k, v) = kv.trim().split_once('=')?;
        (k == name).then_some(v)
    })
}

/// Equal strings, compared in time that does not depend on where they differ.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A 32-byte key drawn now.
pub fn random_key() -> Result<[u8; 32], SessionError> {
    random::<32>()
}

fn random<const N: usize>() -> Result<[u8; N], SessionError> {
    let mut b = [0u8; N];
    getrandom::fill(&mut b).map_err(|e| SessionError::Random(e.to_string()))?;
    Ok(b)
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
