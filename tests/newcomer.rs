//! A newcomer's first hour, scripted: `init` a site in a folder outside the repository,
//! point bmcs.yaml at real Redfish servers (sushy-static on mockups captured from real
//! BMCs), discover, `init --from` the discovered inventory, then check (0 errors), plan,
//! render and simulate, all from that folder. Every file init wrote and every shipped
//! example validates against the committed schemas.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::reference_docs::violations;
use crate::support::sushy::{Sushy, mockup};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn rackplan(cwd: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env_remove("RACKPLAN_SITE")
        .args(args)
        .output()
        .unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn ok(r: &Run, what: &str) {
    assert_eq!(r.code, 0, "{what}:\n{}\n{}", r.stdout, r.stderr);
}

/// Five BMCs of different vendors and generations with disks and at least three ports (one
/// per network site.yaml defines). The two Dell R750s' drives carry model and serial, so
/// their disks are named from Redfish alone; the others' cannot be without guessing.
const MOCKUPS: [&str; 5] = [
    "dell-poweredge-r750-idrac9-6.00",
    "dell-poweredge-r750-idrac9-7.10-bluefield3",
    "hpe-proliant-xl675d-gen10plus-ilo5-2.70",
    "lenovo-thinksystem-sr670v2-xcc",
    "nvidia-dgx-h100-ami",
];

/// Node ids (system serials) of the Dell R750 captures.
const DELLS: [&str; 2] = ["CNIVC0014M0388", "MXFC40025U031S"];

fn schema_of(rel: &str) -> Option<&'static str> {
    match rel {
        "site.yaml" => Some("site"),
        "bmcs.yaml" => Some("bmcs"),
        "nodes.yaml" => Some("nodes"),
        "scenario.yaml" => Some("scenario"),
        r if r.starts_with("profiles/") => Some("profile"),
        _ => None,
    }
}

fn validate_written(site: &Path) {
    let mut n = 0;
    for rel in [
        "site.yaml",
        "bmcs.yaml",
        "nodes.yaml",
        "scenario.yaml",
        "profiles/management.yaml",
        "profiles/compute.yaml",
        "profiles/witness.yaml",
    ] {
        let p = site.join(rel);
        if !p.exists() {
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let schema = schema_of(rel).unwrap();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .starts_with("# yaml-language-server: $schema="),
            "{rel} has no schema line"
        );
        // The line points at the copy beside the site, which is the committed schema.
        let target = text
            .lines()
            .next()
            .unwrap()
            .split("$schema=")
            .nth(1)
            .unwrap();
        let local = p.parent().unwrap().join(target);
        assert_eq!(
            std::fs::read(&local).unwrap(),
            std::fs::read(
                crate::support::repo().join(format!("docs/schemas/{schema}.schema.json"))
            )
            .unwrap(),
            "{rel} -> {target}"
        );
        assert_eq!(violations(schema, &p), Vec::<String>::new());
        n += 1;
    }
    assert!(n >= 5, "{n}");
}

#[test]
fn from_clone_to_a_site_of_ones_own() {
    let names: Vec<&str> = MOCKUPS
        .iter()
        .copied()
        .filter(|m| mockup(m).join("redfish/v1/index.json").exists())
        .collect();
    assert_eq!(
        names.len(),
        MOCKUPS.len(),
        "mockups missing from the reference folder"
    );
    let bmcs: Vec<Sushy> = names
        .iter()
        .map(|m| Sushy::start(&mockup(m), None))
        .collect();
    let work = tempfile::tempdir().unwrap();
    let cwd = work.path();

    // 1. A fresh site, no inventory yet.
    let r = rackplan(cwd, &["init", "lab"]);
    ok(&r, "init");
    assert!(
        r.stdout.contains("rackplan simulate --site lab"),
        "{}",
        r.stdout
    );
    let site = cwd.join("lab");
    assert!(
        r.stdout.contains(&format!(
            "wrote {}",
            Path::new("lab").join("site.yaml").display()
        )),
        "{}",
        r.stdout
    );
    validate_written(&site);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(site.join("secrets/token"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // 2. The BMCs, as a newcomer writes them.
    let mut text = String::from("bmcs:\n");
    for b in &bmcs {
        text.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    std::fs::write(site.join("bmcs.yaml"), text).unwrap();
    // 3. Discovery, from inside the site folder (the current folder is the default site).
    let r = rackplan(&site, &["discover", "redfish"]);
    ok(&r, "discover");
    // 4. Profiles from the hardware found; site.yaml is kept.
    let site_before = std::fs::read_to_string(site.join("site.yaml")).unwrap();
    let r = rackplan(cwd, &["init", "lab", "--from", "lab/nodes.yaml"]);
    ok(&r, "init --from");
    assert!(r.stdout.contains("kept"), "{}", r.stdout);
    assert!(
        r.stdout.contains("roles: 3 management, 2 compute"),
        "{}",
        r.stdout
    );
    let not_fixable: Vec<&str> = r
        .stdout
        .lines()
        .filter(|l| l.starts_with("not fixable by a profile"))
        .collect();
    assert_eq!(
        std::fs::read_to_string(site.join("site.yaml")).unwrap(),
        site_before
    );
    assert!(
        r.stdout.contains("rackplan discover ssh"),
        "some captures' disks cannot be named from Redfish: {}",
        r.stdout
    );
    // bmcs.yaml was the newcomer's: kept, and it has no schema line now; the rest validate.
    std::fs::write(
        site.join("bmcs.yaml"),
        format!(
            "# yaml-language-server: $schema=schemas/bmcs.schema.json\n{}",
            std::fs::read_to_string(site.join("bmcs.yaml")).unwrap()
        ),
    )
    .unwrap();
    validate_written(&site);
    // 5. check: no device-path error on the Dells; what is left are facts of the captures:
    //    disks other BMCs cannot name (the ambiguity finding says why) and links that are
    //    down, each of the latter listed by init --from as not fixable by a profile.
    let r = rackplan(cwd, &["--output", "json", "check", "--site", "lab"]);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let errors: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    for f in &errors {
        let code = f["code"].as_str().unwrap();
        let node = f["node"].as_str().unwrap();
        match code {
            "disk-path-ambiguous" => {
                assert!(!DELLS.contains(&node), "{f:#}");
                assert!(f["fix"].as_str().unwrap().contains("discover ssh"), "{f:#}");
                // init --from listed it, with its fix.
                assert!(
                    not_fixable.iter().any(|l| l.contains(node)
                        && l.contains(f["what"].as_str().unwrap())
                        && l.contains("discover ssh")),
                    "{f:#}\n{not_fixable:#?}"
                );
            }
            "link-down" => assert!(
                not_fixable
                    .iter()
                    .any(|l| l.contains(node) && l.contains(f["what"].as_str().unwrap())),
                "{f:#}\n{not_fixable:#?}"
            ),
            // Nodes whose links are down meet no profile: a consequence of those facts.
            "management-capable" => assert_eq!(node, "site"),
            _ => panic!("not a fact of the captures: {f:#}"),
        }
    }
    assert!(
        errors.iter().any(|f| f["code"] == "disk-path-ambiguous"),
        "{errors:#?}"
    );
    // What people do about those facts: cable the ports, and for the BMCs that cannot name
    // their disks, let `discover ssh` fill the paths (this hardware has no OS to ask, so the
    // test writes what it would). The Dells' disks are left as Redfish named them.
    let nodes_path = site.join("nodes.yaml");
    let (mut inv, _) = rackplan::inventory::store::load(&nodes_path).unwrap();
    for n in &mut inv.nodes {
        for nic in &mut n.nics {
            nic.link = rackplan::inventory::LinkState::Up;
        }
        for d in &mut n.disks {
            if DELLS.contains(&n.id.as_str()) {
                assert!(d.derived.as_ref().unwrap().path.is_some(), "{d:?}");
                assert!(d.path.is_none());
            } else if d.device_path().is_none() {
                d.path = Some(format!(
                    "/dev/disk/by-id/nvme-test_{}",
                    d.id.replace([' ', ':', '.', '/'], "_")
                ));
            }
        }
    }
    rackplan::inventory::store::save(&nodes_path, &inv).unwrap();
    let r = rackplan(cwd, &["check", "--site", "lab"]);
    ok(&r, "check");
    assert!(r.stdout.contains("0 error(s)"), "{}", r.stdout);
    // 6. plan, render: output beside the site, every path printed.
    ok(&rackplan(cwd, &["plan", "--site", "lab"]), "plan");
    let r = rackplan(cwd, &["render", "--site", "lab"]);
    ok(&r, "render");
    let out = site.join("iso-config");
    assert!(out.join("SUMMARY.md").is_file(), "{}", r.stdout);
    assert!(
        r.stdout.contains(&out.display().to_string()) || r.stdout.contains("lab/iso-config"),
        "{}",
        r.stdout
    );
    assert!(std::fs::read_dir(out.join("nodes")).unwrap().count() == 5);
    // Every config is what the installer reads and accepts; the Dells install on the
    // drives Redfish named, by the names udev gives them.
    let mut dells = 0;
    for e in std::fs::read_dir(out.join("nodes")).unwrap() {
        let path = e.unwrap().path().join("config.yaml");
        let text = std::fs::read_to_string(&path).unwrap();
        let (cfg, _): (rackplan::render::installer::HarvesterConfig, _) =
            rackplan::files::yaml::parse(&path, &text).unwrap();
        assert_eq!(
            rackplan::render::validate::installer_check(&cfg, true),
            Vec::<String>::new(),
            "{}",
            path.display()
        );
        let install = cfg.install.unwrap();
        let device = install.device.unwrap();
        if text.contains(DELLS[0]) || text.contains(DELLS[1]) {
            dells += 1;
            assert!(
                device.starts_with("/dev/disk/by-id/nvme-Dell_Ent_NVMe_"),
                "{device}"
            );
            if let Some(data) = install.data_disk {
                assert!(
                    data.starts_with("/dev/disk/by-id/nvme-Dell_Ent_NVMe_"),
                    "{data}"
                );
                assert_ne!(data, device);
            }
        }
    }
    assert_eq!(dells, 2);
    // 7. simulate the site's own fleet.
    std::fs::write(
        cwd.join("lab-fleet.yaml"),
        "name: lab\nfleet:\n  site: lab\nshapes:\n  small:\n    pools:\n      - {name: cp, count: 3, vcpu: 2, memory_gib: 4, disks_gib: [40], anti_affinity: true}\nclusters:\n  - {shape: small, count: 1}\nanalysis:\n  risk_trials: 200\n  risk_years: 1\n",
    )
    .unwrap();
    let r = rackplan(cwd, &["simulate", "lab-fleet.yaml"]);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("Capacity review: lab\n"), "{}", r.stdout);
    assert!(r.stdout.contains("5 nodes in"), "{}", r.stdout);
    // 8. Or the site's own starter scenario, which init wrote and named in its next steps:
    //    no scenario to write, the fleet is the site's, nothing runs yet.
    let r = rackplan(cwd, &["--output", "json", "simulate", "--site", "lab"]);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["nodes"], 5, "{v:#}");
    assert_eq!(v["clusters"], 0, "{v:#}");
    assert_eq!(v["max_clusters"]["shape"], "standard", "{v:#}");
}

#[cfg(unix)]
fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Under umask 000 the site folder is not world-writable and the secrets are the owner's
/// alone: modes are set, not left to the umask.
#[cfg(unix)]
#[test]
fn init_sets_modes_whatever_the_umask() {
    let work = tempfile::tempdir().unwrap();
    let out = Command::new("sh")
        .current_dir(work.path())
        .env("NO_COLOR", "1")
        .args(["-c", "umask 000; exec \"$0\" init lab"])
        .arg(env!("CARGO_BIN_EXE_rackplan"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let site = work.path().join("lab");
    assert_eq!(mode(&site), 0o755);
    assert_eq!(mode(&site.join("profiles")), 0o755);
    assert_eq!(mode(&site.join("schemas")), 0o755);
    assert_eq!(mode(&site.join("secrets")), 0o700);
    assert_eq!(mode(&site.join("secrets/token")), 0o600);
    assert_eq!(mode(&site.join("secrets/password")), 0o600);
    assert_eq!(mode(&site.join("site.yaml")), 0o644);
    // A secrets folder an earlier run left open is closed again.
    std::fs::set_permissions(
        site.join("secrets"),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    ok(&rackplan(work.path(), &["init", "lab"]), "init again");
    assert_eq!(mode(&site.join("secrets")), 0o700);
}

/// `init --force` keeps a user's .gitignore and adds the lines it lacks; `--help` says so.
#[test]
fn init_force_keeps_the_users_gitignore() {
    let work = tempfile::tempdir().unwrap();
    let site = work.path().join("lab");
    std::fs::create_dir(&site).unwrap();
    std::fs::write(site.join(".gitignore"), "*.swp\nsecrets\n").unwrap();
    ok(&rackplan(work.path(), &["init", "lab", "--force"]), "init");
    let text = std::fs::read_to_string(site.join(".gitignore")).unwrap();
    assert!(text.starts_with("*.swp\nsecrets\n"), "{text}");
    assert!(text.lines().any(|l| l == "iso-config/"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("secrets")).count(),
        1,
        "{text}"
    );
    // Nothing lacking: kept as it is.
    let r = rackplan(work.path(), &["init", "lab", "--force"]);
    ok(&r, "init again");
    assert_eq!(
        std::fs::read_to_string(site.join(".gitignore")).unwrap(),
        text
    );
    assert!(r.stdout.contains(".gitignore (exists)"), "{}", r.stdout);
    let help = rackplan(work.path(), &["init", "--help"]);
    assert!(
        crate::support::flat(&help.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .contains("never .gitignore (the lines it lacks are added"),
        "{}",
        help.stdout
    );
}

/// `init` on a path that is a file says so and what to do, not "cannot lock".
#[test]
fn init_on_a_file_says_it_is_a_file() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("lab"), "x").unwrap();
    let r = rackplan(work.path(), &["init", "lab"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let err = crate::support::flat(&r.stderr);
    assert!(err.contains("lab is a file, not a folder"), "{err}");
    assert!(err.contains("move the file away"), "{err}");
    assert!(!err.contains("cannot lock"), "{err}");
    assert_eq!(std::fs::read(work.path().join("lab")).unwrap(), b"x");
}
