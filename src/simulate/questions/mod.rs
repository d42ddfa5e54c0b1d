//! The questions a study answers: the review of a fleet, growth (max clusters, the
//! timeline, quotas), the fix, one request's admission, and a drain.

mod admit;
mod drain;
mod fix;
mod growth;
mod rebuild;
mod review;
mod warnings;

pub use admit::{AdmitError, Decision, Quota, Stranding, decide};
pub use drain::{DrainError, DrainReport, FurtherFailure, Move, drain, drain_named};
pub use fix::{fix, passes};
pub use growth::{
    Flow, max_clusters, max_clusters_with, quota_admissions, request_active, shape_vcpu, timeline,
};
pub use rebuild::{placement_assumptions, rebuild_report};
pub use review::{Watch, review, review_with, risk_section};
