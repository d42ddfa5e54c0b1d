//! The README's quoted outputs stay true: every quoted run (a code block whose first line
//! is `$ rackplan ...`) is run from the repository root and its output compared line by
//! line with the quote, and every figure marked `<!-- figure: ARGS | POINTER -->` is read
//! off `rackplan --output json ARGS` at that JSON pointer and compared at the precision
//! the README prints it with. A figure or an output that drifts fails here, naming the
//! README line, what it says and what the binary says now.
//!
//! In a quote, a line `...` stands for any number of lines and a line ending in ` ...` for
//! any line that starts with what comes before; blank lines are not compared.

use std::collections::HashMap;
use std::process::Command;

use crate::support::repo;

/// A quoted run: the README line of its command, the arguments, the quoted output lines.
struct Quote {
    line: usize,
    args: Vec<String>,
    output: Vec<String>,
}

fn readme() -> String {
    std::fs::read_to_string(repo().join("README.md")).unwrap()
}

/// Every code block (fenced, or indented by four spaces after a blank line) whose first
/// line is `$ rackplan ...`.
fn quotes(text: &str) -> Vec<Quote> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let fenced = lines[i].starts_with("```");
        let indented =
            lines[i].starts_with("    $ rackplan ") && (i == 0 || lines[i - 1].trim().is_empty());
        if fenced {
            let first = lines.get(i + 1).copied().unwrap_or_default();
            let end = (i + 1..lines.len())
                .find(|&j| lines[j].starts_with("```"))
                .unwrap_or(lines.len());
            if let Some(cmd) = first.strip_prefix("$ rackplan ") {
                out.push(Quote {
                    line: i + 2,
                    args: cmd.split_whitespace().map(String::from).collect(),
                    output: lines[i + 2..end].iter().map(|l| (*l).to_string()).collect(),
                });
            }
            i = end + 1;
        } else if indented {
            let end = (i + 1..lines.len())
                .find(|&j| !lines[j].starts_with("    "))
                .unwrap_or(lines.len());
            out.push(Quote {
                line: i + 1,
                args: lines[i]["    $ rackplan ".len()..]
                    .split_whitespace()
                    .map(String::from)
                    .collect(),
                output: lines[i + 1..end]
                    .iter()
                    .map(|l| l[4..].to_string())
                    .collect(),
            });
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

/// The binary's output (stdout, then stderr) as a pipe sees it.
fn run(args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
        .args(args)
        .current_dir(repo())
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether `actual` (blank lines dropped) is what `quoted` says, with its elisions.
fn matches(quoted: &[&str], actual: &[&str]) -> bool {
    let Some((q, rest)) = quoted.split_first() else {
        return actual.is_empty();
    };
    if q.trim() == "..." {
        return (0..=actual.len()).any(|k| matches(rest, &actual[k..]));
    }
    let Some((a, after)) = actual.split_first() else {
        return false;
    };
    let same = match q.strip_suffix(" ...") {
        Some(prefix) => a.starts_with(prefix),
        None => a.trim_end() == q.trim_end(),
    };
    same && matches(rest, after)
}

fn non_blank(s: &[String]) -> Vec<&str> {
    s.iter()
        .map(String::as_str)
        .filter(|l| !l.trim().is_empty())
        .collect()
}

#[test]
fn each_quoted_run_prints_what_the_readme_quotes() {
    let text = readme();
    let quotes = quotes(&text);
    assert!(quotes.len() >= 4, "the README's quoted runs were not found");
    let mut failures = Vec::new();
    for q in &quotes {
        let got = run(&q.args);
        let got_lines: Vec<String> = got.lines().map(String::from).collect();
        if !matches(&non_blank(&q.output), &non_blank(&got_lines)) {
            failures.push(format!(
                "README.md line {}: `rackplan {}` quotes\n{}\nbut prints\n{}",
                q.line,
                q.args.join(" "),
                q.output.join("\n"),
                got
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The figure as the README prints it: `7.5e-10` (significant digits of the mantissa
/// kept), `12.56` or `31,520` (decimals kept).
fn formatted_like(quoted: &str, value: f64) -> String {
    if let Some((mantissa, _)) = quoted.split_once('e') {
        let digits = mantissa.chars().filter(char::is_ascii_digit).count();
        let s = format!("{value:.prec$e}", prec = digits.saturating_sub(1));
        return s;
    }
    let decimals = quoted.split_once('.').map_or(0, |(_, d)| d.len());
    let s = format!("{value:.decimals$}");
    if quoted.contains(',') {
        let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
        let mut grouped = String::new();
        for (k, c) in int.chars().enumerate() {
            if k > 0 && (int.len() - k) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        return if frac.is_empty() {
            grouped
        } else {
            format!("{grouped}.{frac}")
        };
    }
    s
}

/// The number right after the marker (emphasis skipped): `**12.56 h**` -> `12.56`.
fn figure_after(text: &str) -> &str {
    let t = text.trim_start_matches(['*', ' ', '\n']);
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | ',' | 'e' | '-' | '+')))
        .unwrap_or(t.len());
    t[..end].trim_end_matches(['.', ','])
}

#[test]
fn each_marked_figure_is_what_the_binary_says() {
    let text = readme();
    let mut cache: HashMap<String, serde_json::Value> = HashMap::new();
    let mut failures = Vec::new();
    let mut seen = 0;
    for (at, _) in text.match_indices("<!-- figure:") {
        seen += 1;
        let line = text[..at].lines().count();
        let body = &text[at + "<!-- figure:".len()..];
        let end = body.find("-->").expect("an unclosed figure marker");
        let (args, pointer) = body[..end].split_once('|').unwrap_or_else(|| {
            panic!("README.md line {line}: a figure marker needs ARGS | POINTER")
        });
        let (args, pointer) = (args.trim(), pointer.trim());
        let doc = cache.entry(args.to_string()).or_insert_with(|| {
            let mut a = vec!["--output".to_string(), "json".to_string()];
            a.extend(args.split_whitespace().map(String::from));
            let out = Command::new(env!("CARGO_BIN_EXE_rackplan"))
                .args(&a)
                .current_dir(repo())
                .output()
                .unwrap();
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!("README.md line {line}: `rackplan {}`: {e}", a.join(" "))
            })
        });
        let value = doc
            .pointer(pointer)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or_else(|| panic!("README.md line {line}: no number at {pointer} of `rackplan --output json {args}`"));
        let quoted = figure_after(&body[end + 3..]);
        let now = formatted_like(quoted, value);
        if quoted.replace(',', "").parse::<f64>().ok() != now.replace(',', "").parse::<f64>().ok() {
            failures.push(format!(
                "README.md line {line}: says {quoted}, `rackplan --output json {args}` gives {now} at {pointer} ({value})"
            ));
        }
    }
    assert!(seen >= 5, "the README's figure markers were not found");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_matcher_and_the_formats_can_fail() {
    assert!(matches(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches(&["a: ..."], &["a: b c"]));
    assert!(!matches(&["a", "d"], &["a", "b", "d"]));
    assert!(!matches(&["a"], &["a", "b"]));
    assert!(!matches(&["a", "..."], &["b"]));
    assert_eq!(formatted_like("7.5e-10", 2.9337e-8), "2.9e-8");
    assert_eq!(formatted_like("12.56", 12.562_989), "12.56");
    assert_eq!(formatted_like("31,520", 31_520.0), "31,520");
    assert_eq!(figure_after("**12.56 h** on"), "12.56");
    assert_eq!(figure_after(" 2.9e-8 data-loss"), "2.9e-8");
}
