//! `GET /ipxe?mac=MAC`: the iPXE script of the node that owns this MAC, its `config_url`
//! carrying a fresh one-time token; an unknown MAC gets a script that says so and stops; a
//! node whose install SUCCEEDED (as recorded, across restarts) gets a script that boots its
//! disk and no token, unless `serve --reinstall NODE`.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Instant;

use axum::extract::{ConnectInfo, Query, State};
use axum::http::StatusCode;
use axum::response::Response;

use super::reply::text;
use crate::bootstrap::serve::progress::InstallEvent;
use crate::bootstrap::serve::state::Shared;
use crate::inventory::model::normalize_mac;

pub(crate) async fn ipxe(
    State(s): State<Shared>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let raw = q.get("mac").cloned().unwrap_or_default();
    let Some(mac) = normalize_mac(&raw) else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::BAD_REQUEST,
            None,
            format!("mac={:?} is not a MAC", crate::redfish::origin::shown(&raw)),
        );
        return text(
            StatusCode::BAD_REQUEST,
            "#!ipxe\necho rackplan: that is not a MAC address\nshell\n".into(),
        );
    };
    let Some((hostname, id)) = s.macs.get(&mac).cloned() else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::OK,
            None,
            format!("mac={mac}: unknown MAC, halting"),
        );
        return text(
            StatusCode::OK,
            format!(
                "#!ipxe\necho rackplan: MAC {mac} is not in the inventory of site {}\necho Add the node (rackplan discover, plan, render) and boot again.\nshell\n",
                s.site
            ),
        );
    };
    let who = Some(format!("{hostname} ({id})"));
    let Some(file) = s.files.get(&format!("nodes/{hostname}/boot.ipxe")) else {
        s.record(
            peer,
            "GET",
            "/ipxe",
            StatusCode::NOT_FOUND,
            who,
            "no script rendered for this node",
        );
        return text(
            StatusCode::NOT_FOUND,
            "#!ipxe\necho rackplan: no script rendered for this node\nshell\n".into(),
        );
    };
    if s.installed(&hostname, &id) {
        s.record(peer, "GET", "/ipxe", StatusCode::OK, who, "install already SUCCEEDED: boot from disk, no token (serve --reinstall NODE to install again)");
        return text(
            StatusCode::OK,
            format!(
                "#!ipxe\necho rackplan: {hostname} is installed; booting from its disk\nexit\n"
            ),
        );
    }
    let token = s
        .tokens
        .lock()
        .expect("not poisoned")
        .mint(&hostname, Instant::now());
    s.note_soon(&hostname, &id, InstallEvent::TokenIssued);
    let script = String::from_utf8_lossy(&file.bytes).into_owned();
    let url = format!("{}/nodes/{hostname}/config.yaml", s.base_url);
    let script = script.replace(
        &format!("config_url={url}"),
        &format!("config_url={url}?token={token}"),
    );
    s.record(
        peer,
        "GET",
        "/ipxe",
        StatusCode::OK,
        who,
        format!("mac={mac}: one-time config token issued"),
    );
    text(StatusCode::OK, script)
}
