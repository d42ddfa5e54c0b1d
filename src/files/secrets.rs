//! Secrets by reference: read from an environment variable or a file, never from argv or a
//! site file, and never printed.
//!
//! [`Secret`] redacts itself in `Debug` and has no `Serialize`, so a secret cannot slip into a
//! log line or a JSON report by accident. Passwords are written as SHA-512-crypt (`$6$`)
//! hashes with a 16-character salt, the form Harvester's installer writes to /etc/shadow.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha_crypt::Params;

/// Why a secret could not be read. The texts say where rackplan looked, never what it found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SecretError {
    #[error("give either `env` or `file`, not both")]
    Both,
    #[error("a secret reference needs `env` or `file`")]
    Neither,
    #[error("environment variable {0} is empty")]
    EmptyEnv(String),
    #[error("environment variable {0} is not set; export it or point this secret at a file")]
    UnsetEnv(String),
    #[error("secret file {} is empty", .0.display())]
    EmptyFile(std::path::PathBuf),
    #[error("cannot read secret file {}: {message}", path.display())]
    Unreadable {
        path: std::path::PathBuf,
        message: String,
    },
}

/// Where a secret lives: `{env: VAR}` or `{file: path}` (relative to the site directory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) file: Option<String>,
}

impl SecretRef {
    /// Exactly one of `env` and `file`.
    pub(crate) fn check_shape(&self) -> Result<(), SecretError> {
        match (&self.env, &self.file) {
            (Some(_), None) | (None, Some(_)) => Ok(()),
            (Some(_), Some(_)) => Err(SecretError::Both),
            (None, None) => Err(SecretError::Neither),
        }
    }

    /// Read the secret; the error says where it looked, never what it found.
    pub(crate) fn resolve(&self, base: &Path) -> Result<Secret, SecretError> {
        if let Some(var) = &self.env {
            return match std::env::var(var) {
                Ok(v) if !v.trim().is_empty() => {
                    Ok(Secret(v.trim_end_matches(['\n', '\r']).to_string()))
                }
                Ok(_) => Err(SecretError::EmptyEnv(var.clone())),
                Err(_) => Err(SecretError::UnsetEnv(var.clone())),
            };
        }
        if let Some(file) = &self.file {
            let p = base.join(file);
            return match std::fs::read_to_string(&p) {
                Ok(v) if !v.trim().is_empty() => {
                    Ok(Secret(v.trim_end_matches(['\n', '\r']).to_string()))
                }
                Ok(_) => Err(SecretError::EmptyFile(p)),
                Err(e) => Err(SecretError::Unreadable {
                    path: p,
                    message: e.to_string(),
                }),
            };
        }
        Err(SecretError::Neither)
    }
}

/// A secret value. `Debug` prints `Secret(***)`.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    pub(crate) fn new(value: String) -> Secret {
        Secret(value)
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// The characters of crypt's base64 alphabet, for salts.
const CRYPT64: &[u8] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// A fresh random 16-character salt.
pub(crate) fn random_salt() -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).expect("the OS random source works");
    bytes
        .iter()
        .map(|b| CRYPT64[(*b & 63) as usize] as char)
        .collect()
}

/// True for a 16-character salt in crypt's alphabet.
pub(crate) fn is_valid_salt(s: &str) -> bool {
    s.len() == 16 && s.bytes().all(|b| CRYPT64.contains(&b))
}

/// SHA-512-crypt of `password` with `salt` (16 characters), in the `$6$salt$hash` form
/// glibc writes (default 5000 rounds, so no `rounds=` field).
pub fn sha512_crypt(password: &str, salt: &str) -> String {
    let digest = sha_crypt::sha512_crypt(password.as_bytes(), salt.as_bytes(), Params::RECOMMENDED);
    format!("$6${salt}${}", crypt_b64_sha512(&digest))
}

/// The byte order and base64 variant SHA-512-crypt uses for its 64-byte digest.
fn crypt_b64_sha512(d: &[u8; 64]) -> String {
    let mut out = String::with_capacity(86);
    let mut push = |b2: u8, b1: u8, b0: u8, n: usize| {
        let mut w = (u32::from(b2) << 16) | (u32::from(b1) << 8) | u32::from(b0);
        for _ in 0..n {
            out.push(CRYPT64[(w & 0x3f) as usize] as char);
            w >>= 6;
        }
    };
    let order: [(usize, usize, usize); 21] = [
        (0, 21, 42),
        (22, 43, 1),
        (44, 2, 23),
        (3, 24, 45),
        (25, 46, 4),
        (47, 5, 26),
        (6, 27, 48),
        (28, 49, 7),
        (50, 8, 29),
        (9, 30, 51),
        (31, 52, 10),
        (53, 11, 32),
        (12, 33, 54),
        (34, 55, 13),
        (56, 14, 35),
        (15, 36, 57),
        (37, 58, 16),
        (59, 17, 38),
        (18, 39, 60),
        (40, 61, 19),
        (62, 20, 41),
    ];
    for (a, b, c) in order {
        push(d[a], d[b], d[c], 4);
    }
    push(0, 0, d[63], 2);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_glibc_known_answer() {
        // `openssl passwd -6 -salt saltsaltsaltsalt rackplan`
        assert_eq!(
            sha512_crypt("rackplan", "saltsaltsaltsalt"),
            "$6$saltsaltsaltsalt$qCT9e0omomn/lpLbTAdblOkdNTrxvmPwfNl.Z4Fzghgk6I4gma2H5VcwZycnqjqo2kxHprpUJvC8RiNcrfHRf1"
        );
    }

    #[test]
    fn salts_are_sixteen_crypt_characters() {
        let s = random_salt();
        assert!(is_valid_salt(&s), "{s}");
        assert_ne!(random_salt(), s);
    }

    #[test]
    fn debug_never_shows_the_value() {
        let s = Secret("hunter2".into());
        assert_eq!(format!("{s:?}"), "Secret(***)");
    }

    #[test]
    fn a_reference_names_one_place() {
        let both = SecretRef {
            env: Some("A".into()),
            file: Some("b".into()),
        };
        assert_eq!(both.check_shape(), Err(SecretError::Both));
        let none = SecretRef {
            env: None,
            file: None,
        };
        assert_eq!(none.check_shape(), Err(SecretError::Neither));
        assert_eq!(
            none.resolve(Path::new(".")).unwrap_err(),
            SecretError::Neither
        );
    }

    #[test]
    fn missing_env_names_the_variable_only() {
        let r = SecretRef {
            env: Some("RACKPLAN_TEST_SURELY_UNSET".into()),
            file: None,
        };
        let e = r.resolve(Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("RACKPLAN_TEST_SURELY_UNSET is not set"), "{e}");
    }
}

/// The key a node's installer sends with its webhooks, derived from the cluster token so
/// that `render` and `serve` agree without storing anything: HMAC-SHA256(token,
/// "rackplan-webhook/" + hostname), the first 32 hex digits. It sits only in that node's
/// install config (mode 0600), which is served once, to that node.
pub(crate) fn webhook_key(token: &Secret, hostname: &str) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, token.expose().as_bytes());
    let tag = ring::hmac::sign(&key, format!("rackplan-webhook/{hostname}").as_bytes());
    tag.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Compare two secrets without leaking where they differ through timing.
pub(crate) fn constant_time_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod webhook_key_tests {
    use super::*;

    #[test]
    fn keys_differ_per_node_and_per_token_and_compare_in_constant_time() {
        let t = Secret::new("token-a".into());
        let k1 = webhook_key(&t, "hv-m01");
        assert_eq!(k1.len(), 32);
        assert_eq!(k1, webhook_key(&t, "hv-m01"), "stable across renders");
        assert_ne!(k1, webhook_key(&t, "hv-m02"));
        assert_ne!(k1, webhook_key(&Secret::new("token-b".into()), "hv-m01"));
        assert!(constant_time_eq(&k1, &k1.clone()));
        assert!(!constant_time_eq(&k1, &webhook_key(&t, "hv-m02")));
        assert!(!constant_time_eq(&k1, ""));
    }
}
