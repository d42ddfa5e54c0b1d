//! SSH discovery benchmark: 100 sshd endpoints on loopback (127.0.0.10 ... 127.0.0.109,
//! seven sshd processes of at most 16 listen addresses each), inventoried by the real
//! `rackplan discover ssh`. Reports wall time, peak memory and rackplan's own CPU time for
//! several concurrency caps and host counts. Every endpoint is this machine, so the probes
//! and sshd's key exchanges share its cores with rackplan: wall time here measures the
//! machine; rackplan's own CPU and memory are the client's cost.
//! Run: `cargo bench --bench ssh_fleet` (needs /usr/sbin/sshd and ssh-keygen).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn keygen(path: &std::path::Path) {
    assert!(
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(path)
            .status()
            .unwrap()
            .success()
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(&d.join("host"));
    keygen(&d.join("user"));
    std::fs::copy(d.join("user.pub"), d.join("authorized_keys")).unwrap();
    std::fs::create_dir_all("/run/sshd").ok();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addrs: Vec<String> = (10..110).map(|i| format!("127.0.0.{i}")).collect();
    let mut servers: Vec<Child> = Vec::new();
    for (k, chunk) in addrs.chunks(16).enumerate() {
        let listen: String = chunk
            .iter()
            .map(|a| format!("ListenAddress {a}:{port}\n"))
            .collect();
        let cfg = d.join(format!("sshd_{k}"));
        std::fs::write(
            &cfg,
            format!(
                "{listen}HostKey {p}/host\nAuthorizedKeysFile {p}/authorized_keys\nPidFile {p}/sshd{k}.pid\nStrictModes no\nUsePAM no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nMaxStartups 500\nMaxSessions 50\nLogLevel ERROR\n",
                p = d.display()
            ),
        )
        .unwrap();
        servers.push(
            Command::new("/usr/sbin/sshd")
                .arg("-D")
                .arg("-f")
                .arg(&cfg)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    let hostkey = std::fs::read_to_string(d.join("host.pub")).unwrap();
    let mut hk = hostkey.split_whitespace();
    let (alg, b64) = (hk.next().unwrap(), hk.next().unwrap());
    let known: String = addrs
        .iter()
        .map(|a| format!("[{a}]:{port} {alg} {b64}\n"))
        .collect();
    std::fs::write(d.join("known_hosts"), known).unwrap();
    let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
    let bin = env!("CARGO_BIN_EXE_rackplan");
    println!(
        "ssh discovery of this machine through {} loopback sshd endpoints",
        addrs.len()
    );
    println!(
        "  {:>6} {:>6} {:>9} {:>10} {:>14} {:>8}",
        "hosts", "cap", "wall s", "peak MiB", "rackplan CPU s", "ok"
    );
    for (hosts, cap) in [
        (100, 8),
        (100, 32),
        (100, 100),
        (25, 25),
        (50, 25),
        (100, 25),
    ] {
        let site = tempfile::tempdir().unwrap();
        std::fs::copy(d.join("known_hosts"), site.path().join("known_hosts")).unwrap();
        let list: Vec<String> = addrs
            .iter()
            .take(hosts)
            .map(|a| format!("{user}@{a}:{port}"))
            .collect();
        let started = Instant::now();
        let out = Command::new("/usr/bin/time")
            .arg("-v")
            .arg(bin)
            .args(["--output", "json", "discover", "ssh", "--site"])
            .arg(site.path())
            .args(["--hosts", &list.join(","), "--identity"])
            .arg(d.join("user"))
            .args(["--concurrency", &cap.to_string(), "--timeout", "60"])
            .output()
            .unwrap();
        let wall = started.elapsed().as_secs_f64();
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        let ok = v["hosts"]
            .as_array()
            .map_or(0, |h| h.iter().filter(|x| x["ok"] == true).count());
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let field = |name: &str| {
            err.lines()
                .find(|l| l.contains(name))
                .and_then(|l| l.rsplit(':').next()?.trim().parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let rss = field("Maximum resident set size");
        let cpu = field("User time (seconds)") + field("System time (seconds)");
        println!(
            "  {hosts:>6} {cap:>6} {wall:>9.2} {:>10.1} {cpu:>14.2} {ok:>8}",
            rss / 1024.0
        );
    }
    for mut s in servers {
        let _ = s.kill();
        let _ = s.wait();
    }
}
