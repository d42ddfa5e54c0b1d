//! Tests of `config.rs`, kept beside it.

use super::*;
use crate::cli::args::SiteArg;

fn redfish_args() -> RedfishArgs {
    RedfishArgs {
        site: SiteArg { site: "s".into() },
        trust_on_first_use: false,
        concurrency: 64,
        per_bmc: 4,
        request_timeout: 10.0,
        bmc_timeout: 45.0,
        retries: 2,
    }
}

#[test]
fn infinite_and_huge_durations_are_refused_not_panics() {
    for v in [f64::INFINITY, f64::NAN, 1e20, -1.0, 0.0] {
        let mut a = redfish_args();
        a.request_timeout = v;
        let e = RedfishConfig::resolve(&a).unwrap_err();
        assert_eq!(e.flag, "--request-timeout", "{v}");
    }
    let mut a = redfish_args();
    a.bmc_timeout = 1e20;
    assert_eq!(
        RedfishConfig::resolve(&a).unwrap_err().flag,
        "--bmc-timeout"
    );
}

#[test]
fn counts_are_bounded() {
    let mut a = redfish_args();
    a.concurrency = usize::MAX;
    assert_eq!(
        RedfishConfig::resolve(&a).unwrap_err().flag,
        "--concurrency"
    );
    let mut a = redfish_args();
    a.per_bmc = 0;
    assert_eq!(RedfishConfig::resolve(&a).unwrap_err().flag, "--per-bmc");
    let c = RedfishConfig::resolve(&redfish_args()).unwrap();
    assert_eq!(c.options.concurrency, 64);
    assert_eq!(c.options.limits.request_timeout, Duration::from_secs(10));
}

fn ssh_args() -> SshArgs {
    SshArgs {
        site: SiteArg {
            site: "site".into(),
        },
        hosts: Vec::new(),
        identity: None,
        passphrase_file: None,
        no_agent: false,
        known_hosts: None,
        accept_new: false,
        user: None,
        concurrency: 32,
        timeout: 30.0,
        retries: 1,
    }
}

fn ssh_file(text: &str) -> (SshFile, Source) {
    crate::files::yaml::parse(Path::new("site/ssh.yaml"), text).unwrap()
}

#[test]
fn ssh_flags_win_over_ssh_yaml_which_wins_over_defaults() {
    let f = ssh_file("user: admin\nidentity: keys/id\nhosts: [10.0.0.1]\naccept_new: true\n");
    let c = SshConfig::resolve(&ssh_args(), Some(&f)).unwrap();
    assert_eq!(c.user, "admin");
    assert_eq!(c.hosts_from, HostsFrom::SshFile);
    assert_eq!(c.hosts[0].user, "admin");
    assert_eq!(c.identity, Some(PathBuf::from("site/keys/id")));
    assert_eq!(c.options.known_hosts, PathBuf::from("site/known_hosts"));
    assert!(c.options.accept_new);

    let mut a = ssh_args();
    a.user = Some("ops".into());
    a.hosts = vec!["127.0.0.2:2222".into()];
    a.identity = Some("/k".into());
    let c = SshConfig::resolve(&a, Some(&f)).unwrap();
    assert_eq!((c.user.as_str(), c.hosts_from), ("ops", HostsFrom::Flag));
    assert_eq!(
        (c.hosts[0].host.as_str(), c.hosts[0].port),
        ("127.0.0.2", 2222)
    );
    assert_eq!(c.identity, Some(PathBuf::from("/k")));

    let c = SshConfig::resolve(&ssh_args(), None).unwrap();
    assert_eq!((c.user.as_str(), c.hosts_from), ("root", HostsFrom::Lock));
}

#[test]
fn a_bad_host_in_ssh_yaml_is_located() {
    let f = ssh_file("hosts:\n  - ok.example\n  - \"bad:port\"\n");
    let Err(SshConfigError::File(e)) = SshConfig::resolve(&ssh_args(), Some(&f)) else {
        panic!("expected a located error");
    };
    assert!(e.to_string().contains("bad port"), "{e}");
    let mut a = ssh_args();
    a.hosts = vec!["x:y".into()];
    let Err(SshConfigError::Flag(e)) = SshConfig::resolve(&a, None) else {
        panic!("expected a flag error");
    };
    assert_eq!(e.flag, "--hosts");
    let mut a = ssh_args();
    a.timeout = f64::INFINITY;
    assert!(SshConfig::resolve(&a, None).is_err());
}

#[test]
fn base_urls_are_checked() {
    assert_eq!(
        http_url("--base-url", "http://10.0.0.5:8080/pxe/").unwrap(),
        "http://10.0.0.5:8080/pxe"
    );
    for bad_url in [
        "http://x/{id}",
        "ftp://x",
        "not a url",
        "http://x/?a=1",
        "http://x/a b",
    ] {
        assert!(http_url("--base-url", bad_url).is_err(), "{bad_url}");
    }
}

#[test]
fn simulate_flags_resolve_or_say_which_is_wrong() {
    let data = ["a".to_string(), " ".to_string(), "b ".to_string()];
    let base = SimulateFlags {
        scenario: Some(Path::new("s.yaml")),
        ..SimulateFlags::default()
    };
    let ok = SimulateConfig::resolve(&SimulateFlags {
        drain: &data,
        report: Some(Path::new("r.md")),
        rebuild_data: Some("15TiB"),
        rebuild_node: Some("hv-001"),
        ..base.clone()
    })
    .unwrap();
    assert_eq!(ok.drain, ["a", "b"]);
    assert_eq!(
        ok.report,
        Some((PathBuf::from("r.md"), ReportFormat::Markdown))
    );
    assert_eq!(ok.rebuild, Some((15.0, Some("hv-001".into()))));
    let cases: [(SimulateFlags<'_>, StudyFlagError); 5] = [
        (SimulateFlags::default(), StudyFlagError::NoFleet),
        (
            SimulateFlags {
                report: Some(Path::new("r.pdf")),
                ..base.clone()
            },
            StudyFlagError::ReportName("r.pdf".into()),
        ),
        (
            SimulateFlags {
                rebuild_data: Some("15"),
                ..base.clone()
            },
            StudyFlagError::SizeUnit("15".into()),
        ),
        (
            SimulateFlags {
                rebuild_data: Some("0TiB"),
                ..base.clone()
            },
            StudyFlagError::SizeZero("0TiB".into()),
        ),
        (
            SimulateFlags {
                rebuild_data: Some("lotsTiB"),
                ..base.clone()
            },
            StudyFlagError::Size(crate::profile::ByteSize::parse("lotsTiB").unwrap_err()),
        ),
    ];
    for (flags, want) in cases {
        assert_eq!(SimulateConfig::resolve(&flags).unwrap_err(), want);
    }
}

#[test]
fn a_site_alone_simulates_its_own_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let flags = SimulateFlags {
        site: Some(dir.path()),
        ..SimulateFlags::default()
    };
    assert_eq!(
        SimulateConfig::resolve(&flags).unwrap_err(),
        StudyFlagError::NoSiteScenario(dir.path().display().to_string())
    );
    let starter = dir.path().join(crate::scaffold::STARTER_SCENARIO);
    std::fs::write(&starter, "name: s\n").unwrap();
    let c = SimulateConfig::resolve(&flags).unwrap();
    assert_eq!(c.scenario.as_deref(), Some(starter.as_path()));
    assert_eq!(c.site.as_deref(), Some(dir.path()));
    // A scenario given, or a running fleet, is never replaced by the site's.
    let given = SimulateConfig::resolve(&SimulateFlags {
        scenario: Some(Path::new("s.yaml")),
        ..flags.clone()
    })
    .unwrap();
    assert_eq!(given.scenario.as_deref(), Some(Path::new("s.yaml")));
    let live = SimulateConfig::resolve(&SimulateFlags {
        from_cluster: Some(Path::new("dump.yaml")),
        ..flags
    })
    .unwrap();
    assert_eq!(live.scenario, None);
}

#[test]
fn admit_flags_resolve() {
    let (r, s) = (Path::new("r.yaml"), Path::new("s.yaml"));
    assert_eq!(AdmitConfig::resolve(r, s, None, 42).unwrap().at, 42);
    assert_eq!(
        AdmitConfig::resolve(r, s, Some("1970-01-02"), 0)
            .unwrap()
            .at,
        86_400
    );
    assert!(matches!(
        AdmitConfig::resolve(r, s, Some("2027-02-30"), 0),
        Err(StudyFlagError::At(_))
    ));
    assert_eq!(
        AdmitConfig::resolve(Path::new("-"), Path::new("-"), None, 0),
        Err(StudyFlagError::TwoStdin)
    );
}
