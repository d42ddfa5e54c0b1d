use super::*;

fn study(text: &str) -> Study {
    Study::from_text(text, None)
}

/// A fleet of `compute` nodes of 256 GiB running `standard` clusters then `tail`.
fn fleet(compute: u32, standard: u32, tail: &str) -> String {
    format!(
        "name: fix
fleet:
  classes:
    - {{name: compute, count: {compute}, threads: 64, memory_gib: 256, disks: 2, disk_tb: 3.84, racks: [r1, r2, r3]}}
shapes:
  standard:
    pools:
      - {{name: cp, count: 3, vcpu: 4, memory_gib: 8, disks_gib: [60], anti_affinity: true}}
      - {{name: workers, count: 3, vcpu: 8, memory_gib: 32, disks_gib: [200]}}
  small:
    pools:
      - {{name: all, count: 2, vcpu: 2, memory_gib: 4, disks_gib: [20]}}
clusters:
  - {{shape: standard, count: {standard}}}
{tail}analysis: {{risk_trials: 100}}
"
    )
}

/// The list with the last `k` clusters of `pools` removed, placed whole: the plain search.
fn removed_one_by_one(l: &Study, pools: &[Pool], max: u32) -> (Option<u32>, Vec<bool>) {
    let topo = l.topology();
    let clusters = l.current();
    let each: Vec<bool> = (1..=max)
        .map(|k| {
            let mut left = k as usize;
            let mut rest: Vec<&[Pool]> = Vec::new();
            for c in clusters.iter().rev() {
                if left > 0 && std::ptr::eq(c.as_ptr(), pools.as_ptr()) {
                    left -= 1;
                } else {
                    rest.push(c);
                }
            }
            rest.reverse();
            passes(l, &topo, &rest)
        })
        .collect();
    let first = each.iter().position(|&p| p).map(|i| i as u32 + 1);
    (first, each)
}

/// Growing one placement gives the count a placement per count gives, on a fleet where
/// removing a few fails and more passes; with the shape's clusters not last (another
/// shape after them) the search places each count whole and still answers.
#[test]
fn the_grown_removal_search_is_the_count_by_count_one() {
    let l = study(&fleet(6, 30, ""));
    let pools = l.shapes["standard"].as_slice();
    let topo = l.topology();
    let clusters = l.current();
    let (plain, each) = removed_one_by_one(&l, pools, 30);
    assert!(
        each.contains(&false) && each.contains(&true),
        "a search with both answers: {each:?}"
    );
    assert!(plain > Some(2), "an answer past the first counts: {each:?}");
    assert_eq!(fewest_removed(&l, &topo, &clusters, pools, 30), plain);
    assert!(!passes(&l, &topo, &clusters), "the fleet fails as it is");

    let l = study(&fleet(6, 30, "  - {shape: small, count: 1}\n"));
    let pools = l.shapes["standard"].as_slice();
    let (plain, _) = removed_one_by_one(&l, pools, 30);
    assert!(plain.is_some());
    assert_eq!(
        fewest_removed(&l, &l.topology(), &l.current(), pools, 30),
        plain
    );
}

/// `passes` judges headroom as the report does (`analyse_with`'s verdict).
#[test]
fn the_pruned_verdict_of_the_fix_search_is_the_reports() {
    let mut seen = Vec::new();
    for standard in [10, 20, 26, 30] {
        let l = study(&fleet(6, standard, ""));
        let topo = l.topology();
        let pl = l.place(&l.current());
        let report = crate::simulate::failure::headroom::analyse_with(&pl, &l.headroom_spec(&topo));
        let failures = Failures::new(&topo, &l.headroom_spec(&topo));
        let pruned = pruned::proven(&pl, &failures)
            || pruned::verdict_and_min_slack(&pl, &failures).0.passes();
        assert_eq!(pruned, report.verdict.passes(), "{standard} clusters");
        seen.push(pruned);
    }
    assert!(seen.contains(&true) && seen.contains(&false), "{seen:?}");
}
