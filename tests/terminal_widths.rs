//! What a newcomer sees in a terminal of 60, 80 and 120 columns (ssh and tmux default to
//! 80): every command's output run in a real pseudo-terminal (util-linux `script`), so the
//! binary takes its terminal path (boxed tables fitted to `COLUMNS`, progress on stderr).
//! No line is wider than the terminal; the renderings are pinned for review.

use std::path::Path;
use std::process::Command;

use crate::support::sushy::{Sushy, mockup, write_bmcs};
use crate::support::{Site, repo};

/// A shell word: single-quoted, so paths with spaces or quotes pass whole.
pub(crate) fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// What stays on a screen `columns` wide after `raw` is written to it: a small terminal
/// emulation (lines wrap at the width, `\r` returns, `ESC[2K` clears the line, other
/// control sequences are dropped), so a progress bar redrawn in place leaves nothing and a
/// line indicatif pads to the width wraps as the terminal wraps it.
pub(crate) fn screen(raw: &str, columns: u16) -> String {
    let width = usize::from(columns);
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let mut col = 0usize;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut seq = String::new();
                    for c in chars.by_ref() {
                        seq.push(c);
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                    if seq == "2K" {
                        lines.last_mut().expect("one line").clear();
                    }
                } else {
                    chars.next();
                }
            }
            '\r' => col = 0,
            '\n' => {
                lines.push(Vec::new());
                col = 0;
            }
            c if c.is_control() => {}
            c => {
                if col == width {
                    lines.push(Vec::new());
                    col = 0;
                }
                let line = lines.last_mut().expect("one line");
                if line.len() <= col {
                    line.resize(col, ' ');
                    line.push(c);
                } else {
                    line[col] = c;
                }
                col += 1;
            }
        }
    }
    let text: Vec<String> = lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .collect();
    text.join("\n").trim_end().to_string()
}

/// Run rackplan in a pseudo-terminal `columns` wide; (exit code, what stays on screen).
pub(crate) fn in_terminal(cwd: &Path, columns: u16, args: &[&str]) -> (i32, String) {
    // The pseudo-terminal gets the size too, as a real one has it (progress bars ask it).
    let mut cmd = format!(
        "stty cols {columns} rows 50 && exec {}",
        quote(env!("CARGO_BIN_EXE_rackplan"))
    );
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
    (code, screen(&String::from_utf8_lossy(&out.stdout), columns))
}

fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

pub(crate) fn assert_fits(what: &str, columns: u16, text: &str) {
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
        assert!(sim.contains("Verdict\n  PASS"), "{sim}");
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
    write_bmcs(dir.path(), &[dell.url(), lenovo.url()]);
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
        // One line per BMC that ended, above the progress bar; they end in either order
        // and take varying time, so the snapshot has them sorted and without the seconds.
        assert_eq!(text.matches("done    ").count(), 2, "{text}");
        let text = text
            .replace(&dell.url(), "<dell>")
            .replace(&lenovo.url(), "<lenovo>");
        let (mut done, rest): (Vec<String>, Vec<String>) = text
            .lines()
            .map(|l| match (l.starts_with("done    "), l.rfind(", ")) {
                (true, Some(i)) => format!("{}, <seconds>", &l[..i]),
                _ => l.to_string(),
            })
            .partition(|l| l.starts_with("done    "));
        done.sort();
        done.extend(rest);
        let text = done.join("\n");
        insta::assert_snapshot!(format!("discover_at_{columns}"), text);
    }
    assert!(widest(&first) <= 80, "{first}");
}
