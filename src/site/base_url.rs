//! The path of a PXE base URL (`harvester.pxe_base_url`, `serve --base-url`) becomes the
//! prefix `serve` mounts its routes under, so it must be a literal path: a segment that
//! starts with `:` or `*`, or holds `{` or `}`, reads as a route capture (axum refuses it,
//! and a node would be sent to a URL no route answers).

/// The path of a base URL: what follows `scheme://host[:port]`, without its query.
fn path_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let path = rest.find('/').map_or("", |i| &rest[i..]);
    path.split(['?', '#']).next().unwrap_or("")
}

/// Why the path of `url` cannot be served, if it cannot.
pub(crate) fn route_problem(url: &str) -> Option<String> {
    for seg in path_of(url).split('/') {
        if seg.starts_with(':') || seg.starts_with('*') {
            return Some(format!(
                "the path segment `{seg}` starts with `{}`, which reads as a route capture; write the path literally (no segment may start with `:` or `*`)",
                &seg[..1]
            ));
        }
        if seg.contains(['{', '}']) {
            return Some(format!(
                "the path segment `{seg}` holds `{{` or `}}`, which read as a route capture; write the path literally"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_syntax_is_refused_and_literal_paths_pass() {
        for bad in [
            "http://x/:p",
            "http://x/*rest",
            "http://x/a/{b}",
            "http://x/a/b}",
            "http://10.0.0.5:8080/pxe/:version/",
        ] {
            assert!(route_problem(bad).is_some(), "{bad}");
        }
        for good in [
            "http://x",
            "http://x/",
            "http://10.10.0.5/harvester/v1.6.1",
            "http://x/a:b/c*d",
            "http://x/a%3Ab",
        ] {
            assert_eq!(route_problem(good), None, "{good}");
        }
    }

    /// Every path the rule lets through can be mounted (axum panics on the others).
    #[test]
    fn what_passes_mounts_without_a_panic() {
        for p in [
            "/a:b/c*d",
            "/a%3Ab",
            "/a//b",
            "/ä/ü",
            "/a b",
            "/harvester/v1.6.1/",
            "/a/./b",
            "/a/../b",
        ] {
            let url = format!("http://x{p}");
            assert_eq!(route_problem(&url), None, "{p}");
            let prefix = p.trim_end_matches('/');
            let mounted = std::panic::catch_unwind(|| {
                let inner: axum::Router =
                    axum::Router::new().route("/ipxe", axum::routing::get(|| async { "" }));
                let _: axum::Router = axum::Router::new().nest(prefix, inner);
            });
            assert!(mounted.is_ok(), "{p} panics in axum");
        }
    }
}
