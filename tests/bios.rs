//! BIOS readiness checked end to end: the Intel board's integer settings, and a Dell
//! whose virtualization is off and boot mode legacy.

use serde_json::{Value, json};

use crate::redfish_mockups::run_discovery;
use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::{mockup, write_bmcs};

/// The Intel S2600BPB has VT-x and VT-d switched off as integers with no registry: check
/// says which attributes to look at (warning for VT-x, which Harvester needs; VT-d told),
/// and a profile that asks for passthrough makes VT-d a warning too.
#[test]
fn the_intel_board_yields_the_vtx_and_vtd_findings() {
    let fleet = Fleet::start(vec![BmcSpec::new(&mockup("intel-s2600bpb"))]);
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("lab");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .current_dir(work.path())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["init", "lab"]).status.success());
    write_bmcs(&site, &[fleet.bmcs[0].url()]);
    assert!(
        run(&["discover", "redfish", "--site", "lab"])
            .status
            .success()
    );
    assert!(
        run(&["init", "lab", "--from", "lab/nodes.yaml"])
            .status
            .success()
    );
    let bios = |out: std::process::Output| -> Vec<Value> {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"].as_str().unwrap().starts_with("bios-"))
            .cloned()
            .collect()
    };
    let f = bios(run(&["--output", "json", "check", "--site", "lab"]));
    let vtx = f
        .iter()
        .find(|x| {
            x["what"]
                .as_str()
                .unwrap()
                .contains("ProcessorVmxEnable = 0")
        })
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert_eq!(vtx["severity"], "warning");
    assert!(
        vtx["what"]
            .as_str()
            .unwrap()
            .starts_with("virtualization (VT-x/AMD-V) unknown")
    );
    assert!(vtx["fix"].as_str().unwrap().contains("BIOS setup"));
    let vtd = f
        .iter()
        .find(|x| x["what"].as_str().unwrap().contains("VTdSupport = 0"))
        .unwrap_or_else(|| panic!("{f:#?}"));
    assert_eq!(vtd["severity"], "info");
    // Passthrough asked for: VT-d is a requirement now.
    for role in ["management", "compute"] {
        let p = site.join(format!("profiles/{role}.yaml"));
        if p.exists() {
            let text = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, format!("{text}bios:\n  iommu: true\n")).unwrap();
        }
    }
    let f = bios(run(&["--output", "json", "check", "--site", "lab"]));
    assert!(
        f.iter()
            .any(|x| x["what"].as_str().unwrap().contains("VTdSupport = 0")
                && x["severity"] == "warning"),
        "{f:#?}"
    );
}

/// A BIOS with virtualization off and legacy boot: errors that say which attribute to set
/// to what (the replay server serves the Dell capture with those two values changed).
#[test]
fn bios_settings_that_are_off_say_what_to_set() {
    let mut spec = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    let bios = "/redfish/v1/Systems/System.Embedded.1/Bios";
    spec.patches.push((
        bios.into(),
        "/Attributes/ProcVirtualization".into(),
        json!("Disabled"),
    ));
    spec.patches
        .push((bios.into(), "/Attributes/BootMode".into(), json!("Bios")));
    let fleet = Fleet::start(vec![spec]);
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), &[fleet.bmcs[0].url()]);
    let (code, v, _) = run_discovery(dir.path(), &[]);
    assert_eq!(code, 0);
    let b = &v["nodes"][0]["bios"];
    assert_eq!(b["virtualization"]["state"], "off");
    assert_eq!(b["virtualization"]["set_to"], "Enabled");
    assert_eq!(b["boot_mode"]["state"], "legacy");
    assert_eq!(b["boot_mode"]["set_to"], "Uefi");
    let node: rackplan::inventory::Node = serde_json::from_value(v["nodes"][0].clone()).unwrap();
    let profile: rackplan::profile::Profile = serde_saphyr::from_str(
        &std::fs::read_to_string(crate::support::repo().join("profiles/compute.yaml")).unwrap(),
    )
    .unwrap();
    let f = rackplan::plan::bios::bios_findings(&node, &profile);
    let errors: Vec<String> = f
        .iter()
        .filter(|x| x.severity == rackplan::plan::Severity::Error)
        .map(|x| x.fix.clone())
        .collect();
    assert_eq!(errors.len(), 2, "{f:#?}");
    assert!(
        errors
            .iter()
            .any(|x| x.contains("set BIOS attribute ProcVirtualization to Enabled"))
    );
    assert!(
        errors
            .iter()
            .any(|x| x.contains("set BIOS attribute BootMode to Uefi"))
    );
}
