//! The reference scenario (`simulations/reference-factory.yaml`) scaled to any number of
//! nodes: 3 management nodes and the rest compute nodes of the reference design in racks
//! of at most 40, 60 standard clusters per 27 nodes, the reference teams. The generated
//! fleets the benchmarks and the scale tests run; never presented as a real fleet.

const REFERENCE: &str = include_str!("../../../simulations/reference-factory.yaml");

/// The reference scenario at `nodes` nodes (at least 4); `failures` sets
/// `headroom.failures` when above 1.
pub fn reference_at(nodes: usize, failures: u32) -> String {
    let compute = nodes.saturating_sub(3).max(1);
    let racks = compute.div_ceil(40).max(3);
    let rack_list: Vec<String> = (1..=racks).map(|r| format!("r{r:02}")).collect();
    let clusters = (60 * nodes).div_ceil(27);
    // Feeds for the added racks.
    let extra: String = (4..=racks)
        .map(|r| format!("    r{r:02}: {{power: feed-b}}\n"))
        .collect();
    let mut s = REFERENCE
        .replace("count: 24", &format!("count: {compute}"))
        .replace(
            "      racks: [r01, r02, r03]\n  racks:",
            &format!("      racks: [{}]\n  racks:", rack_list.join(", ")),
        )
        .replace(
            "- {shape: standard, count: 60}",
            &format!("- {{shape: standard, count: {clusters}}}"),
        )
        .replace(
            "    r03: {power: feed-b}\n",
            &format!("    r03: {{power: feed-b}}\n{extra}"),
        );
    if failures > 1 {
        s.push_str(&format!("\nheadroom:\n  failures: {failures}\n"));
    }
    s
}
