//! `GET /nodes/<hostname>/config.yaml?token=T`: the node's install config. Configs hold the
//! cluster token, so this route, with a token issued to that node, is the only way to one.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, Path as UrlPath, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::reply::text;
use crate::bootstrap::serve::progress::InstallEvent;
use crate::bootstrap::serve::state::Shared;

pub(crate) async fn config(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath(hostname): UrlPath<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let path = format!("nodes/{hostname}/config.yaml");
    let shown_path = format!("/{}", crate::redfish::origin::shown(&path));
    let Some(file) = s.files.get(&path) else {
        s.record(
            peer,
            "GET",
            &shown_path,
            StatusCode::NOT_FOUND,
            None,
            "no such node",
        );
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    };
    let id = file.node.clone().unwrap_or_default();
    let who = Some(format!("{hostname} ({id})"));
    let token = q.get("token").cloned().unwrap_or_default();
    let granted = s
        .tokens
        .lock()
        .expect("not poisoned")
        .redeem(&token, &hostname, Instant::now());
    if !granted {
        s.record(
            peer,
            "GET",
            &shown_path,
            StatusCode::FORBIDDEN,
            who,
            "no valid one-time token",
        );
        return text(
            StatusCode::FORBIDDEN,
            "this config holds the cluster token: it is served once, to the node that fetched its script from /ipxe?mac=...\n".into(),
        );
    }
    s.note_soon(&hostname, &id, InstallEvent::ConfigServed);
    s.record(peer, "GET", &shown_path, StatusCode::OK, who, "token used");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/yaml")],
        file.bytes.clone(),
    )
        .into_response()
}
