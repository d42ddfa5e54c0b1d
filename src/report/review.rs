//! The capacity review report (`simulate --report`): HTML, one self-contained file with
//! the charts inline as SVG and no external asset, or Markdown with the charts beside it.
//! Both render the review's findings (`report::findings`), headed by the provenance.

use super::escape::html as html_escape;
use super::escape::markdown as md_cell;
use std::fmt::Write as _;

use super::charts::plots;
use super::findings::{self, Block, Findings, glossary};
use crate::simulate::Report;

const CSS: &str = "body{font-family:system-ui,sans-serif;max-width:1180px;margin:2em auto;padding:0 1em;color:#111;line-height:1.45}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}\
#verdict p:first-of-type{font-size:1.25em;font-weight:600;padding:.6em .8em;border-radius:6px}\
.pass #verdict p:first-of-type{background:#e6f4ea;border-left:6px solid #1e8e3e}\
.fail #verdict p:first-of-type{background:#fce8e6;border-left:6px solid #d93025}\
table{border-collapse:collapse;margin:.8em 0;font-size:.92em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}td:nth-child(n+2){font-variant-numeric:tabular-nums}figure{margin:1em 0}svg{max-width:100%;height:auto}\
dt{font-weight:600;margin-top:.5em}dd{margin-left:1.5em}\
@page{margin:15mm}\
@media print{body{max-width:none;margin:0;padding:0;font-size:9.5pt;line-height:1.3}h1{font-size:1.4em;margin:0 0 .4em}\
h2{margin-top:1em;break-after:avoid;page-break-after:avoid}p{orphans:3;widows:3}\
h2+p,h2+table,h2+figure{break-before:avoid;page-break-before:avoid}\
thead{display:table-header-group}tr,th,td,figure,svg,dt,dd{break-inside:avoid;page-break-inside:avoid}dt{break-after:avoid;page-break-after:avoid}\
table{font-size:.8em}th,td{padding:1px 4px}svg{max-height:95mm}}";

/// The report as one self-contained HTML file.
pub(crate) fn html(r: &Report) -> String {
    html_of(&findings::findings(r, provenance_text(r)), &plots(r))
}

/// Findings as one self-contained HTML file, with these charts (file name, SVG) inline.
pub(crate) fn html_of(f: &Findings, charts: &[(&'static str, String)]) -> String {
    let mut s = String::new();
    let class = if f.passes { "pass" } else { "fail" };
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>Capacity review: {}</title>\n<style>{CSS}</style>\n</head>\n<body class=\"{class}\">\n<h1>Capacity review: {}</h1>\n",
        html_escape(&f.scenario),
        html_escape(&f.scenario)
    );
    if let Some(p) = &f.provenance {
        let _ = writeln!(s, "<p class=\"provenance\">{}</p>", html_escape(p));
    }
    for sec in &f.sections {
        let _ = writeln!(
            s,
            "<section id=\"{}\">\n<h2>{}</h2>",
            sec.id,
            html_escape(&sec.heading)
        );
        for b in &sec.blocks {
            match b {
                Block::Text(t) => {
                    let _ = writeln!(s, "<p>{}</p>", html_escape(t));
                }
                Block::Table(t) => {
                    s.push_str("<table>\n<thead><tr>");
                    for h in &t.head {
                        let _ = write!(s, "<th>{}</th>", html_escape(h));
                    }
                    s.push_str("</tr></thead>\n<tbody>\n");
                    for row in &t.rows {
                        s.push_str("<tr>");
                        for c in row {
                            let _ = write!(s, "<td>{}</td>", html_escape(c));
                        }
                        s.push_str("</tr>\n");
                    }
                    s.push_str("</tbody>\n</table>\n");
                }
                Block::Chart(name) => {
                    if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                        let _ = writeln!(
                            s,
                            "<figure id=\"chart-{}\">\n{}</figure>",
                            name.trim_end_matches(".svg"),
                            svg
                        );
                    }
                }
            }
        }
        s.push_str("</section>\n");
    }
    let terms = glossary(f);
    if !terms.is_empty() {
        s.push_str("<section id=\"glossary\">\n<h2>Glossary</h2>\n<dl>\n");
        for t in terms {
            let _ = writeln!(
                s,
                "<dt>{}</dt><dd>{}</dd>",
                html_escape(t.name),
                html_escape(t.means)
            );
        }
        s.push_str("</dl>\n</section>\n");
    }
    s.push_str("<footer><p>Written by rackplan simulate. Every figure is a simulation of the model named beside it.</p></footer>\n</body>\n</html>\n");
    s
}

/// The report as Markdown, and the charts it links to as (file name, SVG), each named
/// `<stem>-<chart>.svg` to sit beside it.
pub(crate) fn markdown(r: &Report, stem: &str) -> (String, Vec<(String, String)>) {
    markdown_of(&findings::findings(r, provenance_text(r)), &plots(r), stem)
}

/// Findings as Markdown, linking to these charts as `<stem>-<chart>.svg`.
pub(crate) fn markdown_of(
    f: &Findings,
    charts: &[(&'static str, String)],
    stem: &str,
) -> (String, Vec<(String, String)>) {
    let mut files = Vec::new();
    let mut s = format!("# Capacity review: {}\n\n", md_cell(&f.scenario));
    if let Some(p) = &f.provenance {
        let _ = writeln!(s, "_{}_\n", md_cell(p));
    }
    let line = |cells: &[String]| {
        format!(
            "| {} |",
            cells
                .iter()
                .map(|c| md_cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )
    };
    for sec in &f.sections {
        let _ = writeln!(s, "## {}\n", md_cell(&sec.heading));
        for b in &sec.blocks {
            match b {
                Block::Text(t) => {
                    let _ = writeln!(s, "{}\n", md_cell(t));
                }
                Block::Table(t) => {
                    let _ = writeln!(s, "{}", line(&t.head));
                    let _ = writeln!(s, "|{}", " --- |".repeat(t.head.len()));
                    for row in &t.rows {
                        let _ = writeln!(s, "{}", line(row));
                    }
                    s.push('\n');
                }
                Block::Chart(name) => {
                    if let Some((_, svg)) = charts.iter().find(|(n, _)| n == name) {
                        let file = format!("{stem}-{name}");
                        let _ = writeln!(s, "![{}]({file})\n", name.trim_end_matches(".svg"));
                        files.push((file, svg.clone()));
                    }
                }
            }
        }
    }
    let terms = glossary(f);
    if !terms.is_empty() {
        s.push_str("## Glossary\n\n");
        for t in terms {
            let _ = writeln!(s, "- **{}**: {}", md_cell(t.name), md_cell(t.means));
        }
    }
    (s, files)
}

/// "Generated 2026-12-01T10:00:00Z by rackplan 0.1.0 from scenario s.yaml (modified …,
/// sha256 …)": which state the report describes.
fn provenance_text(r: &Report) -> Option<String> {
    let p = r.provenance.as_ref()?;
    let inputs: Vec<String> = p
        .inputs
        .iter()
        .map(|i| {
            let mut facts = Vec::new();
            if let Some(m) = &i.modified {
                facts.push(format!("modified {m}"));
            }
            if let Some(h) = &i.sha256 {
                facts.push(format!("sha256 {h}"));
            }
            if let Some(t) = &i.newest_object {
                facts.push(format!("newest object {t}"));
            }
            if facts.is_empty() {
                format!("{} {}", i.role, i.path)
            } else {
                format!("{} {} ({})", i.role, i.path, facts.join(", "))
            }
        })
        .collect();
    Some(format!(
        "Generated {} by rackplan {}{}.",
        p.generated_at,
        p.rackplan,
        if inputs.is_empty() {
            String::new()
        } else {
            format!(" from {}", inputs.join("; "))
        }
    ))
}
