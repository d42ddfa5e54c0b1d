//! A `boot` dry run prints what `boot --yes` then does, line for line: the plan read off
//! each BMC (the replay BMC serving captured Dell and Lenovo BMCs), the gate's refusals, a
//! powered-on host left alone without `--restart-running`, and with `--bios` the settings
//! written, or that there is nothing to do. The run's output is the dry run's, but for
//! the lines saying what was done and the dry run's closing line.

use serde_json::json;

use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::mockup;
use crate::support::{Site, id_of};
use crate::terminal_widths::{assert_fits, in_terminal};

fn point_bmc(site: &Site, hostname: &str, url: &str) {
    let id = id_of(site, hostname);
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.bmc.as_mut().unwrap().address = url.to_string();
    });
}

/// `boot --site DIR <args>` as text (into a pipe): (exit code, stdout).
fn boot(site: &Site, args: &[&str]) -> (i32, String) {
    let mut all = vec!["boot", "--site", "{site}"];
    all.extend(args);
    let r = site.run(&all);
    (r.code, r.stdout)
}

/// The dry run's lines without its closing `dry run:` line.
fn planned(dry: &str) -> Vec<&str> {
    let lines: Vec<&str> = dry.lines().collect();
    assert!(lines.last().unwrap().starts_with("dry run: "), "{dry}");
    lines[..lines.len() - 1].to_vec()
}

/// The run's lines without what was done.
fn without_done(run: &str) -> Vec<&str> {
    run.lines().filter(|l| !l.starts_with("  done: ")).collect()
}

/// Dry run and run with the same arguments: every line of the dry run but its last is a
/// line of the run, in order, and the run adds only what was done. Returns both.
fn dry_then_run(site: &Site, args: &[&str]) -> ((i32, String), (i32, String)) {
    let dry = boot(site, args);
    let mut yes = args.to_vec();
    yes.extend(["--yes", "--wait", "5"]);
    let run = boot(site, &yes);
    assert_eq!(
        planned(&dry.1),
        without_done(&run.1),
        "dry run:\n{}\nrun:\n{}",
        dry.1,
        run.1
    );
    (dry, run)
}

fn writes(fleet: &Fleet, i: usize) -> Vec<String> {
    fleet.bmcs[i]
        .stats
        .log
        .lock()
        .unwrap()
        .iter()
        .filter(|l| {
            !l.starts_with("GET ")
                && !l.starts_with("POST /redfish/v1/SessionService")
                && !l.starts_with("DELETE ")
        })
        .cloned()
        .collect()
}

#[test]
fn a_boot_dry_run_prints_what_yes_does_refusals_included() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let fleet = Fleet::start(vec![
        BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00")),
        BmcSpec::new(&mockup("lenovo-thinksystem-sr670v2-xcc")),
    ]);
    point_bmc(&site, "hv-c01", &fleet.bmcs[0].url());
    point_bmc(&site, "hv-c02", &fleet.bmcs[1].url());
    let nodes = ["--node", "hv-c01", "--node", "hv-c02"];

    // Not rendered: the dry run says the gate refuses both, as the run then does.
    let ((code, dry), (run_code, _)) = dry_then_run(&site, &nodes);
    assert_eq!((code, run_code), (0, 3));
    assert_eq!(
        dry.matches("refused, nothing is sent: not booted: it has no rendered install config")
            .count(),
        2,
        "{dry}"
    );
    assert!(
        dry.contains("--yes carries out the plan of 0 node(s), refuses 2"),
        "{dry}"
    );
    assert!(writes(&fleet, 0).is_empty() && writes(&fleet, 1).is_empty());

    // Rendered, both hosts on: without --restart-running both are left alone.
    assert_eq!(site.run(&["render", "--site", "{site}"]).code, 0);
    let ((_, dry), (run_code, _)) = dry_then_run(&site, &nodes);
    assert_eq!(run_code, 3);
    assert_eq!(
        dry.matches("refused, nothing is sent: the host is powered on")
            .count(),
        2,
        "{dry}"
    );
    assert!(writes(&fleet, 0).is_empty() && writes(&fleet, 1).is_empty());

    // With --restart-running the run sends the plan's requests, one done line each.
    let mut args = nodes.to_vec();
    args.push("--restart-running");
    let ((_, dry), (run_code, run)) = dry_then_run(&site, &args);
    assert_eq!(run_code, 0, "{run}");
    assert!(
        dry.contains("--yes carries out the plan of 2 node(s)\n"),
        "{dry}"
    );
    let steps = dry
        .lines()
        .filter(|l| l.starts_with("  ") && l.as_bytes()[2].is_ascii_digit())
        .count();
    let done = run.lines().filter(|l| l.starts_with("  done: ")).count();
    assert_eq!((steps, done), (8, 8), "{run}");
    assert_eq!(writes(&fleet, 0).len(), 3);
    assert_eq!(writes(&fleet, 1).len(), 3);

    // At 80 columns no line is wider: paths break after a `/`, bodies between fields.
    let (code, screen) = in_terminal(
        site.tmp.path(),
        80,
        &[
            "boot",
            "--site",
            &site.dir().display().to_string(),
            "--node",
            "hv-c01",
            "--restart-running",
        ],
    );
    assert_eq!(code, 0, "{screen}");
    assert_fits("boot", 80, &screen);
    insta::assert_snapshot!(
        "boot_dry_run_at_80",
        screen.replace(&fleet.bmcs[0].url(), "http://<bmc>")
    );
}

#[test]
fn a_bios_dry_run_names_bios_settings_and_says_when_there_is_nothing_to_do() {
    let site = Site::example();
    std::fs::remove_file(site.file("bmcs.yaml")).unwrap();
    let mut off = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-7.10-bluefield3"));
    off.patches.push((
        "/redfish/v1/Systems/System.Embedded.1/Bios".into(),
        "/Attributes/ProcVirtualization".into(),
        json!("Disabled"),
    ));
    let fleet = Fleet::start(vec![
        off,
        BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-7.10-bluefield3")),
    ]);
    point_bmc(&site, "hv-c01", &fleet.bmcs[0].url());
    point_bmc(&site, "hv-c02", &fleet.bmcs[1].url());
    // What discovery recorded: virtualization off on hv-c01, everything as asked on hv-c02.
    let (off_id, on_id) = (id_of(&site, "hv-c01"), id_of(&site, "hv-c02"));
    site.edit_inventory(|inv| {
        let mut v = serde_json::to_value(&*inv).unwrap();
        for n in v["nodes"].as_array_mut().unwrap() {
            let state = if n["id"] == off_id.as_str() {
                ("off", "Disabled")
            } else if n["id"] == on_id.as_str() {
                ("on", "Enabled")
            } else {
                continue;
            };
            n["bios"] = json!({
                "registry_read": true,
                "virtualization": {"state": state.0, "attribute": "ProcVirtualization", "value": state.1, "set_to": "Enabled"},
                "boot_mode": {"state": "uefi", "attribute": "BootMode", "value": "Uefi", "set_to": "Uefi"}
            });
        }
        *inv = serde_json::from_value(v).unwrap();
    });
    let ((code, dry), (run_code, run)) =
        dry_then_run(&site, &["--bios", "--node", "hv-c01", "--node", "hv-c02"]);
    assert_eq!((code, run_code), (0, 0), "{run}");
    assert!(
        dry.contains(", BIOS settings /redfish/v1/Systems/System.Embedded.1/Bios/Settings,"),
        "{dry}"
    );
    assert!(!dry.contains("virtual media"), "{dry}");
    assert_eq!(
        dry.matches(
            "  nothing to do: every BIOS setting the node's profile requires is already as required"
        )
        .count(),
        1,
        "{dry}"
    );
    assert!(
        dry.contains("--yes carries out the plan of 1 node(s), has nothing to do at 1"),
        "{dry}"
    );
    assert!(
        run.contains("  done: ProcVirtualization: pending \"Enabled\""),
        "{run}"
    );
    assert_eq!(writes(&fleet, 0).len(), 1, "one PATCH");
    assert!(writes(&fleet, 1).is_empty(), "nothing to do, nothing sent");
}
