//! Address arithmetic for the site's networks: pools, the storage range Harvester hands to
//! Longhorn, and how many addresses it needs.

use std::net::Ipv4Addr;

use ipnet::Ipv4Net;

use crate::site::Pool;

/// Addresses Harvester's storage network needs: 2 + 2 per disk for every Longhorn node
/// (Harvester's setting webhook rule).
pub(crate) fn storage_ips_needed(disks_per_node: &[usize]) -> u64 {
    disks_per_node.iter().map(|d| 2 + 2 * *d as u64).sum()
}

/// Usable addresses of a storage range: all but network and broadcast, minus excludes.
pub(crate) fn usable_storage_ips(range: Ipv4Net, exclude: &[Ipv4Net]) -> u64 {
    let total = 1u64 << (32 - range.prefix_len());
    let base = total.saturating_sub(2);
    let excluded: u64 = exclude
        .iter()
        .map(|e| {
            let size = 1u64 << (32 - e.prefix_len());
            // Network and broadcast of the range are already counted out.
            let edge =
                u64::from(e.contains(&range.network())) + u64::from(e.contains(&range.broadcast()));
            size - edge
        })
        .sum();
    base.saturating_sub(excluded)
}

/// Number of addresses in a pool (inclusive).
pub(crate) fn pool_size(pool: &Pool) -> u64 {
    u64::from(u32::from(pool.end)).saturating_sub(u64::from(u32::from(pool.start))) + 1
}

/// The first address of the pool not in `taken`.
pub(crate) fn next_free(
    pool: &Pool,
    taken: &std::collections::BTreeSet<Ipv4Addr>,
) -> Option<Ipv4Addr> {
    (u32::from(pool.start)..=u32::from(pool.end))
        .map(Ipv4Addr::from)
        .find(|a| !taken.contains(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_sizing_matches_harvester_rule() {
        // 15 nodes with 4 disks each: 15 * (2 + 8) = 150.
        assert_eq!(storage_ips_needed(&[4; 15]), 150);
        let r: Ipv4Net = "172.16.0.0/24".parse().unwrap();
        assert_eq!(usable_storage_ips(r, &[]), 254);
        let ex: Ipv4Net = "172.16.0.0/25".parse().unwrap();
        assert_eq!(usable_storage_ips(r, &[ex]), 254 - 127);
    }

    #[test]
    fn pool_walks_in_order() {
        let pool = Pool {
            start: "10.0.0.10".parse().unwrap(),
            end: "10.0.0.12".parse().unwrap(),
        };
        assert_eq!(pool_size(&pool), 3);
        let mut taken = std::collections::BTreeSet::new();
        taken.insert("10.0.0.10".parse().unwrap());
        assert_eq!(next_free(&pool, &taken), Some("10.0.0.11".parse().unwrap()));
        taken.insert("10.0.0.11".parse().unwrap());
        taken.insert("10.0.0.12".parse().unwrap());
        assert_eq!(next_free(&pool, &taken), None);
    }
}
