//! Each node's install progress, as `serve` sees it: the config token its script carried,
//! the config fetched with it, and the installer's STARTED/SUCCEEDED/FAILED webhooks, each
//! with its time. This is the data the "an installed node boots its disk" guard reads, and
//! what `serve` keeps on disk (`state_file`) so the guard outlives a restart.
//!
//! Bounded: a node keeps its last [`MAX_EVENTS`] events, repeated token issues collapse
//! into one, and the webhook event that decides the node's state is never the one dropped.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Events kept per node.
pub(crate) const MAX_EVENTS: usize = 16;

/// What happened to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum InstallEvent {
    /// `/ipxe` handed the node its script with a one-time config token.
    TokenIssued,
    /// The node fetched its install config with that token.
    ConfigServed,
    /// The installer's webhooks.
    Started,
    Succeeded,
    Failed,
}

impl InstallEvent {
    /// The installer's webhook event named `name` (any case).
    pub(crate) fn webhook(name: &str) -> Option<InstallEvent> {
        match name.to_ascii_uppercase().as_str() {
            "STARTED" => Some(InstallEvent::Started),
            "SUCCEEDED" => Some(InstallEvent::Succeeded),
            "FAILED" => Some(InstallEvent::Failed),
            _ => None,
        }
    }

    /// Sent by the installer (the rest are this server's own records).
    pub(crate) fn is_webhook(self) -> bool {
        matches!(
            self,
            InstallEvent::Started | InstallEvent::Succeeded | InstallEvent::Failed
        )
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            InstallEvent::TokenIssued => "TOKEN_ISSUED",
            InstallEvent::ConfigServed => "CONFIG_SERVED",
            InstallEvent::Started => "STARTED",
            InstallEvent::Succeeded => "SUCCEEDED",
            InstallEvent::Failed => "FAILED",
        }
    }
}

/// Where a node's install stands: decided by the installer's last webhook alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InstallState {
    Waiting,
    Installing,
    Installed,
    Failed,
}

impl InstallState {
    pub(crate) fn name(self) -> &'static str {
        match self {
            InstallState::Waiting => "waiting",
            InstallState::Installing => "installing",
            InstallState::Installed => "installed",
            InstallState::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Event {
    pub event: InstallEvent,
    /// RFC 3339, UTC.
    pub(crate) at: String,
}

/// One node's record, under its hostname.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeProgress {
    /// The node id (system serial) the hostname was planned for when this was recorded.
    pub(crate) node: String,
    #[serde(default)]
    pub events: Vec<Event>,
}

impl NodeProgress {
    pub(crate) fn new(node: &str) -> NodeProgress {
        NodeProgress {
            node: node.to_string(),
            events: Vec::new(),
        }
    }

    pub(crate) fn state(&self) -> InstallState {
        match self
            .events
            .iter()
            .rev()
            .find(|e| e.event.is_webhook())
            .map(|e| e.event)
        {
            Some(InstallEvent::Started) => InstallState::Installing,
            Some(InstallEvent::Succeeded) => InstallState::Installed,
            Some(InstallEvent::Failed) => InstallState::Failed,
            _ => InstallState::Waiting,
        }
    }

    /// Add an event: a token issued right after another one only moves its time.
    pub(crate) fn push(&mut self, event: InstallEvent, at: String) {
        if event == InstallEvent::TokenIssued
            && let Some(last) = self.events.last_mut()
            && last.event == InstallEvent::TokenIssued
        {
            last.at = at;
            return;
        }
        self.events.push(Event { event, at });
        self.trim();
    }

    /// Keep the last [`MAX_EVENTS`], never dropping the webhook that sets the state.
    pub(crate) fn trim(&mut self) {
        while self.events.len() > MAX_EVENTS {
            let deciding = self.events.iter().rposition(|e| e.event.is_webhook());
            let drop = usize::from(deciding == Some(0));
            self.events.remove(drop);
        }
    }
}

/// Every node's progress, by hostname.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Progress {
    pub nodes: BTreeMap<String, NodeProgress>,
}

impl Progress {
    /// The record of `hostname`, if it was made for the node `id`.
    pub(crate) fn of(&self, hostname: &str, id: &str) -> Option<&NodeProgress> {
        self.nodes.get(hostname).filter(|p| p.node == id)
    }

    /// The installer reported SUCCEEDED last for this node (the hostname planned for this
    /// very node id: another machine given the hostname later starts afresh).
    pub fn installed(&self, hostname: &str, id: &str) -> bool {
        self.of(hostname, id)
            .is_some_and(|p| p.state() == InstallState::Installed)
    }

    /// Record `event` for `hostname`, planned for node `id`.
    pub(crate) fn note(&mut self, hostname: &str, id: &str, event: InstallEvent, at: String) {
        let entry = self
            .nodes
            .entry(hostname.to_string())
            .or_insert_with(|| NodeProgress::new(id));
        if entry.node != id {
            *entry = NodeProgress::new(id);
        }
        entry.push(event, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(i: usize) -> String {
        format!("2025-01-01T00:00:{:02}Z", i % 60)
    }

    #[test]
    fn the_state_is_the_last_webhook() {
        let mut p = Progress::default();
        assert!(!p.installed("hv-c01", "S1"));
        p.note("hv-c01", "S1", InstallEvent::TokenIssued, at(0));
        p.note("hv-c01", "S1", InstallEvent::ConfigServed, at(1));
        assert_eq!(p.nodes["hv-c01"].state(), InstallState::Waiting);
        p.note("hv-c01", "S1", InstallEvent::Started, at(2));
        assert_eq!(p.nodes["hv-c01"].state(), InstallState::Installing);
        p.note("hv-c01", "S1", InstallEvent::Succeeded, at(3));
        assert!(p.installed("hv-c01", "S1"));
        // A token handed out afterwards (serve --reinstall) does not undo SUCCEEDED.
        p.note("hv-c01", "S1", InstallEvent::TokenIssued, at(4));
        assert!(p.installed("hv-c01", "S1"));
        assert!(
            !p.installed("hv-c01", "S2"),
            "another machine, same hostname"
        );
    }

    #[test]
    fn events_stay_bounded_and_keep_the_deciding_webhook() {
        let mut p = Progress::default();
        p.note("hv-c01", "S1", InstallEvent::Succeeded, at(0));
        for i in 0..1000 {
            p.note("hv-c01", "S1", InstallEvent::TokenIssued, at(i));
            p.note("hv-c01", "S1", InstallEvent::ConfigServed, at(i));
        }
        let n = &p.nodes["hv-c01"];
        assert_eq!(n.events.len(), MAX_EVENTS);
        assert_eq!(n.state(), InstallState::Installed);
        assert_eq!(n.events[0].event, InstallEvent::Succeeded);
        // Repeated token issues collapse into one event.
        let mut q = NodeProgress::new("S2");
        for i in 0..100 {
            q.push(InstallEvent::TokenIssued, at(i));
        }
        assert_eq!(q.events.len(), 1);
        assert_eq!(q.events[0].at, at(99));
    }

    #[test]
    fn a_new_machine_under_the_hostname_starts_afresh() {
        let mut p = Progress::default();
        p.note("hv-c01", "S1", InstallEvent::Succeeded, at(0));
        p.note("hv-c01", "S2", InstallEvent::TokenIssued, at(1));
        assert_eq!(p.nodes["hv-c01"].node, "S2");
        assert_eq!(p.nodes["hv-c01"].events.len(), 1);
    }
}
