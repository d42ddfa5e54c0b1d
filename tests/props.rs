//! Property tests: no input makes rackplan panic. Each suite mutates real files (the
//! example site, the reference scenario) or generates arbitrary values, and asserts "a
//! value or a located error". Case counts are bounded (PROPTEST_CASES overrides them).

use proptest::prelude::*;
use serde_json::Value;

use crate::support::{Site, repo};

fn cases(n: u32) -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(n);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Values that break naive code: NaN, infinities, huge and negative numbers, empty
/// collections, wrong types, control characters.
fn nasty() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(".nan".to_string()),
        Just(".inf".to_string()),
        Just("-.inf".to_string()),
        Just("1e309".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("18446744073709551616".to_string()),
        Just("[]".to_string()),
        Just("{}".to_string()),
        Just("\"\"".to_string()),
        Just("~".to_string()),
        Just("\"a\\nb $x\"".to_string()),
        Just("[1, [2, {a: b}]]".to_string()),
        "[a-z0-9./:-]{0,12}",
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>().prop_map(|f| format!("{f:e}")),
    ]
}

/// Replace the value of the `k`-th `key: value` line (counting from the top) with `v`.
fn mutate(text: &str, k: usize, v: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let idx: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| {
            let t = l.trim_start().trim_start_matches("- ");
            !t.starts_with('#') && t.contains(": ")
        })
        .map(|(i, _)| i)
        .collect();
    if idx.is_empty() {
        return text.to_string();
    }
    let at = idx[k % idx.len()];
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    if let Some((key, _)) = out[at].split_once(": ") {
        out[at] = format!("{key}: {v}");
    }
    out.join("\n") + "\n"
}

fn located(e: &rackplan::files::yaml::InputError) {
    assert!(!e.file.is_empty());
    assert!(!e.message.is_empty());
}

proptest! {
    #![proptest_config(cases(48))]

    #[test]
    fn site_nodes_lock_and_profiles_load_or_fail_located(file in 0usize..4, k in 0usize..400, v in nasty()) {
        let site = Site::example();
        let name = ["site.yaml", "nodes.yaml", "allocations.yaml", "../../profiles/compute.yaml"][file];
        let path = site.dir().join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, mutate(&text, k, &v)).unwrap();
        match rackplan::plan::load_inputs(&site.dir()) {
            Ok(inputs) => {
                // What loads must also check and plan without a panic.
                let _ = rackplan::plan::check::check(&inputs);
                let _ = rackplan::plan::allocate::plan(&inputs, &[]);
            }
            Err(rackplan::plan::LoadError::Input(e)) => located(&e),
            Err(rackplan::plan::LoadError::Missing(m)) => prop_assert!(!m.is_empty()),
        }
    }

    #[test]
    fn scenarios_load_or_fail_located(k in 0usize..200, v in nasty()) {
        let text = std::fs::read_to_string(repo().join("simulations/reference-factory.yaml")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s.yaml");
        let mut t = mutate(&text, k, &v);
        // Keep the runs short: the property is about loading and validation.
        t = t.replace("risk_trials: 10000", "risk_trials: 50");
        std::fs::write(&p, t).unwrap();
        match rackplan::simulate::scenario::load(&p) {
            Ok(l) => {
                if l.scenario.fleet.classes.iter().map(|c| u64::from(c.count)).sum::<u64>() <= 200
                    && l.scenario.analysis.risk_trials <= 200
                    && let Ok(study) = rackplan::simulate::Study::from_file(&p)
                {
                    let _ = rackplan::simulate::questions::review(&study);
                }
            }
            Err(e) => located(&e),
        }
    }

    #[test]
    fn requests_and_rancher_imports_load_or_fail_located_and_judge_quickly(
        rancher in any::<bool>(), k in 0usize..400, v in nasty()
    ) {
        let scenario = repo().join("simulations/reference-factory.yaml");
        let base = if rancher {
            // A Rancher Cluster export with its HarvesterConfigs, labelled with its team.
            std::fs::read_to_string(repo().join("iso-config/example/catalogue/standard.yaml"))
                .unwrap()
                .replace("    rackplan.io/shape: standard\n", "    rackplan.io/shape: standard\n    rackplan.io/team: paiement\n")
        } else {
            "team: paiement\nname: r\npools:\n  - name: cp\n    count: 3\n    vcpu: 4\n    memory_gib: 8\n    disks_gib: [60]\n    anti_affinity: true\ncount: 2\nduration: 72h\n".to_string()
        };
        let text = mutate(&base, k, &v);
        let loaded = rackplan::simulate::scenario::load(&scenario).unwrap();
        match rackplan::simulate::scenario::request_from_text(std::path::Path::new("r.yaml"), &text, &loaded.shapes) {
            Ok(req) => {
                // What loads is within the stated bounds, and is judged in bounded time.
                let vms: u64 = u64::from(req.count) * req.pools.iter().map(|p| u64::from(p.count)).sum::<u64>();
                prop_assert!(vms <= 200_000, "{vms} VMs passed the bounds");
                for p in &req.pools {
                    prop_assert!(p.vcpu.is_finite() && p.vcpu >= 0.0 && p.memory_gib.is_finite() && p.memory_gib >= 0.0);
                }
                if vms <= 2_000 {
                    let study = rackplan::simulate::Study::from_file(&scenario).unwrap();
                    let _ = rackplan::simulate::questions::decide(&study, &req, 1_800_000_000);
                }
            }
            Err(e) => located(&e),
        }
    }

    #[test]
    fn redfish_normalisation_of_arbitrary_json_never_panics(
        system in json(), processors in proptest::collection::vec(json(), 0..3),
        drives in proptest::collection::vec(json(), 0..3), ports in proptest::collection::vec((json(), json()), 0..3),
        managers in proptest::collection::vec(json(), 0..2),
        storages in proptest::collection::vec(json(), 0..2),
        volumes in proptest::collection::vec(json(), 0..2),
        gpu_devices in proptest::collection::vec(json(), 0..2),
        oem_pci_devices in proptest::collection::vec(json(), 0..2),
    ) {
        let raw = rackplan::discover::redfish::crawl::RawSystem {
            system,
            processors,
            memory: None,
            drives,
            storages,
            volumes,
            simple_storage: Vec::new(),
            ethernet: Vec::new(),
            ports: ports.into_iter().map(|(a, p)| (a, p, false)).collect(),
            chassis: Vec::new(),
            managers,
            bios: None,
            bios_registry: None,
            accelerators: Vec::new(),
            accelerator_memory: Vec::new(),
            gpu_devices,
            oem_pci_devices,
            switch_connections: Vec::new(),
        };
        let mut notes = Vec::new();
        let n = rackplan::discover::redfish::normalize::node(&raw, &Value::Null, "http://127.0.0.1:1", "t", &mut notes);
        prop_assert!(!n.id.is_empty());
        let _ = rackplan::plan::check::untrusted_text(&n);
    }
}

/// Arbitrary JSON with Redfish-like keys, so normalisation paths are actually taken.
fn json() -> impl Strategy<Value = Value> {
    let key = prop_oneof![
        Just("SerialNumber"),
        Just("UUID"),
        Just("TotalCores"),
        Just("TotalThreads"),
        Just("ProcessorType"),
        Just("CapacityBytes"),
        Just("Protocol"),
        Just("MediaType"),
        Just("MACAddress"),
        Just("CurrentLinkSpeedMbps"),
        Just("LinkStatus"),
        Just("Status"),
        Just("MemorySummary"),
        Just("TotalSystemMemoryGiB"),
        Just("ProcessorSummary"),
        Just("Count"),
        Just("Model"),
        Just("Id"),
        Just("@odata.id"),
        Just("AssociatedNetworkAddresses"),
        Just("Identifiers"),
        Just("DurableName"),
        Just("DurableNameFormat"),
        Just("Links"),
        Just("Volumes"),
        Just("Drives"),
        Just("RAIDType"),
        Just("StorageControllers"),
        Just("SupportedRAIDTypes"),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        "[ -~\n]{0,20}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key.clone(), inner), 0..6).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn cli_durations_and_counts_never_panic(v in any::<f64>(), n in any::<usize>()) {
        let _ = rackplan::cli::config::seconds("--timeout", v, 0.1, 3600.0);
        let _ = rackplan::cli::config::count("--concurrency", n, 1, 4096);
    }
}

#[test]
fn panicking_flags_from_the_issue_are_clear_errors() {
    let site = Site::example();
    for args in [
        vec![
            "discover",
            "redfish",
            "--site",
            "{site}",
            "--request-timeout",
            "inf",
        ],
        vec![
            "discover",
            "redfish",
            "--site",
            "{site}",
            "--bmc-timeout",
            "1e20",
        ],
        vec![
            "discover",
            "ssh",
            "--site",
            "{site}",
            "--timeout",
            "inf",
            "--hosts",
            "127.0.0.1",
        ],
        vec![
            "boot", "--site", "{site}", "--node", "hv-c01", "--wait", "inf",
        ],
        vec![
            "discover",
            "redfish",
            "--site",
            "{site}",
            "--concurrency",
            "18446744073709551615",
        ],
        vec![
            "serve",
            "--site",
            "{site}",
            "--base-url",
            "http://x/{id}",
            "--listen",
            "127.0.0.1:0",
        ],
        vec!["--wait-lock", "nan", "check", "--site", "{site}"],
    ] {
        let r = site.run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    }
    // A FIFO given as an input file is refused, not read forever.
    let fifo = site.tmp.path().join("fifo.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if made {
        let r = site.run(&["simulate", &fifo.display().to_string()]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(r.stderr.contains("not a regular file"), "{}", r.stderr);
    }
}

#[test]
fn ten_thousand_nodes_round_trip() {
    let site = Site::example();
    let base = site.inventory().nodes[3].clone();
    let mut inv = rackplan::inventory::Inventory::default();
    for i in 0..10_000u32 {
        let mut n = base.clone();
        n.id = format!("SN{i:06}");
        n.serial = Some(n.id.clone());
        for (j, nic) in n.nics.iter_mut().enumerate() {
            let x = i * 8 + j as u32;
            nic.mac = format!(
                "02:{:02x}:{:02x}:{:02x}:{:02x}:00",
                (x >> 24) & 0xff,
                (x >> 16) & 0xff,
                (x >> 8) & 0xff,
                x & 0xff
            );
        }
        inv.nodes.push(n);
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nodes.yaml");
    rackplan::inventory::store::save(&p, &inv).unwrap();
    let (back, _) = rackplan::inventory::store::load(&p).unwrap();
    assert_eq!(back.nodes.len(), 10_000);
    assert_eq!(back.nodes[9_999], inv.nodes[9_999]);
}
