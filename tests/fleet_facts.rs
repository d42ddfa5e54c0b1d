//! Facts the BMC gives beyond the inventory's sizes: firmware levels compared across nodes
//! of one model, and GPUs, including those on an accelerator baseboard the BMC exposes as a
//! system of its own.

use serde_json::{Value, json};

use crate::redfish_mockups::run_discovery;
use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::mockup;

fn discover(specs: Vec<BmcSpec>) -> (tempfile::TempDir, Value, Fleet) {
    let fleet = Fleet::start(specs);
    let dir = tempfile::tempdir().unwrap();
    let mut yaml = String::from("bmcs:\n");
    for b in &fleet.bmcs {
        yaml.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(dir.path().join("bmcs.yaml"), yaml).unwrap();
    let (code, v, stderr) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    (dir, v, fleet)
}

/// Two copies of one capture, one another machine (serial and UUID) on another BIOS
/// version: one drift finding, naming both version groups.
#[test]
fn two_copies_of_one_capture_on_different_bios_are_one_drift_finding() {
    let dell = mockup("dell-poweredge-r750-idrac9-6.00");
    let system = "/redfish/v1/Systems/System.Embedded.1";
    let mut other = BmcSpec::new(&dell);
    other.patches.push((
        system.into(),
        "/SerialNumber".into(),
        json!("CNIVC0014M0999"),
    ));
    other.patches.push((
        system.into(),
        "/UUID".into(),
        json!("4c4c4544-0000-1111-2222-333344445555"),
    ));
    other
        .patches
        .push((system.into(), "/BiosVersion".into(), json!("1.9.0")));
    let (dir, v, _fleet) = discover(vec![BmcSpec::new(&dell), other]);
    let bios: Vec<&Value> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["firmware"]["bios"])
        .collect();
    assert_eq!(bios.len(), 2);
    assert!(bios.contains(&&json!("1.8.2")) && bios.contains(&&json!("1.9.0")));
    // The nodes.yaml discovery wrote, as check reads it.
    let (inv, _) = rackplan::inventory::store::load(&dir.path().join("nodes.yaml")).unwrap();
    let drift = rackplan::plan::drift::drift(&inv, &Default::default());
    assert_eq!(drift.len(), 1, "{drift:#?}");
    assert_eq!(drift[0].node, "site");
    let what = drift[0].what.as_str();
    assert!(
        what.contains("PowerEdge R750: BIOS firmware differs"),
        "{what}"
    );
    assert!(
        what.contains("1.8.2 on 1 node(s): CNIVC0014M0388"),
        "{what}"
    );
    assert!(
        what.contains("1.9.0 on 1 node(s): CNIVC0014M0999"),
        "{what}"
    );
}

/// The DGX H100's eight GPUs sit on the HGX baseboard, a system of its own: they are the
/// host's, with their memory, and a profile can ask for them.
#[test]
fn the_dgx_reports_its_eight_gpus_and_a_profile_can_ask_for_them() {
    let (dir, v, _fleet) = discover(vec![BmcSpec::new(&mockup("nvidia-dgx-h100-ami"))]);
    let nodes = v["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 1, "the baseboard is no node of its own");
    let gpus = nodes[0]["gpus"].as_array().unwrap();
    assert_eq!(gpus.len(), 8, "{gpus:#?}");
    for g in gpus {
        assert_eq!(g["model"], "H100 80GB HBM3");
        // 81,559 MiB of HBM3 per GPU.
        assert_eq!(g["memory_gib"], 79.6);
    }
    assert_eq!(
        nodes[0]["firmware"]["components"]["gpu H100 80GB HBM3"],
        "96.00.89.00.01"
    );
    assert_eq!(nodes[0]["cpu"]["sockets"], 2, "GPUs are never CPUs");
    // Held against a profile.
    let node: rackplan::inventory::Node = serde_json::from_value(nodes[0].clone()).unwrap();
    let mut profile: rackplan::profile::Profile = serde_saphyr::from_str(
        &std::fs::read_to_string(crate::support::repo().join("profiles/compute.yaml")).unwrap(),
    )
    .unwrap();
    let codes = |p: &rackplan::profile::Profile| -> Vec<(String, String)> {
        rackplan::plan::bios::gpu_findings(&node, p)
            .into_iter()
            .map(|f| (f.code.to_string(), f.what))
            .collect()
    };
    assert_eq!(
        codes(&profile),
        [(
            "gpus".to_string(),
            "8 GPU(s): 8 x H100 80GB HBM3 (79.6 GiB)".to_string()
        )]
    );
    profile.gpus = Some(rackplan::profile::GpuSpec {
        count: 8,
        model: Some("h100".into()),
    });
    assert_eq!(codes(&profile).len(), 1, "met");
    profile.gpus = Some(rackplan::profile::GpuSpec {
        count: 4,
        model: Some("A100".into()),
    });
    let c = codes(&profile);
    assert!(
        c.iter().any(|(code, what)| code == "gpus-missing"
            && what == "0 GPU(s) matching `A100`, the compute profile needs 4"),
        "{c:?}"
    );
    // The discovery table says it too.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(["discover", "redfish", "--site"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("GPUs of 1662923610124: 8 x H100 80GB HBM3 (79.6 GiB)"),
        "{text}"
    );
}
