//! `POST /webhook/<hostname>/<EVENT>`: the installer's STARTED/SUCCEEDED/FAILED webhooks,
//! accepted only with the node's own key (rendered into that node's config, compared in
//! constant time), and written to the site's state file before they are answered.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Path as UrlPath, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::reply::text;
use crate::bootstrap::serve::progress::InstallEvent;
use crate::bootstrap::serve::state::Shared;
use crate::files::secrets::constant_time_eq;
use crate::render::node::WEBHOOK_KEY_HEADER;

pub(crate) async fn webhook(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    UrlPath((hostname, event)): UrlPath<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let path = format!(
        "/webhook/{}/{}",
        crate::redfish::origin::shown(&hostname),
        crate::redfish::origin::shown(&event.to_ascii_uppercase())
    );
    let Some(event) = InstallEvent::webhook(&event) else {
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::BAD_REQUEST,
            None,
            "unknown event",
        );
        return text(
            StatusCode::BAD_REQUEST,
            "event must be STARTED, SUCCEEDED or FAILED\n".into(),
        );
    };
    let (Some(want), Some(id)) = (s.webhook_keys.get(&hostname), s.nodes.get(&hostname)) else {
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::NOT_FOUND,
            None,
            "refused: no such node",
        );
        return text(StatusCode::NOT_FOUND, "no such node\n".into());
    };
    let given = headers
        .get(WEBHOOK_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !constant_time_eq(given, want) {
        let why = if given.is_empty() {
            "refused: no webhook key"
        } else {
            "refused: wrong webhook key"
        };
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::UNAUTHORIZED,
            Some(hostname),
            why,
        );
        return text(
            StatusCode::UNAUTHORIZED,
            "webhooks are accepted only with the key rendered into this node's config\n".into(),
        );
    }
    if let Err(e) = s.note_now(&hostname, id, event).await {
        // Kept in memory, so this server still tells the node to boot its disk; a restart
        // would not know.
        s.problem(&format!("the install state was not saved: {e}"));
        s.record(
            peer,
            "POST",
            &path,
            StatusCode::INTERNAL_SERVER_ERROR,
            Some(hostname),
            format!(
                "install {} recorded in memory only: the state file was not written",
                event.name().to_lowercase()
            ),
        );
        return text(
            StatusCode::INTERNAL_SERVER_ERROR,
            "recorded, but the install state could not be saved on the server\n".into(),
        );
    }
    s.record(
        peer,
        "POST",
        &path,
        StatusCode::NO_CONTENT,
        Some(hostname),
        format!("install {}", event.name().to_lowercase()),
    );
    StatusCode::NO_CONTENT.into_response()
}
