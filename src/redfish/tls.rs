//! How a BMC's certificate is trusted: a SHA-256 pin of the leaf certificate, a CA bundle,
//! or, explicitly asked for, trust on first use, which records the pin for next time.
//! There is no "accept anything" mode.
//!
//! Pinning replaces the PKI path check (BMC certificates are self-signed and name an IP or
//! nothing), but the handshake signature is still verified, so the server must hold the key
//! of the pinned certificate.

use std::sync::{Arc, Mutex};

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};

/// A certificate refusal in words: what is wrong with the certificate, from the raw rustls
/// or webpki error text; `None` when `raw` is not a certificate error.
pub(crate) fn in_words(raw: &str) -> Option<&'static str> {
    let table: [(&str, &str); 12] = [
        (
            "pin mismatch",
            "its certificate is not the pinned one (tls.pin_sha256): the BMC's certificate changed, or this is another server",
        ),
        (
            "CaUsedAsEndEntity",
            "it presents a CA certificate as its own (a self-signed certificate marked as a CA), which no trust store accepts for a server",
        ),
        (
            "UnknownIssuer",
            "its certificate is signed by an authority this machine does not trust (BMCs ship self-signed certificates)",
        ),
        (
            "NotValidForName",
            "its certificate is not issued for this address",
        ),
        (
            "NotValidForNameContext",
            "its certificate is not issued for this address",
        ),
        ("Expired", "its certificate has expired"),
        (
            "NotValidYet",
            "its certificate is not valid yet (check this machine's clock)",
        ),
        ("Revoked", "its certificate is revoked"),
        (
            "BadSignature",
            "its certificate's signature does not verify",
        ),
        (
            "UnsupportedSignatureAlgorithm",
            "its certificate uses a signature algorithm rustls does not accept",
        ),
        (
            "InvalidPurpose",
            "its certificate is not meant for TLS servers",
        ),
        ("BadEncoding", "its certificate cannot be parsed"),
    ];
    table
        .iter()
        .find(|(k, _)| raw.contains(k))
        .map(|(_, w)| *w)
        .or_else(|| {
            raw.contains("certificate")
                .then_some("its certificate was refused")
        })
}

/// The innermost cause of an HTTP client error, a refused certificate in words first.
pub(crate) fn describe(e: &reqwest::Error) -> String {
    let mut last = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(inner) = src {
        last = inner.to_string();
        src = inner.source();
    }
    match in_words(&last) {
        Some(w) => format!("TLS refused: {w} (detail: {last})"),
        None => last,
    }
}

/// Install ring as the process-wide rustls provider (idempotent).
pub(crate) fn install_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// SHA-256 of a DER certificate as lowercase hex pairs joined by `:`.
pub fn fingerprint(der: &[u8]) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, der);
    d.as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Normalise a pin as written by people: case and separators do not matter.
pub(crate) fn normalize_pin(pin: &str) -> Option<String> {
    let hex: String = pin
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if hex.len() != 64
        || pin
            .chars()
            .any(|c| !(c.is_ascii_hexdigit() || c == ':' || c == ' '))
    {
        return None;
    }
    Some(
        hex.as_bytes()
            .chunks(2)
            .map(|c| std::str::from_utf8(c).expect("ascii"))
            .collect::<Vec<_>>()
            .join(":"),
    )
}

#[derive(Debug)]
enum Mode {
    Pin(String),
    /// Accept, and remember what was seen.
    FirstUse(Arc<Mutex<Option<String>>>),
}

#[derive(Debug)]
struct PinVerifier {
    mode: Mode,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let seen = fingerprint(end_entity.as_ref());
        match &self.mode {
            Mode::Pin(want) if *want == seen => Ok(ServerCertVerified::assertion()),
            Mode::Pin(want) => Err(rustls::Error::General(format!(
                "certificate pin mismatch: expected {want}, the BMC presented {seen}"
            ))),
            Mode::FirstUse(slot) => {
                *slot.lock().expect("not poisoned") = Some(seen);
                Ok(ServerCertVerified::assertion())
            }
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

fn config_with(verifier: Arc<dyn ServerCertVerifier>) -> rustls::ClientConfig {
    rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth()
}

/// A TLS config that accepts exactly the certificate with this pin.
pub(crate) fn pinned(pin: &str) -> rustls::ClientConfig {
    config_with(Arc::new(PinVerifier {
        mode: Mode::Pin(pin.to_string()),
        provider: provider(),
    }))
}

/// A TLS config that accepts the presented certificate and reports its pin in `seen`.
pub(crate) fn first_use(seen: Arc<Mutex<Option<String>>>) -> rustls::ClientConfig {
    config_with(Arc::new(PinVerifier {
        mode: Mode::FirstUse(seen),
        provider: provider(),
    }))
}

/// A CA bundle that cannot be used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CaBundleError {
    #[error("bad PEM in CA bundle: {0}")]
    Pem(rustls::pki_types::pem::Error),
    #[error("unusable CA certificate: {0}")]
    Certificate(rustls::Error),
    #[error("the CA bundle holds no certificate")]
    Empty,
}

/// A TLS config that trusts the CA certificates of a PEM bundle (and checks names).
pub(crate) fn ca_bundle(pem: &[u8]) -> Result<rustls::ClientConfig, CaBundleError> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let mut n = 0;
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(CaBundleError::Pem)?;
        roots.add(cert).map_err(CaBundleError::Certificate)?;
        n += 1;
    }
    if n == 0 {
        return Err(CaBundleError::Empty);
    }
    Ok(rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .expect("ring supports the default versions")
        .with_root_certificates(roots)
        .with_no_client_auth())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_normalise() {
        let p = "AB".repeat(32);
        assert_eq!(normalize_pin(&p).unwrap(), ["ab"; 32].join(":"));
        assert_eq!(
            normalize_pin(&["AB"; 32].join(":")).unwrap(),
            ["ab"; 32].join(":")
        );
        assert!(normalize_pin("abc").is_none());
        assert!(normalize_pin(&"zz".repeat(32)).is_none());
    }
}
