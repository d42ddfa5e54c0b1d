//! The routes, mounted under the path of the base URL (`http://h/harvester/v1` serves
//! `/harvester/v1/ipxe`...), so every URL handed to a node resolves against this server.

use axum::Router;
use axum::extract::Request;
use axum::routing::{get, post};

use super::paths::base_path;
use super::routes::{config, files, ipxe, status, webhook};
use super::state::{MAX_BODY_BYTES, Shared};

/// The router. The base URL's path must have passed `site::base_url::check` (axum panics on
/// a path segment that looks like a capture).
pub(crate) fn router(state: Shared) -> Router {
    let prefix = base_path(&state.base_url).to_string();
    let outer = state.clone();
    let app = Router::new()
        .route("/ipxe", get(ipxe::ipxe))
        .route("/nodes/{hostname}/config.yaml", get(config::config))
        .route("/webhook/{hostname}/{event}", post(webhook::webhook))
        .route("/status", get(status::status))
        .fallback(files::other)
        .with_state(state);
    let app = if prefix.is_empty() {
        app
    } else {
        let p = prefix.clone();
        Router::new()
            .nest(&prefix, app)
            .fallback(move |req: Request| {
                let s = outer.clone();
                let p = p.clone();
                async move { files::outside(&s, &p, &req) }
            })
    };
    app.layer(tower_http::limit::RequestBodyLimitLayer::new(
        MAX_BODY_BYTES,
    ))
}
