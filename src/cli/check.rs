//! `rackplan check`: every node against its profile and the site.

use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::cli::args::{CheckArgs, SeverityArg};
use crate::plan::{Finding, Severity};
use crate::{plan, report};

/// `verbose` (`-v`) gives every finding its row, as `--node` does.
pub(crate) fn run(args: &CheckArgs, verbose: bool, ctx: &Ctx) -> Result<u8, Error> {
    let inputs = plan::load_inputs(&args.site.site)?;
    if args.cabling {
        return Ok(cabling(args, &inputs, ctx));
    }
    if args.catalogue {
        return catalogue(&inputs, ctx);
    }
    let mut r = plan::check::check(&inputs);
    // --node: ids or hostnames of the lock; an unknown one is a usage error.
    let mut ids = Vec::new();
    for n in &args.node {
        let id = inputs
            .inventory
            .nodes
            .iter()
            .find(|x| x.id == *n)
            .map(|x| x.id.clone())
            .or_else(|| {
                inputs
                    .lock
                    .nodes
                    .iter()
                    .find(|a| a.hostname == *n)
                    .map(|a| a.id.clone())
            })
            .ok_or_else(|| {
                Error::Usage(format!(
                    "--node {n}: no node with that id or hostname in {}",
                    args.site.site.join("nodes.yaml").display()
                ))
            })?;
        ids.push(id);
    }
    if !ids.is_empty() {
        r.findings.retain(|f| ids.contains(&f.node));
        r.roles.retain(|k, _| ids.contains(k));
    }
    let failing = plan::findings::has_errors(&r.findings);
    let least = match args.severity {
        Some(SeverityArg::Error) => Severity::Error,
        Some(SeverityArg::Info) => Severity::Info,
        None if ctx.json => Severity::Info,
        Some(SeverityArg::Warning) | None => Severity::Warning,
    };
    let shown: Vec<Finding> = r
        .findings
        .iter()
        // Severities order Error < Warning < Info.
        .filter(|f| f.severity <= least)
        .cloned()
        .collect();
    if ctx.json {
        let mut view = r.clone();
        view.findings.clone_from(&shown);
        term::outln(&report::json(&report::check::CheckJson::new(&view)));
    } else {
        let detail = verbose || !args.node.is_empty();
        let mut text = report::check::findings_table_with(&shown, detail);
        if args.severity == Some(SeverityArg::Info) {
            text = text.replace(" (see --output json)", "");
            text.push_str(&notes(&shown));
        }
        term::out(&text);
        term::out(&report::check::node_summary(&r, &shown));
    }
    Ok(if failing { exit::FINDINGS } else { exit::OK })
}

fn notes(findings: &[Finding]) -> String {
    findings
        .iter()
        .filter(|f| f.severity == Severity::Info)
        .map(|f| format!("note {}: {}\n", f.node, f.what))
        .collect()
}

/// `check --cabling`: the cabling table, each switch's ports, and the cabling findings.
fn cabling(args: &CheckArgs, inputs: &plan::Inputs, ctx: &Ctx) -> u8 {
    let mut r = plan::cabling::cabling(inputs);
    if !args.node.is_empty() {
        let keep = |id: &str, host: Option<&str>| {
            args.node
                .iter()
                .any(|n| n == id || Some(n.as_str()) == host)
        };
        r.rows.retain(|x| keep(&x.node, x.hostname.as_deref()));
        r.findings
            .retain(|f| keep(&f.node, None) || r.rows.iter().any(|x| x.node == f.node));
    }
    let failing = plan::findings::has_errors(&r.findings);
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::cabling::table(&r));
    }
    if failing { exit::FINDINGS } else { exit::OK }
}

/// `check --catalogue`: each shape's promises and whether the rendered objects keep them.
fn catalogue(inputs: &plan::Inputs, ctx: &Ctx) -> Result<u8, Error> {
    let r = crate::render::review::catalogue_review(inputs).map_err(|e| match e {
        crate::render::ReviewError::NoCatalogue => Error::Usage(e.to_string()),
        crate::render::ReviewError::Render(r) => r.into(),
    })?;
    if ctx.json {
        term::outln(&report::json(&r));
    } else {
        term::out(&report::catalogue::promises_table(&r));
    }
    Ok(if r.all_kept { exit::OK } else { exit::FINDINGS })
}
