//! The review's own words, defined once: each where it first appears in the review (the
//! terminal, HTML and Markdown alike) and all together in the HTML report's glossary.

/// A term of the review and what it means.
pub(crate) struct Term {
    pub(crate) name: &'static str,
    /// The words by which a review uses it (lower case).
    key: &'static str,
    pub(crate) means: &'static str,
}

pub(crate) const SLACK: Term = Term {
    key: "slack",
    name: "slack",
    means: "what is still free after a failure, once everything the failed hosts ran is placed again on the survivors: the share of the surviving hosts' CPU and memory the scheduler can still give (requests against what each host offers) and of their disks (the replicas' actual data), summed over the survivors",
};

pub(crate) const RULE_25: Term = Term {
    key: "25 % free",
    name: "the \"25 % free\" rule",
    means: "the rule of thumb that a fleet survives a failure while at least 25 % of its CPU, memory and storage is free in total; it looks at the sums only, not at where each VM and replica can go, which is what the re-placement checks",
};

pub(crate) const COPYSET: Term = Term {
    key: "copyset",
    name: "copyset",
    means: "a set of nodes that together hold every replica of at least one volume: if all the nodes of one copyset fail at once, that volume's data is lost; the fewer distinct copysets, the fewer failure sets lose data",
};

pub(crate) const SCATTER_WIDTH: Term = Term {
    key: "scatter width",
    name: "scatter width",
    means: "how many other nodes each node shares a copyset with (copyset placement, Cidon et al. 2013): a smaller width means fewer copysets and so less chance of loss when nodes fail together, at the cost of fewer nodes to rebuild from",
};

pub(crate) const MAX_CLUSTERS: Term = Term {
    key: "max clusters",
    name: "max clusters",
    means: "how many more clusters of the scenario's shape fit with every single node and rack failure still survived, every count from none up to it placed and checked",
};

/// What the risk model leaves out, said beside its figures.
pub(crate) const RISK_LEAVES_OUT: &str = "What the model leaves out: failures correlated beyond the racks and bursts above (a power feed, a switch pair, the whole site), software faults (a Longhorn, kernel or firmware bug, a bad upgrade), operator error (a wiped disk, a deleted volume) and silent corruption of a replica; the figure is the rate from independent hardware failures alone, and at these sizes those causes are likely to dominate it";

/// Every term, in the order the review uses them.
pub(crate) const ALL: [&Term; 5] = [&SLACK, &RULE_25, &MAX_CLUSTERS, &COPYSET, &SCATTER_WIDTH];

/// The terms a review's text uses, in glossary order.
pub(crate) fn used_in(f: &super::Findings) -> Vec<&'static Term> {
    let mut text = String::new();
    for sec in &f.sections {
        for b in &sec.blocks {
            match b {
                super::Block::Text(t) => text.push_str(t),
                super::Block::Table(t) => {
                    for c in t.head.iter().chain(t.rows.iter().flatten()) {
                        text.push_str(c);
                        text.push(' ');
                    }
                }
                super::Block::Chart(_) => {}
            }
            text.push(' ');
        }
    }
    let text = text.to_lowercase();
    ALL.into_iter().filter(|t| text.contains(t.key)).collect()
}

/// "Slack: what is still free …." as a sentence of the review.
pub(crate) fn defined(t: &Term) -> String {
    let mut term = t.name.to_string();
    if let Some(first) = term.get(..1) {
        term = format!("{}{}", first.to_uppercase(), &term[1..]);
    }
    format!("{term}: {}.", t.means)
}
