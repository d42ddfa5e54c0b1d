//! `rackplan portal`: the teams' self-service pages. What a team may ask for (the
//! catalogue's shapes, its quota, its lifetimes), the operator's own judgement of a
//! request before it is made (`operator::preview`, a dry run of a judging pass), the
//! request made, and the team's requests followed to their access instructions, with the
//! actions the team may take (extend, protect, delete).
//!
//! The trust boundary: the portal acts **as the user**. The user signs in with their own
//! bearer token; it is kept only in the user's browser, sealed (`session`), and every read
//! and write of a ClusterRequest, and the check of which team namespaces the user may ask
//! in, is a call to the API server with that token (`acting`): the API server's RBAC
//! decides what the user sees and does. The portal's own identity (its kubeconfig, else
//! the in-cluster service account) only ever reads, and only what the operator's
//! judgement reads: the team namespaces, every ClusterRequest of them, the quota ConfigMap
//! and the Harvester fleet. What it reads reaches the user only as the verdict sentence,
//! and only for a namespace where the API server says the user may create requests.
//!
//! Behind an authenticating proxy (`proxy`), the user is who the proxy's headers say, and
//! every one of those calls is made through an impersonator identity as that user.

mod acting;
mod clusters;
mod handlers;
mod pages;
pub mod proxy;
mod respond;
mod server;
pub mod session;

pub use respond::Log;
pub use server::{CSP, MAX_BODY, PortalError, PortalOptions, ProxyOptions, serve};
