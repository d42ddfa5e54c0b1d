use super::*;

fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(*k, HeaderValue::from_static(v));
    }
    h
}

#[test]
fn a_post_from_another_origin_or_site_is_cross_site() {
    let host = ("host", "portal.example:8080");
    assert!(
        !cross_site(&headers(&[host])),
        "no Origin: a same-site form of an old browser"
    );
    assert!(!cross_site(&headers(&[
        host,
        ("origin", "https://portal.example:8080")
    ])));
    assert!(!cross_site(&headers(&[
        host,
        ("origin", "http://portal.example:8080")
    ])));
    assert!(cross_site(&headers(&[
        host,
        ("origin", "https://evil.example")
    ])));
    assert!(cross_site(&headers(&[host, ("origin", "null")])));
    assert!(cross_site(&headers(&[(
        "origin",
        "https://portal.example:8080"
    )])));
    assert!(cross_site(&headers(&[
        host,
        ("sec-fetch-site", "cross-site")
    ])));
    assert!(cross_site(&headers(&[
        host,
        ("sec-fetch-site", "same-site")
    ])));
    assert!(!cross_site(&headers(&[
        host,
        ("sec-fetch-site", "same-origin")
    ])));
}

#[test]
fn the_policy_runs_nothing_and_frames_nothing() {
    for part in [
        "default-src 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(CSP.contains(part), "{CSP}");
    }
    assert!(!CSP.contains("script-src"));
}
