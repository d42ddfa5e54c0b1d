//! The shell's entry: parse the arguments, set up the terminal, logging and the context,
//! run the command and map its outcome to an exit code.

use super::{
    admit, boot, check, config, discover, docs, error, init, operator, plan, portal, render, serve,
    simulate, ssh, status, term,
};
use std::process::ExitCode;

use clap::Parser;

use super::args::{Cli, Command, Discover, Output};
use super::ctx::Ctx;
use super::error::Error;
use crate::report;

/// Parse arguments, run, print, and return the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let color = term::use_color(cli.color);
    term::install_error_hook(color);
    term::init_logging(cli.quiet, cli.verbose, color);
    term::fit_tables_to_terminal();
    term::wrap_prose(cli.output == Output::Table);
    term::set_quiet(cli.quiet);
    tracing::debug!(command = ?cli.command, "start");
    let lock_wait = match config::seconds("--wait-lock", cli.wait_lock, 0.0, 86_400.0) {
        Ok(d) => d,
        Err(e) => {
            term::errln(&format!("error: {e}"));
            return ExitCode::from(error::exit::INPUT);
        }
    };
    let ctx = Ctx {
        json: cli.output == Output::Json,
        lock_wait,
    };
    match run(&cli, &ctx) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = e.exit_code();
            let findings = match &e {
                Error::Findings(_, f) => Some(f.as_slice()),
                _ => None,
            };
            if ctx.json {
                term::outln(&report::json(&report::error::ErrorJson {
                    error: e.to_string(),
                    exit_code: code,
                    findings,
                }));
            }
            if let Some(f) = findings {
                let _ = std::io::Write::write_all(
                    &mut std::io::stderr(),
                    report::check::findings_table(f).as_bytes(),
                );
            }
            term::errln(&format!("{:?}", miette::Report::new(e)));
            ExitCode::from(code)
        }
    }
}

/// Dispatch one parsed command line.
pub fn run(cli: &Cli, ctx: &Ctx) -> Result<u8, Error> {
    match &cli.command {
        Command::Init {
            dir,
            from,
            name,
            force,
        } => init::run(dir, from.as_ref(), name.as_deref(), *force, ctx),
        Command::Check(s) => check::run(s, cli.verbose > 0, ctx),
        Command::Plan {
            site,
            release,
            dry_run,
        } => plan::run(&site.site, release, *dry_run, ctx),
        Command::Render { site, out } => render::run(&site.site, out.as_ref(), ctx),
        Command::Discover(Discover::Redfish(args)) => discover::run(args, ctx),
        Command::Discover(Discover::Ssh(args)) => ssh::run(args, ctx),
        Command::Simulate {
            scenario,
            from_cluster,
            drain,
            upgrade,
            order,
            report,
            site,
            plot,
            rebuild_data,
            rebuild_node,
            budget,
        } => simulate::run(
            &config::SimulateFlags {
                scenario: scenario.as_deref(),
                from_cluster: from_cluster.as_deref(),
                drain,
                upgrade: *upgrade,
                order,
                report: report.as_deref(),
                site: site.as_deref(),
                plot: plot.as_deref(),
                rebuild_data: rebuild_data.as_deref(),
                rebuild_node: rebuild_node.as_deref(),
                budget: *budget,
            },
            ctx,
        ),
        Command::Admit {
            request,
            scenario,
            site,
            from_cluster,
            at,
        } => admit::run(
            request,
            scenario,
            admit::Fleet {
                site: site.as_ref(),
                dump: from_cluster.as_deref(),
            },
            at.as_deref(),
            ctx,
        ),
        Command::Docs { out, check } => docs::run(out, *check, ctx.json),
        Command::Completions { shell } => Ok(docs::completions(*shell)),
        Command::Status {
            site,
            url,
            watch,
            interval,
            count,
        } => status::run(&site.site, url.as_deref(), *watch, *interval, *count, ctx),
        Command::Serve(args) => serve::run(args, ctx),
        Command::Operator(args) => operator::run(args, ctx),
        Command::Portal(args) => portal::run(args, ctx),
        Command::Boot(args) => boot::run(args, ctx),
    }
}
