//! Request paths made safe before anything is looked up with them, and the path of the
//! base URL the routes live under.

use std::path::{Component, Path, PathBuf};

/// Percent-decode a request path; `None` for a `%` not followed by two hex digits (the
/// decoder would pass it through as text) or bytes that are not UTF-8.
fn decode(p: &str) -> Option<String> {
    let b = p.as_bytes();
    let escapes_ok = b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || b.get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !escapes_ok {
        return None;
    }
    percent_encoding::percent_decode(b)
        .decode_utf8()
        .ok()
        .map(std::borrow::Cow::into_owned)
}

/// A request path made safe: decoded, relative, no `..`, no backslash, no NUL; empty and
/// `.` segments (`//`, `/./`) dropped.
pub(crate) fn safe_relative(raw: &str) -> Option<PathBuf> {
    let decoded = decode(raw)?;
    if decoded.contains('\\') || decoded.contains('\0') {
        return None;
    }
    let rel = decoded.trim_start_matches('/');
    let p = Path::new(rel);
    if rel.is_empty()
        || !p
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return None;
    }
    let clean: PathBuf = p
        .components()
        .filter(|c| matches!(c, Component::Normal(_)))
        .collect();
    (!clean.as_os_str().is_empty()).then_some(clean)
}

/// A path that names an install config, however it is spelled.
pub(crate) fn names_a_config(rel: &Path) -> bool {
    rel.file_name()
        .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case("config.yaml"))
}

/// The path of a base URL without its trailing slash: `http://h:80/a/b/` -> `/a/b`, `http://h` -> ``.
pub(crate) fn base_path(base: &str) -> &str {
    let rest = base.split_once("://").map_or(base, |(_, r)| r);
    rest.find('/')
        .map_or("", |i| rest[i..].trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_path_is_the_url_path() {
        assert_eq!(
            base_path("http://10.10.0.5/harvester/v1.6.1"),
            "/harvester/v1.6.1"
        );
        assert_eq!(base_path("http://10.10.0.5:8080/pxe/"), "/pxe");
        assert_eq!(base_path("http://127.0.0.1:8080"), "");
        assert_eq!(base_path("http://127.0.0.1:8080/"), "");
    }

    #[test]
    fn traversal_is_refused() {
        for bad in [
            "/../etc/passwd",
            "/%2e%2e/%2e%2e/etc/passwd",
            "/a/../../b",
            "/a%2f..%2f..%2fb",
            "/..%5c..%5cwin.ini",
            "/",
            "/a%00b",
            "/%zz",
            "/a%2",
            "/%c3%28",
        ] {
            assert!(safe_relative(bad).is_none(), "{bad}");
        }
        assert_eq!(
            safe_relative("/harvester-v1.6.1-vmlinuz-amd64"),
            Some(PathBuf::from("harvester-v1.6.1-vmlinuz-amd64"))
        );
        assert_eq!(safe_relative("/a%20b"), Some(PathBuf::from("a b")));
        assert_eq!(
            safe_relative("/manifests/networks/20-vlanconfigs.yaml"),
            Some(PathBuf::from("manifests/networks/20-vlanconfigs.yaml"))
        );
    }
}
