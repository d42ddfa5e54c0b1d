//! `$expand`: the same nodes.yaml whether a BMC expands, refuses, ignores or does not
//! advertise it, with fewer requests where it expands.

use crate::redfish_mockups::run_discovery;
use crate::support::replay::{BmcSpec, Fault, Fleet, ReplayBmc};
use crate::support::sushy::{Sushy, mockup, mockup_names, write_bmcs};

/// How a replay BMC treats `$expand`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// As the capture's ServiceRoot advertises it (DSP0266).
    Honoured,
    /// Advertised, answered with 400.
    Refused,
    /// Advertised, the query discarded: plain documents come back.
    Ignored,
    /// Not advertised (the ServiceRoot's `ExpandQuery` removed).
    Unadvertised,
}

/// Discovery of every mockup, one replay BMC each, in `mode`: nodes.yaml with each BMC's
/// address replaced by its mockup's name, and the requests per BMC.
fn discover(mode: Mode) -> (String, Vec<u64>) {
    let names = mockup_names();
    let specs: Vec<BmcSpec> = names
        .iter()
        .map(|n| {
            let mut s = BmcSpec::new(&mockup(n));
            s.expand = mode == Mode::Honoured;
            s.ignore_query = mode == Mode::Ignored;
            if mode == Mode::Unadvertised {
                s.patches.push((
                    "/redfish/v1".into(),
                    "/ProtocolFeaturesSupported/ExpandQuery".into(),
                    serde_json::Value::Null,
                ));
            }
            s
        })
        .collect();
    let fleet = Fleet::start(specs);
    let urls: Vec<String> = fleet.bmcs.iter().map(ReplayBmc::url).collect();
    let (text, requests) = nodes_yaml(&urls, &names);
    let log = |i: usize| fleet.bmcs[i].stats.log.lock().unwrap().clone();
    let asked = (0..names.len())
        .flat_map(log)
        .filter(|l| l.contains("$expand"))
        .count();
    if mode == Mode::Honoured {
        // Never deeper than the BMC's MaxLevels.
        for (i, n) in names.iter().enumerate() {
            let root: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(mockup(n).join("redfish/v1/index.json")).unwrap(),
            )
            .unwrap();
            let max = root
                .pointer("/ProtocolFeaturesSupported/ExpandQuery/MaxLevels")
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(1);
            for l in log(i) {
                if let Some((_, rest)) = l.split_once("$levels=") {
                    let levels: u64 = rest[..rest.find(')').unwrap()].parse().unwrap();
                    assert!(levels <= max, "{n}: {l} past MaxLevels {max}");
                }
            }
        }
    }
    match mode {
        Mode::Honoured | Mode::Ignored => assert!(asked > 0, "{mode:?}: no $expand asked"),
        Mode::Refused => assert_eq!(asked, 9, "one refused request per advertising BMC"),
        Mode::Unadvertised => assert_eq!(asked, 0),
    }
    (text, requests)
}

fn nodes_yaml(urls: &[String], names: &[String]) -> (String, Vec<u64>) {
    let (text, v) = nodes_yaml_with(urls, names, &["--request-timeout", "5"]);
    let requests = v["bmcs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["requests"].as_u64().unwrap())
        .collect();
    (text, requests)
}

/// nodes.yaml (addresses and times masked) and the run's JSON.
fn nodes_yaml_with(
    urls: &[String],
    names: &[String],
    args: &[&str],
) -> (String, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    write_bmcs(dir.path(), urls);
    let (code, v, _) = run_discovery(dir.path(), args);
    assert!(code == 0 || code == 3, "{v:#}");
    let mut text = std::fs::read_to_string(dir.path().join("nodes.yaml")).unwrap();
    for (u, n) in urls.iter().zip(names) {
        text = text.replace(u.as_str(), &format!("bmc-{n}"));
        let hostport = u.split("://").nth(1).unwrap();
        text = text.replace(hostport, &format!("bmc-{n}"));
    }
    (without_times(&text), v)
}

/// `text` with each RFC 3339 time (`2026-12-05T13:20:44Z`: when a fact was seen) masked.
fn without_times(text: &str) -> String {
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let fits = b.len() - i >= shape.len()
            && shape.iter().zip(&b[i..]).all(|(s, c)| match s {
                b'd' => c.is_ascii_digit(),
                s => s == c,
            });
        if fits {
            out.push_str("<time>");
            i += shape.len();
        } else {
            let c = text[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

#[test]
fn nodes_are_the_same_however_a_bmc_treats_expand() {
    let (honoured, with) = discover(Mode::Honoured);
    let (refused, without) = discover(Mode::Refused);
    let (ignored, ignoring) = discover(Mode::Ignored);
    let (unadvertised, plain) = discover(Mode::Unadvertised);
    // sushy-tools (2.2.0) has no `$expand`: sushy-static answers any query with 404.
    let names = mockup_names();
    let sushy: Vec<Sushy> = names
        .iter()
        .map(|n| Sushy::start(&mockup(n), None))
        .collect();
    let urls: Vec<String> = sushy.iter().map(Sushy::url).collect();
    let (on_sushy, _) = nodes_yaml(&urls, &names);
    drop(sushy);
    assert!(honoured.contains("serial"), "{honoured}");
    for (mode, text) in [
        ("refused", &refused),
        ("ignored", &ignored),
        ("not advertised", &unadvertised),
        ("sushy-static", &on_sushy),
    ] {
        if *text != honoured {
            let a = tempfile::NamedTempFile::new().unwrap();
            let b = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(a.path(), &honoured).unwrap();
            std::fs::write(b.path(), text).unwrap();
            let diff = std::process::Command::new("diff")
                .arg(a.path())
                .arg(b.path())
                .output()
                .unwrap();
            panic!(
                "expanded vs {mode}:\n{}",
                String::from_utf8_lossy(&diff.stdout)
            );
        }
    }
    // Fewer requests on every BMC that expands, never more; the others unchanged.
    for (i, name) in mockup_names().iter().enumerate() {
        eprintln!(
            "{name}: {} requests expanded, {} refused, {} ignored, {} not advertised",
            with[i], without[i], ignoring[i], plain[i]
        );
        assert!(with[i] <= plain[i], "{name}");
        // A refusal or an unexpanded answer costs one request, once.
        assert!(
            without[i] <= plain[i] + 1 && ignoring[i] <= plain[i] + 1,
            "{name}"
        );
    }
    let (a, b): (u64, u64) = (with.iter().sum(), plain.iter().sum());
    assert!(a * 10 <= b * 5, "expanded {a} requests, plain {b}");
}

#[test]
fn an_expanded_answer_that_fails_is_read_the_plain_way() {
    let name = "dell-poweredge-r750-idrac9-6.00".to_string();
    let names = std::slice::from_ref(&name);
    let args = ["--request-timeout", "2", "--retries", "0"];
    let plain = Fleet::start(vec![BmcSpec::new(&mockup(&name))]);
    let (expected, _) = nodes_yaml_with(&[plain.bmcs[0].url()], names, &args);
    drop(plain);
    for (fault, note) in [
        (Fault::Oversized, Some("response larger than")),
        (Fault::Hang, Some("no answer within")),
        // Not JSON: a refusal, nothing to say.
        (Fault::Malformed, None),
    ] {
        let mut s = BmcSpec::new(&mockup(&name));
        s.expand = true;
        s.fault = fault;
        s.fault_expanded = true;
        let fleet = Fleet::start(vec![s]);
        let (text, v) = nodes_yaml_with(&[fleet.bmcs[0].url()], names, &args);
        assert_eq!(text, expected, "{fault:?}");
        let log = fleet.bmcs[0].stats.log.lock().unwrap().clone();
        let asked = log.iter().filter(|l| l.contains("$expand")).count();
        assert_eq!(asked, 1, "{fault:?}: asked once, then no more: {log:#?}");
        let notes = v["bmcs"][0]["notes"].to_string();
        if let Some(words) = note {
            assert!(
                notes.contains(words) && notes.contains("when asked expanded"),
                "{fault:?}: {notes}"
            );
        }
    }
}
