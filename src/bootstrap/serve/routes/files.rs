//! Every other path: manifests, SUMMARY.md, and (with `--artifacts DIR`) the installer's
//! kernel, initrd, rootfs and ISO through tower-http's `ServeDir`, with traversal and
//! symlinks out of the folder refused; install configs only through their token route.
//! And the answer to a request outside the base URL's path.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use tower::ServiceExt;

use super::reply::text;
use crate::bootstrap::serve::listener;
use crate::bootstrap::serve::paths::{names_a_config, safe_relative};
use crate::bootstrap::serve::state::{ServeState, Shared};

fn peer_of(req: &Request) -> SocketAddr {
    listener::client(req.extensions()).unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
}

pub(crate) async fn other(State(s): State<Shared>, req: Request) -> Response {
    let peer = peer_of(&req);
    let method = req.method().clone();
    let uri: Uri = req.uri().clone();
    let raw = uri.path().to_string();
    let shown = crate::redfish::origin::shown(&raw);
    if method != Method::GET && method != Method::HEAD {
        s.record(
            peer,
            method.as_str(),
            &shown,
            StatusCode::METHOD_NOT_ALLOWED,
            None,
            "refused",
        );
        return text(StatusCode::METHOD_NOT_ALLOWED, "refused\n".into());
    }
    let Some(rel) = safe_relative(&raw) else {
        s.record(
            peer,
            "GET",
            &shown,
            StatusCode::BAD_REQUEST,
            None,
            "refused (path traversal)",
        );
        return text(StatusCode::BAD_REQUEST, "refused\n".into());
    };
    let key = rel.to_string_lossy().into_owned();
    if names_a_config(&rel) {
        s.record(peer, "GET", &shown, StatusCode::FORBIDDEN, None, "refused: install configs are served only by /nodes/<hostname>/config.yaml with a token");
        return text(StatusCode::FORBIDDEN, "refused\n".into());
    }
    if let Some(f) = s.files.get(&key) {
        if f.secret {
            s.record(
                peer,
                "GET",
                &shown,
                StatusCode::FORBIDDEN,
                None,
                "refused (secret)",
            );
            return text(StatusCode::FORBIDDEN, "refused\n".into());
        }
        s.record(peer, "GET", &shown, StatusCode::OK, None, "rendered file");
        return (StatusCode::OK, f.bytes.clone()).into_response();
    }
    if let Some(dir) = &s.artifacts {
        let full = dir.join(&rel);
        // Symlinks inside the artefact folder must not lead out of it.
        let inside = match (full.canonicalize(), dir.canonicalize()) {
            (Ok(f), Ok(d)) => f.starts_with(d),
            _ => false,
        };
        if inside && full.is_file() {
            let mut inner = Request::new(Body::empty());
            *inner.method_mut() = method;
            if let Ok(u) = format!("/{key}").parse::<Uri>() {
                *inner.uri_mut() = u;
            }
            if let Some(r) = req.headers().get(header::RANGE) {
                inner.headers_mut().insert(header::RANGE, r.clone());
            }
            let Ok(resp) = tower_http::services::ServeDir::new(dir)
                .oneshot(inner)
                .await
                .map(IntoResponse::into_response);
            let len = resp
                .headers()
                .get(header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("?")
                .to_string();
            s.record(
                peer,
                "GET",
                &shown,
                resp.status(),
                None,
                format!("artifact ({len} bytes)"),
            );
            return resp;
        }
    }
    s.record(
        peer,
        "GET",
        &shown,
        StatusCode::NOT_FOUND,
        None,
        "not found",
    );
    text(StatusCode::NOT_FOUND, "not found\n".into())
}

/// A request outside the base URL's path: logged with the path it would have under it.
pub(crate) fn outside(s: &ServeState, prefix: &str, req: &Request) -> Response {
    let peer = peer_of(req);
    let raw = req.uri().path();
    let shown = crate::redfish::origin::shown(raw);
    let hint = format!(
        "not found: this server answers under {prefix}/ (the path of the base URL {}); try {prefix}/{}",
        s.base_url,
        crate::redfish::origin::shown(raw.trim_start_matches('/'))
    );
    s.record(
        peer,
        req.method().as_str(),
        &shown,
        StatusCode::NOT_FOUND,
        None,
        hint.clone(),
    );
    text(StatusCode::NOT_FOUND, format!("{hint}\n"))
}
