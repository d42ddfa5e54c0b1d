//! SSH discovery against a real OpenSSH server on loopback, discovering this very machine.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::sshd::{Sshd, UserKey, keygen};
use crate::support::{json_of, rackplan_json};

fn discover(site: &std::path::Path, args: &[&str]) -> (i32, Value) {
    let (code, v, _) = json_of(
        rackplan_json(&["discover", "ssh", "--site"])
            .arg(site)
            .args(args),
    );
    (code, v)
}

/// Discover one known host with `identity`, which must fail (exit 3): that host's error.
fn sole_host_error(server: &Sshd, identity: &UserKey) -> String {
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("known_hosts"), server.known_hosts_line()).unwrap();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &server.target(),
            "--identity",
            identity.private().to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3, "{v:#}");
    v["hosts"][0]["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error: {v:#}"))
        .to_string()
}

fn sh(cmd: &str) -> String {
    String::from_utf8(
        Command::new("sh")
            .arg("-c")
            .arg(cmd)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
}

#[test]
fn this_machine_is_inventoried_over_real_ssh() {
    let key = UserKey::new();
    let server = Sshd::start("127.0.0.1", &key, "");
    let site = tempfile::tempdir().unwrap();
    let id = key.private();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &server.target(),
            "--identity",
            id.to_str().unwrap(),
            "--accept-new",
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    crate::output_schemas::assert_valid("discover-ssh", &v);
    assert_eq!(v["hosts"][0]["host_key"], "learned");
    let node = &v["nodes"][0];
    // Compare with what the machine says directly.
    let cpus: u64 = sh("nproc --all").trim().parse().unwrap();
    assert_eq!(node["cpu"]["threads"].as_u64(), Some(cpus));
    let mem_kb: f64 = sh("awk '/MemTotal/ {print $2}' /proc/meminfo")
        .trim()
        .parse()
        .unwrap();
    let got = node["memory_gib"].as_f64().unwrap();
    let dmidecode = Command::new("sh")
        .arg("-c")
        .arg("dmidecode -t memory >/dev/null 2>&1")
        .status()
        .unwrap()
        .success();
    if !dmidecode {
        assert!((got - mem_kb / 1048576.0).abs() < 0.01, "{got} vs MemTotal");
    }
    let lsblk = sh(
        "lsblk -b -d -n -o NAME,SIZE,TYPE | awk '$3==\"disk\" && $2>0 && $1 !~ /^(zram|ram|loop)/ {print $1, $2}'",
    );
    let want: Vec<(String, u64)> = lsblk
        .lines()
        .map(|l| {
            let mut p = l.split_whitespace();
            (
                p.next().unwrap().to_string(),
                p.next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    let got: Vec<(String, u64)> = node["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap().to_string(),
                d["capacity_bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    assert!(!node["nics"].as_array().unwrap().is_empty());
    assert!(node["sources"]["ssh"].is_string());
    // The key was recorded; the next run needs no --accept-new.
    let kh = std::fs::read_to_string(site.path().join("known_hosts")).unwrap();
    assert!(kh.contains("ssh-ed25519"), "{kh}");
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &server.target(),
            "--identity",
            id.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    assert_eq!(v["hosts"][0]["host_key"], "known");
    assert_eq!(
        v["merge"]["updated"].as_array().unwrap().len(),
        1,
        "rediscovery updates, never duplicates"
    );
}

#[test]
fn an_unknown_host_is_refused_without_accept_new() {
    let key = UserKey::new();
    let server = Sshd::start("127.0.0.1", &key, "");
    let site = tempfile::tempdir().unwrap();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &server.target(),
            "--identity",
            key.private().to_str().unwrap(),
        ],
    );
    assert_eq!(code, 3);
    let e = v["hosts"][0]["error"].as_str().unwrap();
    assert!(e.contains("is not in") && e.contains("--accept-new"), "{e}");
    assert!(
        !site.path().join("known_hosts").exists(),
        "nothing recorded without asking"
    );
}

#[test]
fn a_changed_host_key_is_a_hard_error() {
    let key = UserKey::new();
    let server = Sshd::start("127.0.0.1", &key, "");
    let site = tempfile::tempdir().unwrap();
    // known_hosts says another key for this host.
    let other = tempfile::tempdir().unwrap();
    keygen(&other.path().join("k"));
    let pubkey = std::fs::read_to_string(other.path().join("k.pub")).unwrap();
    let mut p = pubkey.split_whitespace();
    std::fs::write(
        site.path().join("known_hosts"),
        format!(
            "[{}]:{} {} {}\n",
            server.addr,
            server.port,
            p.next().unwrap(),
            p.next().unwrap()
        ),
    )
    .unwrap();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &server.target(),
            "--identity",
            key.private().to_str().unwrap(),
            "--accept-new",
        ],
    );
    assert_eq!(code, 3);
    let e = v["hosts"][0]["error"].as_str().unwrap();
    assert!(e.contains("HOST KEY CHANGED"), "{e}");
}

#[test]
fn a_key_the_host_does_not_know_fails_authentication() {
    let key = UserKey::new();
    let stranger = UserKey::new();
    let server = Sshd::start("127.0.0.1", &key, "");
    let e = sole_host_error(&server, &stranger);
    assert!(e.contains("authentication refused"), "{e}");
}

#[test]
fn a_host_that_never_answers_costs_only_its_timeout() {
    let key = UserKey::new();
    let server = Sshd::start("127.0.0.1", &key, "");
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let holder = std::thread::spawn(move || {
        // Accept and hold connections, never saying a word, until the test is over.
        let deadline = Instant::now() + Duration::from_secs(30);
        silent.set_nonblocking(true).unwrap();
        let mut held = Vec::new();
        while Instant::now() < deadline {
            if let Ok((s, _)) = silent.accept() {
                held.push(s);
            }
            std::thread::sleep(Duration::from_millis(20));
            if held.len() >= 2 {
                break;
            }
        }
        std::thread::sleep(Duration::from_secs(8));
    });
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("known_hosts"), server.known_hosts_line()).unwrap();
    let hosts = format!(
        "{},{}@127.0.0.1:{port}",
        server.target(),
        crate::support::sshd::user()
    );
    let started = Instant::now();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &hosts,
            "--identity",
            key.private().to_str().unwrap(),
            "--timeout",
            "2",
            "--retries",
            "1",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "bounded: {:?}",
        started.elapsed()
    );
    assert_eq!(code, 3);
    assert_eq!(v["hosts"][0]["ok"], true, "the good host is complete");
    assert!(
        v["hosts"][1]["error"]
            .as_str()
            .unwrap()
            .contains("did not answer within 2 s"),
        "{v:#}"
    );
    drop(holder);
}

#[test]
fn a_host_printing_garbage_is_an_error_not_a_crash() {
    let key = UserKey::new();
    let server = Sshd::start(
        "127.0.0.1",
        &key,
        "ForceCommand echo 'Welcome to the appliance shell' && head -c 2000 /dev/urandom | base64",
    );
    let e = sole_host_error(&server, &key);
    assert!(e.contains("made no sense"), "{e}");
}

#[test]
fn several_endpoints_at_once_and_reconciliation_with_the_bmc_record() {
    let key = UserKey::new();
    let servers: Vec<Sshd> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|a| Sshd::start(a, &key, ""))
        .collect();
    let site = tempfile::tempdir().unwrap();
    let kh: String = servers.iter().map(Sshd::known_hosts_line).collect();
    std::fs::write(site.path().join("known_hosts"), kh).unwrap();
    // A BMC-style record of this machine: its first port's MAC, no names, no paths.
    let links: Value = serde_json::from_str(&sh("ip -j link")).unwrap();
    let mac = links
        .as_array()
        .unwrap()
        .iter()
        .find(|l| {
            l["link_type"] == "ether"
                && l["linkinfo"].is_null()
                && std::path::Path::new(&format!(
                    "/sys/class/net/{}/device",
                    l["ifname"].as_str().unwrap()
                ))
                .exists()
        })
        .map(|l| l["address"].as_str().unwrap().to_string())
        .expect("a physical port");
    std::fs::write(
        site.path().join("nodes.yaml"),
        format!("nodes:\n  - id: BMC-SEEN-1\n    memory_gib: 4096\n    nics: [{{mac: \"{mac}\", link: unknown}}]\n    sources: {{redfish: \"2026-11-01T00:00:00Z\"}}\n    annotations: {{rack: r09}}\n"),
    )
    .unwrap();
    let hosts: Vec<String> = servers.iter().map(Sshd::target).collect();
    let (code, v) = discover(
        site.path(),
        &[
            "--hosts",
            &hosts.join(","),
            "--identity",
            key.private().to_str().unwrap(),
            "--concurrency",
            "3",
        ],
    );
    assert_eq!(code, 0, "{v:#}");
    for h in v["hosts"].as_array().unwrap() {
        assert_eq!(h["ok"], true);
        let notes = h["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n
                .as_str()
                .unwrap()
                .starts_with("BMC reports 4096 GiB of memory")),
            "{notes:?}"
        );
    }
    let (inv, _) = rackplan::inventory::store::load(&site.path().join("nodes.yaml")).unwrap();
    assert_eq!(
        inv.nodes.len(),
        1,
        "matched by MAC: one server, not four records"
    );
    let n = &inv.nodes[0];
    assert_eq!(n.annotations.rack.as_deref(), Some("r09"));
    assert!(
        n.nics.iter().find(|x| x.mac == mac).unwrap().name.is_some(),
        "the OS named the port"
    );
    assert_eq!(n.sources.redfish.as_deref(), Some("2026-11-01T00:00:00Z"));
    assert!(n.sources.ssh.is_some());
}

/// Keys as operators hold them: in a real ssh-agent (no key file on the command line), and
/// in a passphrase-protected file with the passphrase from a variable or a file.
#[test]
fn keys_from_ssh_agent_and_passphrase_protected_files() {
    use crate::support::sshd::Agent;
    let agent_key = UserKey::new();
    let server = Sshd::start("127.0.0.1", &agent_key, "");
    let site = tempfile::tempdir().unwrap();
    std::fs::write(site.path().join("known_hosts"), server.known_hosts_line()).unwrap();
    let agent = Agent::start();
    agent.add(&agent_key.private());
    let run = |env: &[(&str, &std::ffi::OsStr)], args: &[&str]| {
        let mut cmd = rackplan_json(&["discover", "ssh", "--site"]);
        cmd.arg(site.path())
            .args(["--hosts", &server.target()])
            .args(args)
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("RACKPLAN_SSH_PASSPHRASE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        json_of(&mut cmd)
    };
    // The agent alone logs in.
    let (code, v, err) = run(&[("SSH_AUTH_SOCK", agent.sock.as_os_str())], &[]);
    assert_eq!(code, 0, "{v:#}{err}");
    assert!(v["nodes"][0]["id"].is_string());
    // --no-agent and no key: told how to give one.
    let (code, v, _) = run(
        &[("SSH_AUTH_SOCK", agent.sock.as_os_str())],
        &["--no-agent"],
    );
    assert_eq!(code, 2, "{v:#}");
    assert!(v["error"].as_str().unwrap().contains("ssh-add"), "{v:#}");

    // A passphrase-protected key the server trusts.
    let pass = "correct horse battery staple";
    let locked = UserKey::with_passphrase(pass);
    let server2 = Sshd::start("127.0.0.1", &locked, "");
    std::fs::write(site.path().join("known_hosts"), server2.known_hosts_line()).unwrap();
    let run2 = |env: &[(&str, &std::ffi::OsStr)], args: &[&str]| {
        let mut cmd = rackplan_json(&["discover", "ssh", "--site"]);
        cmd.arg(site.path())
            .args(["--hosts", &server2.target(), "--identity"])
            .arg(locked.private())
            .args(args)
            .env_remove("SSH_AUTH_SOCK")
            .env_remove("RACKPLAN_SSH_PASSPHRASE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        json_of(&mut cmd)
    };
    let (code, v, _) = run2(&[], &[]);
    assert_eq!(code, 2);
    let e = v["error"].as_str().unwrap();
    assert!(
        e.contains("protected by a passphrase") && e.contains("RACKPLAN_SSH_PASSPHRASE"),
        "{e}"
    );
    let (code, v, err) = run2(
        &[("RACKPLAN_SSH_PASSPHRASE", std::ffi::OsStr::new(pass))],
        &[],
    );
    assert_eq!(code, 0, "{v:#}{err}");
    let pf = site.path().join("passphrase");
    std::fs::write(&pf, format!("{pass}\n")).unwrap();
    let (code, v, err) = run2(&[], &["--passphrase-file", pf.to_str().unwrap()]);
    assert_eq!(code, 0, "{v:#}{err}");
    std::fs::write(&pf, "wrong\n").unwrap();
    let (code, v, err) = run2(&[], &["--passphrase-file", pf.to_str().unwrap()]);
    assert_eq!(code, 2);
    let all = format!("{v}{err}");
    assert!(all.contains("does not open"), "{all}");
    assert!(
        !all.contains(pass) && !all.contains("wrong"),
        "a passphrase leaked: {all}"
    );
    // An agent that holds a key the host does not know, then the file: the file still works.
    let (code, v, err) = run2(
        &[
            ("SSH_AUTH_SOCK", agent.sock.as_os_str()),
            ("RACKPLAN_SSH_PASSPHRASE", std::ffi::OsStr::new(pass)),
        ],
        &[],
    );
    assert_eq!(code, 0, "{v:#}{err}");
}
