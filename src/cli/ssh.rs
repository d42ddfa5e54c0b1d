//! `rackplan discover ssh`: probe hosts over SSH and merge what the OS sees into nodes.yaml.

use std::sync::Arc;

use super::config::{HostsFrom, SshConfig, SshConfigError};
use super::ctx::Ctx;
use super::error::{Error, exit};
use super::term;
use crate::cli::args::SshArgs;
use crate::discover::ssh::{self, HostSpec, fold, site_file};
use crate::inventory::{store, utc_now};
use crate::{plan, report};

pub(crate) fn run(args: &SshArgs, ctx: &Ctx) -> Result<u8, Error> {
    let file = site_file::load(&args.site.site)?;
    let mut cfg = SshConfig::resolve(args, file.as_ref()).map_err(|e| match e {
        SshConfigError::Flag(f) => Error::from(f),
        SshConfigError::File(i) => Error::Input(i),
    })?;
    let dir = cfg.site.clone();
    if cfg.hosts_from == HostsFrom::Lock {
        let (lock, _) = plan::Lock::load(&dir.join("allocations.yaml"))?;
        cfg.hosts = HostSpec::from_lock(&lock, &cfg.user);
    }
    if cfg.hosts.is_empty() {
        return Err(Error::Usage(
            "no host to probe: give --hosts, a `hosts` list in ssh.yaml, or run `rackplan plan` first".into(),
        ));
    }
    if cfg.identity.is_none() && cfg.agent.is_none() {
        return Err(Error::Usage(
            "no SSH key: start ssh-agent and `ssh-add` your key (SSH_AUTH_SOCK), or give --identity FILE (or `identity` in ssh.yaml)".into(),
        ));
    }
    let key = match &cfg.identity {
        Some(identity) => {
            let pass = cfg
                .passphrase
                .as_ref()
                .map(|r| r.resolve(&dir))
                .transpose()
                .map_err(|m| Error::Usage(format!("the SSH key's passphrase: {m}")))?;
            Some(Arc::new(
                ssh::exec::load_key(
                    identity,
                    pass.as_ref().map(crate::files::secrets::Secret::expose),
                )
                .map_err(|e| Error::Usage(e.to_string()))?,
            ))
        }
        None => None,
    };
    let auth = ssh::exec::Auth {
        agent: cfg.agent.clone(),
        key,
    };
    let nodes_path = dir.join("nodes.yaml");
    store::load_or_empty(&nodes_path)?;
    let bar = term::progress(cfg.hosts.len(), "hosts", ctx.json);
    let now = utc_now();
    let mut outcomes = term::runtime()?.block_on(ssh::discover(
        &cfg.hosts,
        Arc::new(auth),
        &cfg.options,
        &now,
        &|_| bar.inc(1),
    ));
    bar.finish_and_clear();
    // Merge into nodes.yaml as it is now, under the site's lock.
    let _lock = ctx.lock_site(&dir)?;
    let mut inv = store::load_or_empty(&nodes_path)?;
    let folded = fold::fold(&mut inv, &mut outcomes, &now);
    store::save(&nodes_path, &inv)?;
    if ctx.json {
        term::outln(&report::json(&report::discover::SshJson::new(
            &inv, &outcomes, &folded,
        )));
    } else {
        term::out(&report::discover::ssh_table(&inv, &outcomes, &folded));
    }
    Ok(if outcomes.iter().any(|o| !o.ok) {
        exit::PARTIAL
    } else {
        exit::OK
    })
}
