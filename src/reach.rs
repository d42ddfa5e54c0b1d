//! Why a BMC, a host or an API server could not be reached, in words a person can act on:
//! a TLS or HTTP mismatch (an `https://` address answered in plain HTTP, or the reverse), a
//! refused connection, a name that does not resolve, no route, a reset or a timeout, each
//! with what to check or change and where. Written once for every client (the Redfish
//! client, SSH discovery, `status --url`, the operator's API clients); the raw error
//! stays at the end as the detail.
//!
//! The causes are read from the innermost error text the libraries give (rustls' "received
//! corrupt message of type InvalidContentType" for plain HTTP on a TLS connection, hyper's
//! "invalid HTTP version parsed" for TLS bytes on a plain one, the OS's "Connection
//! refused (os error 111)", getaddrinfo's "Name or service not known"), so the words hold
//! whichever client met them.

/// The other end of a connection, as the person configured it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Peer<'a> {
    /// What it is, with its article: "the BMC", "the host", "the API server".
    pub(crate) what: &'a str,
    /// Its address as configured: a URL (`https://10.0.0.5`) or `host:port`.
    pub(crate) address: &'a str,
    /// Where that address is set: "bmcs.yaml", "--url", "the kubeconfig".
    pub(crate) set_in: &'a str,
}

impl Peer<'_> {
    /// `https://host:port` -> ("https", "host:port"); `host:port` -> ("", "host:port").
    fn parts(&self) -> (&str, &str) {
        let (scheme, rest) = self.address.split_once("://").unwrap_or(("", self.address));
        (scheme, rest.split('/').next().unwrap_or(rest))
    }

    /// The host name or address alone.
    fn host(&self) -> &str {
        let (_, hp) = self.parts();
        if let Some(v6) = hp.strip_prefix('[') {
            return v6.split(']').next().unwrap_or(v6);
        }
        hp.rsplit_once(':')
            .filter(|(_, p)| p.chars().all(|c| c.is_ascii_digit()))
            .map_or(hp, |(h, _)| h)
    }
}

/// What went wrong, read from the error's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    /// TLS was spoken and plain HTTP came back.
    PlainHttpAnswer,
    /// Plain HTTP was spoken and TLS (or nothing HTTP) came back.
    NotPlainHttp,
    Refused,
    NoName,
    NoRoute,
    Reset,
    /// Reset on a plain HTTP connection: a TLS-only port, or anything that resets.
    ResetPlain,
    TimedOut,
}

fn cause(detail: &str, scheme: &str) -> Option<Cause> {
    let d = detail.to_ascii_lowercase();
    let has = |ws: &[&str]| ws.iter().any(|w| d.contains(w));
    Some(
        // A TLS server's own complaint about plain HTTP comes first: it is said in an
        // HTTP answer whose words would otherwise look like a plain answer.
        if has(&[
            "invalid http version",
            "http/0.9",
            "invalid http status",
            "plain http request was sent to https",
            "http request to an https server",
        ]) {
            Cause::NotPlainHttp
        } else if has(&[
            "invalidcontenttype",
            "wrong version number",
            "packet length too long",
        ]) {
            Cause::PlainHttpAnswer
        } else if has(&["connection refused", "os error 111"]) {
            Cause::Refused
        } else if has(&[
            "failed to lookup address",
            "name or service not known",
            "temporary failure in name resolution",
            "nodename nor servname",
            "no address associated",
            "dns error",
            "name resolution",
        ]) {
            Cause::NoName
        } else if has(&[
            "no route to host",
            "network is unreachable",
            "host is unreachable",
            "os error 113",
            "os error 101",
        ]) {
            Cause::NoRoute
        } else if has(&["connection reset", "os error 104", "broken pipe"]) {
            // Plain HTTP to a port that speaks only TLS is often just reset.
            if scheme == "http" {
                Cause::ResetPlain
            } else {
                Cause::Reset
            }
        } else if has(&["timed out", "deadline has elapsed", "timeout"]) {
            Cause::TimedOut
        } else {
            return None;
        },
    )
}

/// `detail` (an error's innermost text) in words with the fix, and the detail after it;
/// `None` when it is none of the causes above (the caller keeps the detail as it is).
pub(crate) fn explain(peer: &Peer<'_>, detail: &str) -> Option<String> {
    let (scheme, hostport) = peer.parts();
    let Peer {
        what,
        address,
        set_in,
    } = *peer;
    let words = match cause(detail, scheme)? {
        Cause::PlainHttpAnswer => format!(
            "{what} at {address} answered in plain HTTP, not TLS: if it has no HTTPS on this port, write `http://{hostport}` in {set_in}; better, turn HTTPS on at {what} and keep https://"
        ),
        Cause::NotPlainHttp => format!(
            "{what} at {address} did not answer in plain HTTP; it likely speaks only HTTPS on this port: write `https://{hostport}` in {set_in}"
        ),
        Cause::Refused => format!(
            "nothing accepts connections at {hostport} (connection refused): check the address and port in {set_in}, and that {what} is up and its service started"
        ),
        Cause::NoName => format!(
            "the name `{}` does not resolve from this machine: check its spelling in {set_in} and this machine's DNS (/etc/resolv.conf), or give the IP address",
            peer.host()
        ),
        Cause::NoRoute => format!(
            "no route from this machine to {} (network or host unreachable): check the address in {set_in}, and that this machine is on that network (its routes, VLAN or VPN)",
            peer.host()
        ),
        Cause::Reset => format!(
            "{what} at {address} reset the connection: it may be limiting connections (try again, or lower the concurrency), or a firewall or proxy is in the way"
        ),
        Cause::ResetPlain => format!(
            "{what} at {address} reset the connection: if it speaks only HTTPS on this port, write `https://{hostport}` in {set_in}; else it may be limiting connections (try again), or a firewall or proxy is in the way"
        ),
        Cause::TimedOut => timed_out(peer, None, None),
    };
    Some(format!("{words} (detail: {detail})"))
}

/// No answer in time: what that usually means, and the flag that gives more time.
pub(crate) fn timed_out(
    peer: &Peer<'_>,
    waited: Option<std::time::Duration>,
    flag: Option<&str>,
) -> String {
    let Peer {
        what,
        address,
        set_in,
    } = *peer;
    format!(
        "{what} at {address} did not answer{}: it may be down or overloaded, or a firewall drops the packets (a refused port answers at once); check the address in {set_in} and that it answers from this machine{}",
        waited.map_or_else(String::new, |w| {
            let s = w.as_secs_f64();
            if s.fract() == 0.0 {
                format!(" within {s:.0} s")
            } else {
                format!(" within {s:.1} s")
            }
        }),
        flag.map_or_else(String::new, |f| format!(", or give it longer with {f}"))
    )
}

/// The innermost source of an error: the text that says what really happened.
pub(crate) fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        last = inner.to_string();
        src = inner.source();
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    const BMC: Peer<'static> = Peer {
        what: "the BMC",
        address: "https://10.0.0.5:8443",
        set_in: "bmcs.yaml",
    };

    fn says(peer: &Peer<'_>, detail: &str, want: &[&str]) {
        let got = explain(peer, detail).unwrap_or_default();
        for w in want {
            assert!(got.contains(w), "{detail}: {got}");
        }
    }

    #[test]
    fn each_cause_in_words_with_its_fix() {
        says(
            &BMC,
            "received corrupt message of type InvalidContentType",
            &[
                "answered in plain HTTP, not TLS",
                "`http://10.0.0.5:8443` in bmcs.yaml",
                "(detail: received corrupt",
            ],
        );
        let plain = Peer {
            address: "http://10.0.0.5",
            ..BMC
        };
        says(
            &plain,
            "invalid HTTP version parsed",
            &["speaks only HTTPS", "`https://10.0.0.5`"],
        );
        says(
            &plain,
            "Client sent an HTTP request to an HTTPS server.",
            &["speaks only HTTPS"],
        );
        says(
            &plain,
            "Connection reset by peer (os error 104)",
            &["if it speaks only HTTPS on this port, write `https://10.0.0.5`"],
        );
        says(
            &BMC,
            "Connection reset by peer (os error 104)",
            &["reset the connection"],
        );
        says(
            &BMC,
            "Connection refused (os error 111)",
            &["nothing accepts connections at 10.0.0.5:8443"],
        );
        says(
            &Peer {
                address: "https://bmc-r01-07.example:443",
                ..BMC
            },
            "failed to lookup address information: Name or service not known",
            &["`bmc-r01-07.example` does not resolve", "/etc/resolv.conf"],
        );
        says(
            &BMC,
            "No route to host (os error 113)",
            &["no route from this machine to 10.0.0.5"],
        );
        says(&BMC, "operation timed out", &["did not answer", "firewall"]);
        assert_eq!(explain(&BMC, "HTTP 500"), None);
        let host = Peer {
            what: "the host",
            address: "[fd00::5]:22",
            set_in: "ssh.yaml",
        };
        says(&host, "Connection refused", &["at [fd00::5]:22"]);
        says(&host, "No route to host", &["to fd00::5"]);
    }
}
