//! `GET /status`: the install state of every planned node, as recorded (restored from the
//! site's state file when the server started).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::bootstrap::serve::progress::{InstallState, NodeProgress};
use crate::bootstrap::serve::state::Shared;

pub(crate) async fn status(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
) -> Response {
    let progress = s.install.snapshot();
    let mut nodes = BTreeMap::new();
    for (hostname, id) in &s.nodes {
        let record = progress.of(hostname, id);
        let state = record.map_or(InstallState::Waiting, NodeProgress::state);
        let events = record.map(|p| p.events.clone()).unwrap_or_default();
        nodes.insert(
            hostname.clone(),
            serde_json::json!({"node": id, "state": state, "events": events}),
        );
    }
    s.record(peer, "GET", "/status", StatusCode::OK, None, "status");
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        serde_json::to_string_pretty(&serde_json::json!({
            "site": s.site,
            "live_tokens": s.live_tokens(),
            "state_file": s.install.path().display().to_string(),
            "nodes": nodes,
        }))
        .unwrap_or_default(),
    )
        .into_response()
}
