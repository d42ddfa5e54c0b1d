//! A capacity review of the fleet as it runs (`simulate --from-cluster`): on the real
//! support-bundle sample (unpacked and zipped as the UI delivers it), on kubectl `kind:
//! List` output in YAML and JSON, and on generated fleets; the dump's settings win over the
//! scenario's; `--drain` on fleets whose answers are worked out by hand; the review report
//! and its charts.

use std::path::{Path, PathBuf};

use rackplan::live::synth;
use serde_json::Value;

use crate::support::{json_of, plain as text, rackplan_json, repo, shared};

fn sample() -> PathBuf {
    shared().join("reference/harvester/support-bundle-sample")
}

fn write_json(dir: &Path, name: &str, spec: &synth::Spec) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, synth::list(spec).to_string()).unwrap();
    p
}

fn simulate(args: &[&str]) -> (i32, Value, String) {
    let mut cmd = rackplan_json(&["simulate"]);
    cmd.args(args);
    json_of(&mut cmd)
}

#[test]
fn the_shipped_example_dump_is_what_the_generator_writes() {
    let path = repo().join("simulations/live-fleet.yaml");
    let want = synth::list_yaml(&synth::example());
    if std::env::var_os("RACKPLAN_UPDATE_EXAMPLES").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let got = std::fs::read_to_string(&path).unwrap();
    assert!(
        got == want,
        "simulations/live-fleet.yaml differs from the generator: RACKPLAN_UPDATE_EXAMPLES=1 cargo test --test integration live_review"
    );
}

fn zip_sample(dir: &Path) -> PathBuf {
    let zpath = dir.join("supportbundle_2022-03-22T23-49-32Z.zip");
    let n = crate::support::zip_as_bundle(&sample(), "supportbundle_2022-03-22T23-49-32Z", &zpath);
    assert!(n > 10, "{n} files");
    zpath
}

#[test]
fn the_real_bundle_unpacked_and_zipped_gives_the_same_review_and_says_what_it_lacks() {
    let tmp = tempfile::tempdir().unwrap();
    let zip = zip_sample(tmp.path());
    let folder = sample();
    let (code, a, err) = simulate(&["--from-cluster", folder.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, b, err) = simulate(&["--from-cluster", zip.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    for v in [&a, &b] {
        assert_eq!(v["nodes"], 1);
        let live = &v["live"];
        assert_eq!(live["nodes"], 1);
        assert_eq!(live["vmis_running"], 0);
        // About when the bundle was taken (it is named 2022-03-22T23-49-32Z): the newest
        // timestamp its objects record, also in the report's provenance.
        assert_eq!(live["newest_object"], "2022-03-22T23:49:24Z");
        assert_eq!(
            v["provenance"]["inputs"][0]["newest_object"],
            "2022-03-22T23:49:24Z"
        );
        // No VMIs, volumes or replicas in the sample: said, not shown as zeros.
        let skipped: Vec<&str> = live["skipped_analyses"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap())
            .collect();
        assert!(
            skipped.iter().any(|s| s.contains("VirtualMachineInstance")),
            "{skipped:?}"
        );
        assert!(
            live["storage_skipped"]
                .as_str()
                .unwrap()
                .contains("longhorn.io")
        );
        // The settings it holds are used and say so.
        let from = |input: &str| {
            v["assumptions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["input"].as_str().unwrap().starts_with(input))
                .unwrap_or_else(|| panic!("{input}"))
                .clone()
        };
        let over = from("storage-over-provisioning-percentage");
        assert_eq!(
            (over["value"].as_str(), over["source"].as_str()),
            (Some("200%"), Some("dump"))
        );
        // The bundle has no Harvester settings: overcommit-config is the default, named so.
        assert_eq!(from("overcommit-config cpu")["source"], "default");
        // One node, two replicas (the sample's default-replica-count) and no volume: no
        // risk figure and no copyset comparison, rather than a meaningless 100 %.
        assert_eq!(from("default-replica-count")["value"], "2");
        assert_eq!(
            v["risk"]["not_applicable"],
            "no volumes: rebuild and data-loss risk do not apply"
        );
        assert!(v["risk"].get("correlated").is_none());
    }
    let strip = |v: &Value| {
        let mut v = v.clone();
        v["scenario"] = Value::Null;
        v["live"]["source"] = Value::Null;
        v["rebuild"]["windows"] = Value::Null;
        // When and from which file: different by construction.
        v["provenance"] = Value::Null;
        v
    };
    assert_eq!(strip(&a), strip(&b), "zip and folder agree");
    let (code, out, err) = text(&["simulate", "--from-cluster", folder.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Rebuild and risk\n  Skipped: the dump has no"),
        "{out}"
    );
    assert!(!out.contains("Rebuild after losing"), "{out}");
}

#[test]
fn yaml_and_json_lists_give_one_answer_and_the_dump_wins_over_the_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let yaml = repo().join("simulations/live-fleet.yaml");
    let json = write_json(tmp.path(), "fleet.json", &synth::example());
    let (code, a, err) = simulate(&["--from-cluster", yaml.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let (code, b, err) = simulate(&["--from-cluster", json.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let strip = |v: &Value| {
        let mut v = v.clone();
        v["scenario"] = Value::Null;
        v["live"]["source"] = Value::Null;
        v["provenance"] = Value::Null;
        v
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a["live"]["vmis_running"], 60);
    assert_eq!(a["live"]["tenant_clusters"], 10);
    assert_eq!(a["vms"], 60);
    // A scenario that disagrees: the dump's overcommit and rebuild limit are used.
    let scen = tmp.path().join("whatif.yaml");
    std::fs::write(
        &scen,
        "name: disagreeing\nplatform:\n  overcommit_cpu_pct: 800\n  rebuild_limit: 1\nclusters:\n  - {shape: s, count: 4}\nshapes:\n  s:\n    pools:\n      - {name: w, count: 1, vcpu: 2, memory_gib: 4, disks_gib: [10]}\n",
    )
    .unwrap();
    let (code, c, err) = simulate(&[
        "--from-cluster",
        json.to_str().unwrap(),
        scen.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        c["rebuild"]["limit"], 5,
        "the dump's limit, not the scenario's 1"
    );
    let cpu = c["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| {
            x["input"]
                .as_str()
                .unwrap()
                .starts_with("overcommit-config cpu")
        })
        .unwrap();
    assert_eq!(cpu["value"], "1600%");
    assert_eq!(cpu["source"], "dump");
    assert!(cpu["note"].as_str().unwrap().contains("800%"), "{cpu}");
    let over = c["live"]["scenario_overridden"].as_array().unwrap();
    assert!(
        over.iter().any(|x| x
            .as_str()
            .unwrap()
            .starts_with("clusters: the scenario's 4")),
        "{over:?}"
    );
    // What runs is not re-placed: the same VMs on the same nodes as without the scenario.
    assert_eq!(c["vms"], 60);
    assert_eq!(c["headroom"]["scenarios"], b["headroom"]["scenarios"]);
}

/// Replica data and replica count per node, from the dump itself.
fn data_per_node(dump: &Value) -> std::collections::BTreeMap<String, (f64, usize)> {
    let items = dump["items"].as_array().unwrap();
    let mut size = std::collections::BTreeMap::new();
    for o in items.iter().filter(|o| o["kind"] == "Volume") {
        size.insert(
            o["metadata"]["name"].as_str().unwrap().to_string(),
            o["status"]["actualSize"].as_f64().unwrap(),
        );
    }
    let mut per: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for r in items.iter().filter(|o| o["kind"] == "Replica") {
        let e = per
            .entry(r["spec"]["nodeID"].as_str().unwrap().to_string())
            .or_default();
        e.0 += size[r["spec"]["volumeName"].as_str().unwrap()];
        e.1 += 1;
    }
    per
}

#[test]
fn the_reference_size_fleet_rebuilds_its_busiest_nodes_actual_replicas() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = synth::Spec::default();
    let dump = synth::list(&spec);
    let path = write_json(tmp.path(), "reference.json", &spec);
    let (code, v, err) = simulate(&["--from-cluster", path.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(v["nodes"], 27);
    assert_eq!(v["live"]["tenant_clusters"], 60);
    assert_eq!(v["live"]["vmis_running"], 360);
    let per = data_per_node(&dump);
    let most = per.values().map(|x| x.0).fold(0.0, f64::max);
    let node = v["rebuild"]["failed_node"].as_str().unwrap().to_string();
    let (data, replicas) = per[&node];
    assert!(
        (data - most).abs() < 1.0,
        "{node} holds {data} bytes of replicas; the busiest holds {most}"
    );
    assert!(
        per.values().any(|x| x.0 < most - 1.0),
        "the fleet is uneven, so the choice could be wrong"
    );
    assert_eq!(v["rebuild"]["replicas_to_rebuild"], replicas);
    // Its TiB are the volumes' actualSize, not a fill share of their size.
    let items = dump["items"].as_array().unwrap();
    let tib: f64 = items
        .iter()
        .filter(|o| o["kind"] == "Replica" && o["spec"]["nodeID"] == node.as_str())
        .map(|r| {
            let vol = r["spec"]["volumeName"].as_str().unwrap();
            items
                .iter()
                .find(|o| o["kind"] == "Volume" && o["metadata"]["name"] == vol)
                .unwrap()["status"]["actualSize"]
                .as_f64()
                .unwrap()
        })
        .sum::<f64>()
        / 1024f64.powi(4);
    let got = v["rebuild"]["tib_to_rebuild"].as_f64().unwrap();
    assert!((got - tib).abs() < 1e-9, "{got} vs {tib}");
    // Every node and rack failure was checked against the running placement.
    let nodes = v["headroom"]["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "node")
        .count();
    assert_eq!(nodes, 27);
}

fn drain_fleet() -> synth::Spec {
    // Four nodes, one cluster of three anti-affine control planes on hv-001..hv-003, each
    // with a volume of two replicas on its node and the next.
    synth::Spec {
        nodes: 4,
        zones: 2,
        clusters: 1,
        control_planes: 3,
        workers: 0,
        replicas: 2,
        ..synth::Spec::default()
    }
}

#[test]
fn drain_answers_worked_out_by_hand() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_json(tmp.path(), "small.json", &drain_fleet());
    let p = path.to_str().unwrap();
    // hv-001: its control plane can only go to hv-004 (the others hold its pool).
    let (code, d, err) = simulate(&["--from-cluster", p, "--drain", "hv-001"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(d["can_start"], true);
    let moves = d["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1);
    assert_eq!(moves[0]["to"], "hv-004");
    assert_eq!(moves[0]["how"], "live migration");
    // Its volume (replicas on hv-001 and hv-002) drops to one healthy replica.
    assert_eq!(d["degraded"], serde_json::json!([[2, 1, 1]]));
    // Then losing hv-002 strands its control plane (hv-003 and hv-004 hold the pool) and
    // leaves that volume with no healthy replica.
    assert_eq!(d["survives_next_failure"], false);
    let f = d["further"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["node"] == "hv-002")
        .unwrap();
    assert_eq!(
        (
            f["stranded_vms"].as_u64(),
            f["volumes_without_replica"].as_u64()
        ),
        (Some(1), Some(1))
    );
    // hv-004 holds nothing of the cluster before the drain; losing it afterwards strands
    // the control plane that moved there.
    let f4 = d["further"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["node"] == "hv-004")
        .unwrap();
    assert_eq!(f4["stranded_vms"], 1);
    // hv-001 and hv-002 together: one control plane finds no node, and a volume has both
    // replicas there (node-drain-policy blocks it).
    let (code, d, err) = simulate(&["--from-cluster", p, "--drain", "hv-001,hv-002"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(d["can_start"], false);
    assert_eq!(d["no_target"], 1);
    assert_eq!(d["last_replica"].as_array().unwrap().len(), 1);
    let s = d["sentence"].as_str().unwrap();
    assert!(
        s.starts_with("hv-001, hv-002 cannot go into maintenance now: 1 VM(s) have no migration target; 1 volume(s)"),
        "{s}"
    );
    // hv-004 runs no VM and holds one replica (of hv-003's volume): nothing moves, that
    // volume drops to one healthy replica.
    let (code, d, err) = simulate(&["--from-cluster", p, "--drain", "hv-004"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(d["moves"].as_array().unwrap().len(), 0);
    assert_eq!(d["degraded"], serde_json::json!([[2, 1, 1]]));
    // A roomy fleet: every drain of one node is safe.
    let roomy = write_json(
        tmp.path(),
        "roomy.json",
        &synth::Spec {
            nodes: 6,
            zones: 3,
            clusters: 1,
            control_planes: 3,
            workers: 0,
            ..synth::Spec::default()
        },
    );
    let (code, d, err) = simulate(&[
        "--from-cluster",
        roomy.to_str().unwrap(),
        "--drain",
        "hv-001",
    ]);
    assert_eq!(code, 0, "{err}: {d}");
    assert_eq!(d["survives_next_failure"], true);
    let (code, out, _) = text(&[
        "simulate",
        "--from-cluster",
        roomy.to_str().unwrap(),
        "--drain",
        "hv-001",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("Drain: hv-001 can go into maintenance now"),
        "{out}"
    );
}

#[test]
fn bad_flags_and_dumps_are_clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let path = write_json(tmp.path(), "small.json", &drain_fleet());
    let p = path.to_str().unwrap();
    let (code, _, err) = text(&["simulate", "--from-cluster", p, "--drain", "hv-01"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no node `hv-01` in the dump (did you mean `hv-001`?)"),
        "{err}"
    );
    let (code, _, err) = text(&["simulate", "--from-cluster", p, "--report", "r.pdf"]);
    assert_eq!(code, 2);
    assert!(err.contains("give a file ending in .html or .md"), "{err}");
    let (code, _, err) = text(&[
        "simulate",
        "simulations/reference-factory.yaml",
        "--drain",
        "hv-001",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--from-cluster"), "{err}");
    let (code, _, err) = text(&[
        "simulate",
        "--from-cluster",
        p,
        "--drain",
        "hv-001,hv-002,hv-003,hv-004",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("every node"), "{err}");
    let missing = tmp.path().join("nope.json");
    let (code, _, err) = text(&["simulate", "--from-cluster", missing.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("nope.json"), "{err}");
    let (code, _, err) = text(&["simulate"]);
    assert_eq!(code, 2);
    assert!(err.contains("--from-cluster"), "{err}");
}

#[test]
fn the_review_report_in_html_and_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let html = tmp.path().join("review.html");
    let md = tmp.path().join("review.md");
    let dump = repo().join("simulations/live-fleet.yaml");
    let scen = repo().join("simulations/live-onboarding.yaml");
    for out in [&html, &md] {
        let (code, _, err) = text(&[
            "simulate",
            "--from-cluster",
            dump.to_str().unwrap(),
            scen.to_str().unwrap(),
            "--report",
            out.to_str().unwrap(),
        ]);
        assert_eq!(code, 0, "{err}");
    }
    let h = std::fs::read_to_string(&html).unwrap();
    // Self-contained: inline SVG, nothing fetched.
    assert!(h.contains("<svg"));
    for external in ["src=", "href=", "@import", "url("] {
        assert!(!h.contains(external), "{external}");
    }
    // The verdict comes first, then the sections in reading order.
    let order = [
        "id=\"verdict\"",
        "id=\"fix\"",
        "id=\"dump\"",
        "id=\"headroom\"",
        "id=\"capacity\"",
        "id=\"rebuild\"",
        "id=\"risk\"",
        "id=\"warnings\"",
        "id=\"assumptions\"",
    ];
    let pos: Vec<usize> = order
        .iter()
        .map(|k| h.find(k).unwrap_or_else(|| panic!("{k}")))
        .collect();
    assert!(pos.windows(2).all(|w| w[0] < w[1]), "{pos:?}");
    let m = std::fs::read_to_string(&md).unwrap();
    assert!(m.starts_with("# Capacity review: onboarding review on the fleet in"));
    for chart in [
        "headroom-slack",
        "timeline",
        "rebuild-limit",
        "risk-replicas",
    ] {
        let file = format!("review-{chart}.svg");
        assert!(m.contains(&format!("]({file})")), "{chart}");
        let svg = std::fs::read_to_string(tmp.path().join(&file)).unwrap();
        assert!(svg.starts_with("<svg"), "{file}");
    }
}

#[test]
fn the_review_charts_are_pinned() {
    let tmp = tempfile::tempdir().unwrap();
    let plots = tmp.path().join("plots");
    let dump = repo().join("simulations/live-fleet.yaml");
    let scen = repo().join("simulations/live-onboarding.yaml");
    let (code, _, err) = text(&[
        "simulate",
        "--from-cluster",
        dump.to_str().unwrap(),
        scen.to_str().unwrap(),
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    for chart in [
        "headroom-slack",
        "timeline",
        "rebuild-limit",
        "risk-replicas",
    ] {
        let svg = std::fs::read_to_string(plots.join(format!("{chart}.svg"))).unwrap();
        insta::assert_snapshot!(format!("chart_{chart}"), svg);
    }
}

#[test]
fn admit_judges_a_request_on_the_fleet_as_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dump = repo().join("simulations/live-fleet.yaml");
    let scen = repo().join("simulations/live-onboarding.yaml");
    let small = tmp.path().join("small.yaml");
    std::fs::write(&small, "team: paiement\nshape: standard\ncount: 1\n").unwrap();
    // Three 200 GiB control planes that cannot share a node: each takes 133.6 GiB of
    // requests (150 % memory overcommit, 0.25 GiB overhead) on nodes of 250 GiB that run
    // about 90 GiB already, so a failed node's one has nowhere to go.
    let big = tmp.path().join("big.yaml");
    std::fs::write(
        &big,
        "team: paiement\ncount: 1\npools:\n  - {name: big, count: 3, vcpu: 32, memory_gib: 200, disks_gib: [100], anti_affinity: true}\n",
    )
    .unwrap();
    let run = |req: &Path| {
        json_of(&mut rackplan_json(&[
            "admit",
            req.to_str().unwrap(),
            scen.to_str().unwrap(),
            "--from-cluster",
            dump.to_str().unwrap(),
            "--at",
            "2027-01-15",
        ]))
    };
    let (code, v, err) = run(&small);
    assert_eq!(code, 0, "{err}: {v}");
    assert_eq!(v["admitted"], true);
    // The ten running tenant clusters count, besides the scenario's admitted requests.
    assert_eq!(v["clusters_before"], 12);
    let (code, v, err) = run(&big);
    assert_eq!(code, 1, "{err}: {v}");
    assert_eq!(v["admitted"], false);
    assert!(v.to_string().contains("cannot restart"), "{v}");
}

#[test]
fn a_file_of_several_rancher_clusters_imports_each_and_unreadable_disks_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let cat = repo().join("iso-config/example/catalogue");
    let both = format!(
        "{}\n---\n{}",
        std::fs::read_to_string(cat.join("standard.yaml")).unwrap(),
        std::fs::read_to_string(cat.join("large.yaml")).unwrap()
    );
    std::fs::write(tmp.path().join("both.yaml"), &both).unwrap();
    let scen = tmp.path().join("s.yaml");
    std::fs::write(
        &scen,
        "name: imported\nshapes:\n  rancher: {import: both.yaml}\nanalysis: {risk_trials: 200}\nteams:\n  - name: t\n    requests:\n      - {shape: rancher/large, count: 1, from: 2027-01}\n",
    )
    .unwrap();
    let dump = repo().join("simulations/live-fleet.yaml");
    let (code, v, err) = simulate(&[
        "--from-cluster",
        dump.to_str().unwrap(),
        scen.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    // The large shape has 3 + 6 VMs: the month adds one cluster to the ten running.
    assert_eq!(v["timeline"][0]["clusters"], 11);
    // A shape name that is only the file's: the error lists the shapes it became.
    std::fs::write(
        &scen,
        "name: imported\nshapes:\n  rancher: {import: both.yaml}\nteams:\n  - name: t\n    requests:\n      - {shape: rancher, count: 1, from: 2027-01}\n",
    )
    .unwrap();
    let (code, _, err) = text(&[
        "simulate",
        "--from-cluster",
        dump.to_str().unwrap(),
        scen.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown shape `rancher`"), "{err}");
    assert!(err.contains("rancher/large, rancher/standard"), "{err}");
    // A disk whose size cannot be read is an error naming the config, not a smaller shape.
    let broken = std::fs::read_to_string(cat.join("standard.yaml"))
        .unwrap()
        .replacen("\\\"size\\\":", "\\\"sizes\\\":", 1);
    assert!(broken.contains("sizes"), "the fixture changed: {broken}");
    std::fs::write(tmp.path().join("both.yaml"), &broken).unwrap();
    std::fs::write(
        &scen,
        "name: imported\nshapes:\n  rancher: {import: both.yaml}\n",
    )
    .unwrap();
    let (code, _, err) = text(&[
        "simulate",
        "--from-cluster",
        dump.to_str().unwrap(),
        scen.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("diskInfo disk 0 has no readable size"),
        "{err}"
    );
}

#[test]
fn an_unreadable_quantity_is_a_note_naming_file_object_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dump = synth::list(&drain_fleet());
    let items = dump["items"].as_array_mut().unwrap();
    let vol = items.iter_mut().find(|o| o["kind"] == "Volume").unwrap();
    vol["spec"]["size"] = Value::String("12Qi".into());
    let name = vol["metadata"]["name"].as_str().unwrap().to_string();
    let vmi = items
        .iter_mut()
        .find(|o| o["kind"] == "VirtualMachineInstance")
        .unwrap();
    vmi["spec"]["domain"]["resources"]["requests"]["memory"] = Value::String("lots".into());
    let path = tmp.path().join("odd.json");
    std::fs::write(&path, dump.to_string()).unwrap();
    let (code, v, err) = simulate(&["--from-cluster", path.to_str().unwrap()]);
    // It fails, as it should: rack-1 holds two of the three control planes.
    assert_eq!(code, 1, "{err}");
    let notes: Vec<&str> = v["live"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let shown = path.display().to_string();
    assert!(
        notes.contains(&format!("{shown}: longhorn-system/{name}: spec.size: `12Qi` is not a byte count; taken as absent").as_str()),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.ends_with(
            "spec.domain.resources.requests.memory: `lots` is not a byte quantity; taken as absent"
        )),
        "{notes:?}"
    );
    assert!(
        notes.contains(&format!("volume {name}: no size; left out").as_str()),
        "{notes:?}"
    );
    assert_eq!(v["volumes"], 2, "the other two volumes are kept");
}

#[test]
fn disks_longhorn_closes_take_no_rebuilt_replica() {
    let tmp = tempfile::tempdir().unwrap();
    let fleet = drain_fleet();
    let run = |dump: &Value| {
        let path = tmp.path().join("disks.json");
        std::fs::write(&path, dump.to_string()).unwrap();
        let (_, v, err) = simulate(&["--from-cluster", path.to_str().unwrap()]);
        assert!(v["headroom"].is_object(), "{err}");
        let node1 = v["headroom"]["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "node hv-001")
            .unwrap()
            .clone();
        (node1["stranded_replicas"].as_u64().unwrap(), v)
    };
    // Losing hv-001 loses one replica of hv-001's volume (its other is on hv-002): it can
    // be rebuilt on hv-003 or hv-004.
    let open = synth::list(&fleet);
    assert_eq!(run(&open).0, 0);
    // With scheduling off on every disk of hv-003 and hv-004, it has nowhere to go.
    let mut closed = open.clone();
    for o in closed["items"].as_array_mut().unwrap() {
        let name = o["metadata"]["name"].as_str().unwrap_or("").to_string();
        if o["apiVersion"] == "longhorn.io/v1beta2"
            && o["kind"] == "Node"
            && (name == "hv-003" || name == "hv-004")
        {
            for d in o["spec"]["disks"].as_object_mut().unwrap().values_mut() {
                d["allowScheduling"] = Value::Bool(false);
            }
        }
    }
    let (stranded, v) = run(&closed);
    assert_eq!(stranded, 1);
    let notes = v["live"]["notes"].to_string();
    assert!(notes.contains("8 disk(s) take no new replica"), "{notes}");
}

#[test]
fn a_node_that_is_not_ready_or_not_vm_schedulable_is_no_migration_target() {
    let tmp = tempfile::tempdir().unwrap();
    for (label, how) in [
        ("NotReady", "is not Ready"),
        ("unschedulable", "has kubevirt.io/schedulable=false"),
    ] {
        let mut dump = synth::list(&drain_fleet());
        for o in dump["items"].as_array_mut().unwrap() {
            if o["kind"] == "Node" && o["apiVersion"] == "v1" && o["metadata"]["name"] == "hv-004" {
                if label == "NotReady" {
                    o["status"]["conditions"][0]["status"] = Value::String("False".into());
                } else {
                    o["metadata"]["labels"]["kubevirt.io/schedulable"] =
                        Value::String("false".into());
                }
            }
        }
        let path = tmp.path().join(format!("{label}.json"));
        std::fs::write(&path, dump.to_string()).unwrap();
        // hv-001's control plane could only go to hv-004 (the others hold its pool).
        let (code, d, err) = simulate(&[
            "--from-cluster",
            path.to_str().unwrap(),
            "--drain",
            "hv-001",
        ]);
        assert_eq!(code, 1, "{label}: {err}");
        assert_eq!(d["can_start"], false, "{label}");
        assert_eq!(d["no_target"], 1, "{label}");
        let (_, v, _) = simulate(&["--from-cluster", path.to_str().unwrap()]);
        assert!(
            v["live"]["notes"]
                .to_string()
                .contains(&format!("node hv-004 {how}")),
            "{label}: {}",
            v["live"]["notes"]
        );
    }
}

/// A dump holding `rackplan operator`'s ClusterRequests: the review lists the expiries
/// already scheduled beside the timeline, soonest first (held requests only; a refused or
/// expired one schedules nothing), in JSON and in text.
#[test]
fn cluster_requests_in_a_dump_show_their_scheduled_expiries() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text =
        std::fs::read_to_string(crate::support::repo().join("simulations/live-fleet.yaml"))
            .unwrap();
    for (name, phase, at) in [
        ("paiement-late", "Ready", "2027-05-01T00:00:00Z"),
        ("paiement-review", "Provisioning", "2027-02-13T09:00:00Z"),
        ("refused-one", "Refused", "2027-01-01T00:00:00Z"),
    ] {
        text.push_str(&format!(
            "- apiVersion: rackplan.io/v1alpha1\n  kind: ClusterRequest\n  metadata: {{name: {name}, namespace: fleet-default}}\n  spec: {{team: paiement, shape: standard, duration: 14d}}\n  status: {{phase: {phase}, expiresAt: \"{at}\", clusterName: {name}}}\n"
        ));
    }
    let dump = tmp.path().join("dump.yaml");
    std::fs::write(&dump, text).unwrap();
    let (code, v, err) = simulate(&["--from-cluster", dump.to_str().unwrap()]);
    assert!(code == 0 || code == 1, "{err}");
    let e = v["scheduled_expiries"]
        .as_array()
        .unwrap_or_else(|| panic!("{v:#}"));
    let got: Vec<(&str, &str, &str)> = e
        .iter()
        .map(|x| {
            (
                x["request"].as_str().unwrap(),
                x["expires_at"].as_str().unwrap(),
                x["month"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "fleet-default/paiement-review",
                "2027-02-13T09:00:00Z",
                "2027-02"
            ),
            (
                "fleet-default/paiement-late",
                "2027-05-01T00:00:00Z",
                "2027-05"
            )
        ]
    );
    crate::output_schemas::assert_valid("simulate", &v);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["simulate", "--from-cluster", dump.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains("Expiries already scheduled"), "{out}");
    assert!(out.contains("fleet-default/paiement-review"), "{out}");
}
