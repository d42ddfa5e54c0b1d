//! The command-line shell: the only code that prints, reads the terminal or starts tokio.
//!
//! `args` is clap's raw view, `config` resolves it per command (flags > site files >
//! defaults, every clamp), `term` owns stdout, progress bars and the runtime, `error` maps
//! every failure to an exit code. Each command file does three things: resolve its config,
//! call one domain function, hand the typed result to `report`.

pub mod admit;
pub mod args;
pub mod boot;
pub mod check;
pub mod config;
pub mod discover;
pub mod docs;
pub mod error;
pub mod init;
pub mod plan;
pub mod render;
pub mod serve;
pub mod simulate;
pub mod ssh;
pub mod status;
pub mod term;

use std::process::ExitCode;

use clap::Parser;

use crate::report;
use args::{Cli, Command, Discover, Output};
use error::Error;

/// What every command needs to know about how to answer.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub json: bool,
    /// How long to wait for the site's write lock.
    pub lock_wait: std::time::Duration,
}

impl Ctx {
    /// The write lock of the site folder `dir`.
    pub fn lock_site(
        &self,
        dir: &std::path::Path,
    ) -> Result<crate::files::sitelock::SiteLock, Error> {
        crate::files::sitelock::SiteLock::acquire(dir, self.lock_wait).map_err(Error::Lock)
    }
}

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
        Command::Check(s) => check::run(s, ctx),
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
        Command::Boot(args) => boot::run(args, ctx),
    }
}
