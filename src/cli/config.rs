//! Raw arguments to resolved configuration, per command: flags win over the site's files,
//! which win over defaults. Every clamp and cross-check of a flag lives here, so the rest
//! of the program sees only values it can use, and a flag that cannot be used is a clear
//! error naming it (never a panic: `Duration::from_secs_f64(inf)` would be one).
//!
//! These functions do no I/O: the command file loads whatever file they need and passes
//! it in, which keeps every rule here unit-testable.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::args::{BootArgs, RedfishArgs, ServeArgs, SshArgs};
use crate::bootstrap::boot::Action;
use crate::discover::ssh::HostSpec;
use crate::discover::ssh::site_file::SshFile;
use crate::files::yaml::{InputError, Source};
use crate::path;
use crate::redfish::client::Limits;
use crate::site::Site;

/// A flag value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{flag} {value}: {why}")]
pub struct ConfigError {
    pub(crate) flag: &'static str,
    pub(crate) value: String,
    pub(crate) why: String,
}

fn bad(flag: &'static str, value: impl std::fmt::Display, why: impl Into<String>) -> ConfigError {
    ConfigError {
        flag,
        value: value.to_string(),
        why: why.into(),
    }
}

/// Seconds given on the command line, within `min..=max`.
pub fn seconds(
    flag: &'static str,
    value: f64,
    min: f64,
    max: f64,
) -> Result<Duration, ConfigError> {
    if !value.is_finite() {
        return Err(bad(
            flag,
            value,
            format!("give a number of seconds from {min} to {max}"),
        ));
    }
    if value < min || value > max {
        return Err(bad(
            flag,
            value,
            format!("must be from {min} to {max} seconds"),
        ));
    }
    Ok(Duration::from_secs_f64(value))
}

/// A count within `min..=max`.
pub fn count(
    flag: &'static str,
    value: usize,
    min: usize,
    max: usize,
) -> Result<usize, ConfigError> {
    if value < min || value > max {
        return Err(bad(flag, value, format!("must be from {min} to {max}")));
    }
    Ok(value)
}

fn retries(flag: &'static str, value: u32) -> Result<u32, ConfigError> {
    if value > 10 {
        return Err(bad(flag, value, "must be from 0 to 10"));
    }
    Ok(value)
}

/// `discover redfish`, resolved.
#[derive(Debug, Clone)]
pub(crate) struct RedfishConfig {
    pub(crate) site: PathBuf,
    pub(crate) options: crate::discover::redfish::Options,
}

impl RedfishConfig {
    pub(crate) fn resolve(args: &RedfishArgs) -> Result<RedfishConfig, ConfigError> {
        let limits = Limits {
            per_bmc_concurrency: count("--per-bmc", args.per_bmc, 1, 64)?,
            request_timeout: seconds("--request-timeout", args.request_timeout, 0.1, 3600.0)?,
            retries: retries("--retries", args.retries)?,
            ..Limits::default()
        };
        let bmc_timeout = seconds("--bmc-timeout", args.bmc_timeout, 1.0, 86_400.0)?;
        Ok(RedfishConfig {
            site: args.site.site.clone(),
            options: crate::discover::redfish::Options {
                limits,
                bmc_timeout,
                concurrency: count("--concurrency", args.concurrency, 1, 4096)?,
                trust_on_first_use: args.trust_on_first_use,
            },
        })
    }
}

/// Where the host list of `discover ssh` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HostsFrom {
    Flag,
    SshFile,
    /// Nothing named hosts: the planned management addresses of allocations.yaml.
    Lock,
}

/// `discover ssh`, resolved.
#[derive(Debug, Clone)]
pub(crate) struct SshConfig {
    pub(crate) site: PathBuf,
    pub(crate) user: String,
    /// Parsed hosts; empty when they are to come from the lock.
    pub(crate) hosts: Vec<HostSpec>,
    pub(crate) hosts_from: HostsFrom,
    pub(crate) identity: Option<PathBuf>,
    /// Where the identity's passphrase is, when one is given.
    pub(crate) passphrase: Option<crate::files::secrets::SecretRef>,
    /// The ssh-agent socket, unless --no-agent.
    pub(crate) agent: Option<PathBuf>,
    pub(crate) options: crate::discover::ssh::Options,
}

/// Why `discover ssh` cannot run as configured: a bad flag or a bad line in ssh.yaml.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SshConfigError {
    #[error(transparent)]
    Flag(#[from] ConfigError),
    #[error(transparent)]
    File(#[from] Box<InputError>),
}

impl SshConfig {
    /// `file` is the site's ssh.yaml with its source, when there is one.
    pub(crate) fn resolve(
        args: &SshArgs,
        file: Option<&(SshFile, Source)>,
    ) -> Result<SshConfig, SshConfigError> {
        let dir = &args.site.site;
        let conf = file.map(|(f, _)| f);
        let user = args
            .user
            .clone()
            .or_else(|| conf.and_then(|c| c.user.clone()))
            .unwrap_or_else(|| "root".into());
        let mut hosts = Vec::new();
        let hosts_from = if !args.hosts.is_empty() {
            for h in &args.hosts {
                hosts.push(
                    HostSpec::parse(h, &user).map_err(|msg| bad("--hosts", h, msg.to_string()))?,
                );
            }
            HostsFrom::Flag
        } else if let Some((f, src)) = file.filter(|(f, _)| !f.hosts.is_empty()) {
            for (i, h) in f.hosts.iter().enumerate() {
                hosts.push(HostSpec::parse(h, &user).map_err(|msg| {
                    Box::new(src.error_at(
                        &path!["hosts", i],
                        msg.to_string(),
                        Some("write user@host[:port]".into()),
                    ))
                })?);
            }
            HostsFrom::SshFile
        } else {
            HostsFrom::Lock
        };
        let identity = args
            .identity
            .clone()
            .or_else(|| conf.and_then(|c| c.identity.as_ref()).map(|p| dir.join(p)));
        let known_hosts = args
            .known_hosts
            .clone()
            .or_else(|| {
                conf.and_then(|c| c.known_hosts.as_ref())
                    .map(|p| dir.join(p))
            })
            .unwrap_or_else(|| dir.join("known_hosts"));
        let passphrase = match &args.passphrase_file {
            Some(f) => Some(crate::files::secrets::SecretRef {
                env: None,
                file: Some(f.display().to_string()),
            }),
            None => conf.and_then(|c| c.passphrase.clone()).or_else(|| {
                std::env::var_os("RACKPLAN_SSH_PASSPHRASE").map(|_| {
                    crate::files::secrets::SecretRef {
                        env: Some("RACKPLAN_SSH_PASSPHRASE".into()),
                        file: None,
                    }
                })
            }),
        };
        let agent = if args.no_agent {
            None
        } else {
            std::env::var_os("SSH_AUTH_SOCK")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from)
        };
        Ok(SshConfig {
            site: dir.clone(),
            user,
            hosts,
            hosts_from,
            identity,
            passphrase,
            agent,
            options: crate::discover::ssh::Options {
                known_hosts,
                accept_new: args.accept_new || conf.is_some_and(|c| c.accept_new),
                timeout: seconds("--timeout", args.timeout, 0.1, 3600.0)?,
                concurrency: count("--concurrency", args.concurrency, 1, 4096)?,
                retries: retries("--retries", args.retries)?,
            },
        })
    }
}

/// `serve`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServeConfig {
    pub(crate) site: PathBuf,
    pub(crate) listen: SocketAddr,
    /// Where nodes reach this server, without a trailing slash.
    pub(crate) base_url: String,
    pub(crate) artifacts: Option<PathBuf>,
    pub(crate) reinstall: Vec<String>,
}

impl ServeConfig {
    pub(crate) fn resolve(args: &ServeArgs, site: &Site) -> Result<ServeConfig, ConfigError> {
        let listen = match &args.listen {
            Some(l) => l.parse().map_err(|_| {
                bad(
                    "--listen",
                    l,
                    "write address:port, e.g. 0.0.0.0:8080 (port 0 picks one)",
                )
            })?,
            None => site
                .serve
                .as_ref()
                .map_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)), |s| s.listen),
        };
        let base_url = match &args.base_url {
            Some(b) => http_url("--base-url", b)?,
            None => site
                .harvester
                .pxe_base_url
                .trim_end_matches('/')
                .to_string(),
        };
        Ok(ServeConfig {
            site: args.site.site.clone(),
            listen,
            base_url,
            artifacts: args.artifacts.clone(),
            reinstall: args.reinstall.clone(),
        })
    }
}

/// An absolute http(s) URL with a host, no query or fragment, without its trailing slash.
fn http_url(flag: &'static str, raw: &str) -> Result<String, ConfigError> {
    let u = url::Url::parse(raw).map_err(|e| bad(flag, raw, format!("not a URL: {e}")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(bad(
            flag,
            raw,
            "give an http:// or https:// URL with a host",
        ));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(bad(flag, raw, "the base URL takes no query or fragment"));
    }
    if let Some(why) = crate::site::base_url::route_problem(raw) {
        return Err(bad(flag, raw, why));
    }
    if raw.contains(['{', '}', ' ', '"', '\'', '\\']) {
        return Err(bad(
            flag,
            raw,
            "the URL holds characters that cannot go into an iPXE script",
        ));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

/// `boot`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BootConfig {
    pub(crate) site: PathBuf,
    pub(crate) nodes: Vec<String>,
    pub(crate) all: bool,
    pub(crate) execute: bool,
    pub(crate) action: Action,
    pub(crate) iso: String,
    pub(crate) wait: Duration,
    pub(crate) force: bool,
    pub(crate) restart_running: bool,
}

impl BootConfig {
    pub(crate) fn resolve(args: &BootArgs, site: &Site) -> Result<BootConfig, ConfigError> {
        if args.node.is_empty() && !args.all {
            return Err(bad(
                "--node",
                "",
                "name the nodes with --node ID (repeatable) or use --all",
            ));
        }
        let iso = match &args.iso {
            Some(i) => {
                url::Url::parse(i).map_err(|e| bad("--iso", i, format!("not a URL: {e}")))?;
                i.clone()
            }
            None => site.harvester.iso_url.clone(),
        };
        Ok(BootConfig {
            site: args.site.site.clone(),
            nodes: args.node.clone(),
            all: args.all,
            execute: args.yes,
            action: if args.eject {
                Action::Eject
            } else if args.bios {
                Action::Bios
            } else {
                Action::Boot
            },
            iso,
            wait: seconds("--wait", args.wait, 1.0, 86_400.0)?,
            force: args.force,
            restart_running: args.restart_running,
        })
    }
}

/// Why `simulate` or `admit` cannot use its flags as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum StudyFlagError {
    #[error(
        "give a scenario file (simulations/reference-factory.yaml), or --from-cluster PATH for the fleet as it runs (a scenario beside it adds what-ifs)"
    )]
    NoFleet,
    #[error(
        "--site {0}: the site has no scenario.yaml to simulate; `rackplan init {0}` adds the starter one (it keeps every file you edited), or give a scenario file"
    )]
    NoSiteScenario(String),
    #[error("--report {0}: give a file ending in .html or .md")]
    ReportName(String),
    #[error("--rebuild-data `{0}`: give a unit (TiB, TB, GiB, GB, PiB or PB), e.g. 15TiB")]
    SizeUnit(String),
    #[error("--rebuild-data: {0}")]
    Size(crate::profile::SizeError),
    #[error("--rebuild-data `{0}`: give a size above zero")]
    SizeZero(String),
    #[error("--at {0}")]
    At(crate::clock::BadDate),
    #[error("only one of REQUEST and SCENARIO can be `-` (standard input)")]
    TwoStdin,
}

/// The review report's format, from its file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReportFormat {
    Html,
    Markdown,
}

/// `simulate`, resolved: which fleet, which what-if, where the report goes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SimulateConfig {
    pub(crate) scenario: Option<PathBuf>,
    pub(crate) dump: Option<PathBuf>,
    pub(crate) site: Option<PathBuf>,
    /// Node names given to `--drain`, blanks dropped; empty: no drain.
    pub drain: Vec<String>,
    /// `--upgrade`, with `--order`'s node names (blanks dropped; empty: Harvester's order).
    pub upgrade: Option<Vec<String>>,
    pub report: Option<(PathBuf, ReportFormat)>,
    pub plot: Option<PathBuf>,
    /// `--rebuild-data` in TiB, with `--rebuild-node`.
    pub(crate) rebuild: Option<(f64, Option<String>)>,
}

/// What `simulate` was given on its command line.
#[derive(Debug, Clone, Default)]
pub struct SimulateFlags<'a> {
    pub scenario: Option<&'a Path>,
    pub from_cluster: Option<&'a Path>,
    pub drain: &'a [String],
    pub upgrade: bool,
    pub order: &'a [String],
    pub report: Option<&'a Path>,
    pub site: Option<&'a Path>,
    pub plot: Option<&'a Path>,
    pub rebuild_data: Option<&'a str>,
    pub rebuild_node: Option<&'a str>,
    /// `--budget`: seconds after which max clusters answers "at least".
    pub budget: Option<f64>,
}

impl SimulateConfig {
    pub fn resolve(f: &SimulateFlags<'_>) -> Result<SimulateConfig, StudyFlagError> {
        // A site with no scenario given simulates its own starter scenario (`init` writes it).
        let site_scenario = match (f.scenario, f.from_cluster, f.site) {
            (None, None, Some(site)) => {
                let p = site.join(crate::scaffold::STARTER_SCENARIO);
                if !p.is_file() {
                    return Err(StudyFlagError::NoSiteScenario(site.display().to_string()));
                }
                Some(p)
            }
            (None, None, None) => return Err(StudyFlagError::NoFleet),
            _ => None,
        };
        let report = f
            .report
            .map(|p| report_format(p).map(|r| (p.to_path_buf(), r)))
            .transpose()?;
        let rebuild = f
            .rebuild_data
            .map(|d| parse_size_tib(d).map(|t| (t, f.rebuild_node.map(str::to_string))))
            .transpose()?;
        Ok(SimulateConfig {
            scenario: f.scenario.map(Path::to_path_buf).or(site_scenario),
            dump: f.from_cluster.map(Path::to_path_buf),
            site: f.site.map(Path::to_path_buf),
            drain: f
                .drain
                .iter()
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect(),
            upgrade: f.upgrade.then(|| {
                f.order
                    .iter()
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .collect()
            }),
            report,
            plot: f.plot.map(Path::to_path_buf),
            rebuild,
        })
    }
}

/// `admit`, resolved: the moment the request is judged at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AdmitConfig {
    /// Seconds since the epoch.
    pub(crate) at: i64,
}

impl AdmitConfig {
    /// `now` is the current time in seconds since the epoch, used without `--at`.
    pub(crate) fn resolve(
        request: &Path,
        scenario: &Path,
        at: Option<&str>,
        now: i64,
    ) -> Result<AdmitConfig, StudyFlagError> {
        if request == Path::new("-") && scenario == Path::new("-") {
            return Err(StudyFlagError::TwoStdin);
        }
        let at = match at {
            Some(s) => crate::clock::parse_at(s).map_err(StudyFlagError::At)?,
            None => now,
        };
        Ok(AdmitConfig { at })
    }
}

/// The report format from the file name: checked before anything runs.
fn report_format(path: &Path) -> Result<ReportFormat, StudyFlagError> {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" | "htm" => Ok(ReportFormat::Html),
        "md" | "markdown" => Ok(ReportFormat::Markdown),
        _ => Err(StudyFlagError::ReportName(path.display().to_string())),
    }
}

/// `15TiB`, `15 TiB`, `8TB`, `500GiB`, `1.5PiB` -> TiB. The unit is required: a bare
/// number would be bytes to the size parser and is almost surely not meant.
pub(crate) fn parse_size_tib(s: &str) -> Result<f64, StudyFlagError> {
    if !s.trim_end().ends_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(StudyFlagError::SizeUnit(s.to_string()));
    }
    let bytes = crate::profile::ByteSize::parse(s)
        .map_err(StudyFlagError::Size)?
        .0;
    if bytes == 0 {
        return Err(StudyFlagError::SizeZero(s.to_string()));
    }
    Ok(bytes as f64 / 1024f64.powi(4))
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
