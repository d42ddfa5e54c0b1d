//! Command dispatch: arguments in, files and reports out, an exit code back.

pub mod args;
pub mod boot;
pub mod discover;
pub mod error;
pub mod serve;
pub mod simulate;

use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;

use clap::Parser;

use crate::cli::args::{Cli, Command, Discover, Output};
use crate::cli::error::{Error, exit};
use crate::inventory::store;
use crate::plan::{self, Inputs, Lock};
use crate::profile::Profiles;
use crate::{render, report, site};

/// Parse arguments, run, print, and return the process exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    install_error_hook();
    match run(&cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            let code = e.exit_code();
            if cli.output == Output::Json {
                let body = serde_json::json!({
                    "error": e.to_string(),
                    "exit_code": code,
                    "findings": match &e { Error::Findings(_, f) => serde_json::to_value(f).ok(), _ => None },
                });
                println!("{}", report::json(&body));
            }
            if let Error::Findings(_, f) = &e {
                eprint!("{}", report::findings_table(f));
            }
            eprintln!("{:?}", miette::Report::new(e));
            ExitCode::from(code)
        }
    }
}

/// Plain, uncoloured diagnostics when stderr is not a terminal, so logs and tests read
/// the same everywhere.
fn install_error_hook() {
    let plain = !std::io::stderr().is_terminal() || std::env::var_os("NO_COLOR").is_some();
    let _ = miette::set_hook(Box::new(move |_| {
        let theme = if plain {
            miette::GraphicalTheme::unicode_nocolor()
        } else {
            miette::GraphicalTheme::default()
        };
        Box::new(miette::GraphicalReportHandler::new_themed(theme).with_width(100))
    }));
}

/// Load everything check/plan/render read.
pub fn load_inputs(dir: &Path) -> Result<Inputs, Error> {
    let site = site::load(dir)?;
    let profiles = Profiles::load_dir(&site.profiles_dir())?;
    let nodes_path = site.file("nodes.yaml");
    if !nodes_path.exists() {
        return Err(Error::Usage(format!(
            "{} does not exist: run `rackplan discover redfish --site {}` (or write it by hand)",
            nodes_path.display(),
            dir.display()
        )));
    }
    let (inventory, inventory_source) = store::load(&nodes_path)?;
    let (lock, _) = Lock::load(&site.file("allocations.yaml"))?;
    Ok(Inputs {
        site,
        profiles,
        inventory,
        inventory_source,
        lock,
    })
}

pub fn run(cli: &Cli) -> Result<u8, Error> {
    let json = cli.output == Output::Json;
    match &cli.command {
        Command::Check(s) => {
            let inputs = load_inputs(&s.site)?;
            let r = plan::check::check(&inputs);
            let ok = !plan::findings::has_errors(&r.findings);
            if json {
                let errors = r
                    .findings
                    .iter()
                    .filter(|f| f.severity == plan::Severity::Error)
                    .count();
                let warnings = r
                    .findings
                    .iter()
                    .filter(|f| f.severity == plan::Severity::Warning)
                    .count();
                println!(
                    "{}",
                    report::json(&report::CheckJson {
                        ok,
                        errors,
                        warnings,
                        roles: &r.roles,
                        findings: &r.findings
                    })
                );
            } else {
                print!("{}", report::findings_table(&r.findings));
            }
            Ok(if ok { exit::OK } else { exit::FINDINGS })
        }
        Command::Plan {
            site,
            release,
            dry_run,
        } => {
            let inputs = load_inputs(&site.site)?;
            let outcome = plan::lock::plan(&inputs, release)?;
            if !dry_run {
                outcome.lock.save(&inputs.site.file("allocations.yaml"))?;
            }
            if json {
                println!("{}", report::json(&outcome));
            } else {
                print!("{}", report::plan_table(&outcome));
                if *dry_run {
                    println!("dry run: allocations.yaml not written");
                }
            }
            Ok(exit::OK)
        }
        Command::Render { site, out } => {
            let inputs = load_inputs(&site.site)?;
            let files = render::build(&inputs)?;
            let out_dir = out
                .clone()
                .unwrap_or_else(|| render::default_out_dir(&site.site, &inputs.site.site.name.0));
            let outcome = render::write(&out_dir, files)?;
            if json {
                println!("{}", report::json(&outcome));
            } else {
                print!("{}", report::render_table(&outcome));
            }
            Ok(exit::OK)
        }
        Command::Discover(Discover::Redfish(args)) => crate::cli::discover::run(args, json),
        Command::Discover(Discover::Ssh(args)) => crate::cli::discover::run_ssh(args, json),
        Command::Simulate {
            scenario,
            site,
            plot,
        } => crate::cli::simulate::run(scenario, site.as_ref(), plot.as_ref(), json),
        Command::Serve(args) => crate::cli::serve::run(args),
        Command::Boot(args) => crate::cli::boot::run(args, json),
    }
}

/// The async runtime for commands that talk to the network.
pub fn runtime() -> Result<tokio::runtime::Runtime, Error> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Usage(format!("cannot start the async runtime: {e}")))
}

/// A progress bar on a terminal (hidden for JSON output or when stderr is piped).
pub fn progress(len: usize, what: &str, json: bool) -> indicatif::ProgressBar {
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let b = indicatif::ProgressBar::new(len as u64);
    b.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{{spinner}} {what} {{pos}}/{{len}} [{{bar:30}}] {{elapsed_precise}} {{msg}}"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    b
}
