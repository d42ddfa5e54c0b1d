//! What a newcomer sees in a terminal of 60, 80 and 120 columns (ssh and tmux default to
//! 80): every command's output run in a real pseudo-terminal (util-linux `script`), so the
//! binary takes its terminal path (boxed tables fitted to `COLUMNS`, progress on stderr).
//! No line is wider than the terminal; the renderings are pinned for review.

use std::path::Path;
use std::process::Command;

use crate::support::sushy::{Sushy, mockup};
use crate::support::{Site, repo};

/// A shell word: single-quoted, so paths with spaces or quotes pass whole.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Drop terminal control sequences (colour, cursor, line clearing) and what a progress line
/// drew before it was cleared; carriage returns from the terminal's line discipline too.
fn screen(raw: &str) -> String {
    let mut out = Vec::new();
    for line in raw.split('\n') {
        let line = line.replace('\r', "");
        // Whatever a line drew before its last "clear line" is gone from the screen.
        let line = line.rsplit("\u{1b}[2K").next().unwrap_or("");
        let mut text = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\u{1b}' {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            } else {
                text.push(c);
            }
        }
        out.push(text);
    }
    out.join("\n").trim_end().to_string()
}

/// Run rackplan in a pseudo-terminal `columns` wide; (exit code, what stays on screen).
fn in_terminal(cwd: &Path, columns: u16, args: &[&str]) -> (i32, String) {
    let mut cmd = quote(env!("CARGO_BIN_EXE_rackplan"));
    for a in args {
        cmd.push(' ');
        cmd.push_str(&quote(a));
    }
    let out = Command::new("script")
        .current_dir(cwd)
        .env("COLUMNS", columns.to_string())
        .env("NO_COLOR", "1")
        .env("TERM", "xterm")
        .args(["-qec", &cmd, "/dev/null"])
        .output()
        .expect("util-linux `script` runs");
    let code = out.status.code().unwrap_or(-1);
    (code, screen(&String::from_utf8_lossy(&out.stdout)))
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn assert_fits(what: &str, columns: u16, text: &str) {
    let too_wide: Vec<&str> = text
        .lines()
        .filter(|l| l.chars().count() > usize::from(columns))
        .collect();
    assert!(
        too_wide.is_empty(),
        "{what} at {columns} columns: {too_wide:#?}\n{text}"
    );
}

/// A site with findings whose prose is long (four nodes short of memory).
fn site_with_findings() -> Site {
    let site = Site::example();
    site.edit_inventory(|inv| {
        for n in inv.nodes.iter_mut().take(4) {
            n.memory_gib = Some(256.0);
        }
    });
    site
}

#[test]
fn check_simulate_admit_and_status_fit_the_terminal() {
    let site = site_with_findings();
    let dir = site.dir();
    let dir = dir.to_str().unwrap();
    let scenario = repo().join("simulations/reference-factory.yaml");
    let scenario = scenario.to_str().unwrap();
    let request = site.tmp.path().join("request.yaml");
    std::fs::write(&request, "team: paiement\nshape: standard\ncount: 1\n").unwrap();
    let request = request.to_str().unwrap();
    let tmp = site.tmp.path().display().to_string();
    for columns in [60u16, 80, 120] {
        let (code, check) = in_terminal(site.tmp.path(), columns, &["check", "--site", dir]);
        assert_eq!(code, 1, "{check}");
        assert!(check.contains("error(s)"), "{check}");
        assert_fits("check", columns, &check);
        let (code, sim) = in_terminal(site.tmp.path(), columns, &["simulate", scenario]);
        assert_eq!(code, 0, "{sim}");
        assert!(sim.contains("Verdict: PASS"), "{sim}");
        assert_fits("simulate", columns, &sim);
        let (code, admit) = in_terminal(
            site.tmp.path(),
            columns,
            &["admit", request, scenario, "--at", "2027-03-01"],
        );
        assert_eq!(code, 0, "{admit}");
        assert_fits("admit", columns, &admit);
        let (code, status) = in_terminal(site.tmp.path(), columns, &["status", "--site", dir]);
        assert_eq!(code, 0, "{status}");
        assert!(status.contains("waiting"), "{status}");
        assert_fits("status", columns, &status);
        // 120 columns hold every boxed table as it is; narrower terminals get the compact
        // layouts, which keep every word of the wide one.
        if columns == 120 {
            assert!(check.contains('┆'), "{check}");
        }
        insta::assert_snapshot!(format!("check_at_{columns}"), check.replace(&tmp, "<tmp>"));
        insta::assert_snapshot!(format!("simulate_at_{columns}"), sim);
    }
}

#[test]
fn discovery_fits_the_terminal() {
    let dell = Sushy::start(&mockup("dell-poweredge-r750-idrac9-6.00"), None);
    let lenovo = Sushy::start(&mockup("lenovo-thinksystem-sr670v2-xcc"), None);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bmcs.yaml"),
        format!(
            "bmcs:\n  - address: \"{}\"\n  - address: \"{}\"\n",
            dell.url(),
            lenovo.url()
        ),
    )
    .unwrap();
    let site = dir.path().to_str().unwrap();
    // The first run adds both nodes; the runs after update them: that table is stable.
    let (code, first) = in_terminal(dir.path(), 80, &["discover", "redfish", "--site", site]);
    assert_eq!(code, 0, "{first}");
    for columns in [60u16, 80, 120] {
        let (code, text) = in_terminal(
            dir.path(),
            columns,
            &["discover", "redfish", "--site", site],
        );
        assert_eq!(code, 0, "{text}");
        assert!(text.contains("2 of 2 BMC(s) inventoried"), "{text}");
        assert_fits("discover", columns, &text);
        let text = text
            .replace(&dell.url(), "<dell>")
            .replace(&lenovo.url(), "<lenovo>");
        insta::assert_snapshot!(format!("discover_at_{columns}"), text);
    }
    assert!(widest(&first) <= 80, "{first}");
}
