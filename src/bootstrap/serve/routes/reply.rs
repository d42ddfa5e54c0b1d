//! Small pieces every route answers with.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// A plain-text answer.
pub(crate) fn text(code: StatusCode, body: String) -> Response {
    (
        code,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}
