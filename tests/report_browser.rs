//! The review report opened in a real headless Chromium (Debian's `chromium`, installed by
//! `.ci/run`): no console error, every section and chart present in the rendered page, the
//! verdict sentence and the key figures in its text, and a screenshot 1280 px wide.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{json_of, rackplan_json, repo};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Run Chromium headless on a local file with the flags this machine needs (no network
/// of its own), killed if it takes more than a minute. Returns (stdout, stderr).
fn chromium(profile: &Path, extra: &[String], page: &Path) -> (String, String) {
    chromium_url(profile, extra, &format!("file://{}", page.display()))
}

/// The same on any address (a server of the test on 127.0.0.1).
pub(crate) fn chromium_url(profile: &Path, extra: &[String], url: &str) -> (String, String) {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: .ci/run installs Debian's chromium package"
    );
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("chromium took more than 60 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Console messages Chromium logged for the page (`CONSOLE(line)] "text", source: ...`).
fn console_lines(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// The text of an HTML document, tags dropped and entities undone.
fn visible_text(dom: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in dom.chars() {
        match c {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_review_report_renders_in_chromium_without_errors() {
    let tmp = tempfile::tempdir().unwrap();
    // The console check can fail: a page with an error is caught.
    let bad = tmp.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><html><body><script>console.error('broken chart')</script></body></html>",
    )
    .unwrap();
    let (_, err) = chromium(&tmp.path().join("p0"), &["--dump-dom".to_string()], &bad);
    assert!(
        console_lines(&err)
            .iter()
            .any(|l| l.contains("broken chart")),
        "the console detector sees an error: {err}"
    );

    let report: PathBuf = tmp.path().join("review.html");
    let dump = repo().join("simulations/live-fleet.yaml");
    let scen = repo().join("simulations/live-onboarding.yaml");
    let (code, v, err) = json_of(&mut rackplan_json(&[
        "simulate",
        "--from-cluster",
        dump.to_str().unwrap(),
        scen.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    let (dom, err) = chromium(&tmp.path().join("p1"), &["--dump-dom".to_string()], &report);
    let console = console_lines(&err);
    assert!(console.is_empty(), "console messages: {console:?}");
    for id in [
        "verdict",
        "fix",
        "dump",
        "headroom",
        "capacity",
        "rebuild",
        "risk",
        "warnings",
        "assumptions",
        "chart-headroom-slack",
        "chart-timeline",
        "chart-rebuild-limit",
        "chart-risk-replicas",
    ] {
        assert!(dom.contains(&format!("id=\"{id}\"")), "missing #{id}");
    }
    assert_eq!(dom.matches("<svg").count(), 4, "four charts rendered");
    let text = visible_text(&dom);
    // The verdict sentence, first, as one sentence.
    let verdict = text
        .find("Verdict PASS: onboarding review on the fleet in")
        .expect("the verdict sentence");
    assert!(
        text[verdict..].contains("survives every single node and rack failure"),
        "{text}"
    );
    let hours = format!(
        "full redundancy returns in {:.2} h",
        v["rebuild"]["hours_to_full_redundancy"].as_f64().unwrap()
    );
    assert!(text.contains(&hours), "{hours}");
    let more = v["max_clusters"]["additional"].as_u64().unwrap();
    assert!(
        text.contains(&format!(
            "Max clusters: {more} more standard cluster(s) fit"
        )),
        "{more}"
    );
    let limit = v["rebuild"]["recommended_limit"].as_u64().unwrap();
    assert!(text.contains(&format!(
        "set concurrent-replica-rebuild-per-node-limit to {limit}"
    )));
    assert!(text.contains("storage-over-provisioning-percentage"));

    let shot = tmp.path().join("review.png");
    let (_, err) = chromium(
        &tmp.path().join("p2"),
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,2400".to_string(),
        ],
        &report,
    );
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("{e}: {err}"));
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    assert_eq!(width, 1280);
}

/// Pages of a PDF Chromium printed (its page tree's count).
fn pdf_pages(pdf: &[u8]) -> usize {
    let text = String::from_utf8_lossy(pdf);
    text.match_indices("/Type /Pages")
        .filter_map(|(at, _)| {
            let dict = &text[text[..at].rfind("<<")?..];
            let count = dict.split("/Count ").nth(1)?;
            count
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .max()
        .unwrap_or(0)
}

/// Printed, the review keeps headings with what follows them and rows whole, in fewer
/// pages than the same page without its print rules (the reference factory: 11 pages
/// against 13 on Chromium's default Letter paper).
#[test]
fn the_review_report_prints_in_fewer_pages_with_headings_kept_with_their_text() {
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("review.html");
    let scen = repo().join("simulations/reference-factory.yaml");
    let (code, _, err) = json_of(&mut rackplan_json(&[
        "simulate",
        scen.to_str().unwrap(),
        "--report",
        report.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&report).unwrap();
    for rule in [
        "h2{margin-top:1em;break-after:avoid",
        "tr,th,td,figure,svg,dt,dd{break-inside:avoid",
        "thead{display:table-header-group}",
    ] {
        assert!(html.contains(rule), "the print rules hold {rule}");
    }
    assert!(html.contains("<section id=\"glossary\">"), "a glossary");
    // The same page without its print rules.
    let plain = tmp.path().join("plain.html");
    let start = html.find("@page").expect("print rules");
    let end = html.find("</style>").unwrap();
    std::fs::write(&plain, format!("{}{}", &html[..start], &html[end..])).unwrap();
    let pages = |page: &Path, name: &str| {
        let pdf = tmp.path().join(format!("{name}.pdf"));
        let (_, err) = chromium(
            &tmp.path().join(name),
            &[
                format!("--print-to-pdf={}", pdf.display()),
                "--no-pdf-header-footer".to_string(),
            ],
            page,
        );
        pdf_pages(&std::fs::read(&pdf).unwrap_or_else(|e| panic!("{e}: {err}")))
    };
    let printed = pages(&report, "printed");
    let without = pages(&plain, "without");
    assert!(printed > 0 && without > 0, "{printed} {without}");
    assert!(
        printed < without,
        "printed: {printed} page(s), without print rules: {without}"
    );
}
