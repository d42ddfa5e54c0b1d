//! rackplan's integration tests: one binary, a module per topic.

mod support;

mod admit;
mod bad_input;
mod bootstrap;
mod check;
mod cli;
mod crds;
mod deploy;
mod hostile_bmc;
mod installer_examples;
mod layout;
mod live_bounds;
mod live_fleet;
mod live_review;
mod live_state;
mod newcomer;
mod node_conditions;
mod plan;
mod props;
mod rebuild_longhorn;
mod redfish_faults;
mod redfish_mockups;
mod redfish_tls;
mod reference_docs;
mod render;
mod report_browser;
mod serve_hostile;
mod serve_state;
mod sim;
mod sim_honesty;
mod ssh;
mod tables;
mod trust;
