//! One-time config tokens: minted per `/ipxe` script, good for one config fetch by that
//! node, expiring after a few minutes. The table is bounded: a node holds at most
//! [`PER_NODE`] live tokens (a new one retires its oldest) and expired ones are dropped on
//! every mint, so no stream of requests can grow it past `PER_NODE` x planned nodes.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Live tokens per node: one for the boot in progress and one for a retry.
pub(crate) const PER_NODE: usize = 2;

#[derive(Debug)]
pub(crate) struct Tokens {
    ttl: Duration,
    /// token -> (hostname, minted at)
    live: HashMap<String, (String, Instant)>,
}

impl Tokens {
    pub(crate) fn new(ttl: Duration) -> Tokens {
        Tokens {
            ttl,
            live: HashMap::new(),
        }
    }

    /// A fresh token for `hostname`.
    pub(crate) fn mint(&mut self, hostname: &str, now: Instant) -> String {
        let ttl = self.ttl;
        self.live
            .retain(|_, (_, at)| now.saturating_duration_since(*at) < ttl);
        let mut mine: Vec<(String, Instant)> = self
            .live
            .iter()
            .filter(|(_, (h, _))| h == hostname)
            .map(|(t, (_, at))| (t.clone(), *at))
            .collect();
        mine.sort_by_key(|(_, at)| *at);
        while mine.len() >= PER_NODE {
            let (oldest, _) = mine.remove(0);
            self.live.remove(&oldest);
        }
        let mut raw = [0u8; 16];
        // The OS random source does not fail on Linux once booted; a zero token would
        // still be one-time and bound to its node.
        let _ = getrandom::fill(&mut raw);
        let token: String = raw.iter().map(|b| format!("{b:02x}")).collect();
        self.live.insert(token.clone(), (hostname.to_string(), now));
        token
    }

    /// Use `token` for `hostname`'s config: true once, for a live token of that node.
    pub(crate) fn redeem(&mut self, token: &str, hostname: &str, now: Instant) -> bool {
        let ok = self
            .live
            .get(token)
            .is_some_and(|(h, at)| h == hostname && now.saturating_duration_since(*at) < self.ttl);
        if ok {
            self.live.remove(token);
        }
        ok
    }

    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_its_nodes_config_once_and_expires() {
        let mut t = Tokens::new(Duration::from_secs(600));
        let now = Instant::now();
        let a = t.mint("hv-c01", now);
        assert!(!t.redeem(&a, "hv-c02", now), "not another node's");
        assert!(t.redeem(&a, "hv-c01", now));
        assert!(!t.redeem(&a, "hv-c01", now), "once");
        let b = t.mint("hv-c01", now);
        assert!(
            !t.redeem(&b, "hv-c01", now + Duration::from_secs(601)),
            "expired"
        );
    }

    #[test]
    fn the_table_stays_bounded_under_a_flood() {
        let mut t = Tokens::new(Duration::from_secs(600));
        let now = Instant::now();
        for i in 0..100_000 {
            t.mint(&format!("hv-c{:02}", i % 12), now);
        }
        assert_eq!(t.len(), PER_NODE * 12);
        let newest = t.mint("hv-c01", now);
        assert!(t.redeem(&newest, "hv-c01", now), "the newest token works");
    }
}
