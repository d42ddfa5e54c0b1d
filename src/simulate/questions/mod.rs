//! The questions a study answers: the review of a fleet, growth (max clusters, the
//! timeline, quotas), the fix, one request's admission, and a drain.

mod admit;
mod drain;
mod fix;
mod growth;
mod rebuild;
mod review;
mod stops;
mod timeline;
mod upgrade;
mod upgrade_answer;
mod upgrade_fleet;
mod upgrade_step;
mod warnings;

pub use admit::{AdmitError, Decision, Held, Memo, Quota, Stranding, decide, judge, judge_in};
pub(crate) use drain::{DrainError, DrainReport, FurtherFailure, Move, drain_named};
pub(crate) use growth::Growth;
pub use growth::{Flow, max_clusters, max_clusters_with};
pub use review::{Watch, review, review_with, risk_section};
pub use stops::what_stops;
pub use timeline::{quota_admissions, request_active, shape_vcpu, timeline, timeline_with};
pub(crate) use upgrade::link as migration_link;
pub use upgrade::upgrade;
pub use upgrade_answer::{
    BetterOrder, Blocker, NextFailure, Segment, Step, UpgradeError, UpgradeReport, VmFate, minutes,
};
