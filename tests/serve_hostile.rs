//! `serve` as a hostile network client meets it: configs by any other spelling, an artifacts
//! folder holding rendered output, 300 idle connections, a flood of `/ipxe` requests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::Site;
use crate::support::sushy::free_port;

struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `rackplan serve` under `ulimit -n files` (the shell sets it, then execs rackplan).
fn start(site: &Site, artifacts: &std::path::Path, files: u32) -> Server {
    let port = free_port();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n {files} && exec \"$0\" serve --site \"$1\" --listen 127.0.0.1:{port} --base-url http://127.0.0.1:{port} --artifacts \"$2\""
        ))
        .arg(env!("CARGO_BIN_EXE_rackplan"))
        .arg(site.dir())
        .arg(artifacts)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains(&port.to_string()), "{first}");
    Server { child, port }
}

fn get(port: u16, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, text)
}

fn mac(site: &Site) -> String {
    let id = crate::support::id_of(site, "hv-m01");
    site.inventory()
        .nodes
        .iter()
        .find(|n| n.id == id)
        .unwrap()
        .nics[0]
        .mac
        .clone()
}

#[test]
fn an_artifacts_folder_with_rendered_configs_is_refused_at_start() {
    let site = Site::example();
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = site.run(&[
        "serve",
        "--site",
        "{site}",
        "--listen",
        "127.0.0.1:0",
        "--artifacts",
        &site.out().display().to_string(),
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("holds an install config"), "{}", r.stderr);
}

#[test]
fn configs_are_reachable_only_through_the_token_route_whatever_the_spelling() {
    let site = Site::example();
    let art = tempfile::tempdir().unwrap();
    // A stray config in the artifacts folder under another name is not served either way.
    std::fs::create_dir_all(art.path().join("nodes/hv-m01")).unwrap();
    std::fs::write(art.path().join("kernel"), b"k").unwrap();
    let s = start(&site, art.path(), 1024);
    let token = site.read("secrets/token.example").trim().to_string();
    assert!(token.len() > 8);
    for p in [
        "/nodes//hv-m01/config.yaml",
        "/nodes/hv-m01//config.yaml",
        "/nodes%2fhv-m01%2fconfig.yaml",
        "/nodes/./hv-m01/config.yaml",
        "/NODES/hv-m01/CONFIG.YAML",
        "/nodes/hv-m01/config.yaml",
        "/nodes/hv-m01/config.yaml?token=",
        "//nodes/hv-m01/config.yaml",
    ] {
        let (code, body) = get(s.port, p);
        assert_ne!(code, 200, "{p}: {body}");
        assert!(!body.contains(&token), "{p} leaked the cluster token");
    }
    assert_eq!(get(s.port, "/kernel").0, 200);
}

#[test]
fn idle_connections_do_not_lock_a_real_client_out() {
    let site = Site::example();
    let art = tempfile::tempdir().unwrap();
    let s = start(&site, art.path(), 256);
    let idle: Vec<TcpStream> = (0..300)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", s.port)).ok())
        .collect();
    assert!(idle.len() >= 250, "opened {}", idle.len());
    let started = Instant::now();
    let (code, script) = get(s.port, &format!("/ipxe?mac={}", mac(&site)));
    let took = started.elapsed();
    assert_eq!(code, 200, "{script}");
    assert!(script.contains("#!ipxe"));
    assert!(took < Duration::from_secs(2), "took {took:?}");
    drop(idle);
}

#[test]
fn a_flood_of_ipxe_requests_keeps_the_token_table_bounded() {
    let site = Site::example();
    let art = tempfile::tempdir().unwrap();
    let s = start(&site, art.path(), 1024);
    let mac = mac(&site);
    // Keep-alive: many requests on few connections.
    let mut sent = 0;
    for _ in 0..20 {
        let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        c.set_nodelay(true).unwrap();
        let mut reader = BufReader::new(c.try_clone().unwrap());
        for _ in 0..250 {
            write!(c, "GET /ipxe?mac={mac} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
            let mut len = 0usize;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0u8; len];
            reader.read_exact(&mut body).unwrap();
            sent += 1;
        }
    }
    assert_eq!(sent, 5000);
    let (code, status) = get(s.port, "/status");
    assert_eq!(code, 200);
    let body = status.split_once("\r\n\r\n").unwrap().1;
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert!(
        v["live_tokens"].as_u64().unwrap() <= 2,
        "one node's tokens: {}",
        v["live_tokens"]
    );
}
