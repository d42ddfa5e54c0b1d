//! `serve` remembers installs: the state file it keeps in the site, a restart that still
//! tells installed nodes to boot their disk, `status` with no server, a corrupt state file,
//! a graceful stop on SIGTERM, one server per site, and `status --url` against a server
//! that never stops talking.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::bootstrap::{get_json, http, key_of, mac_of, webhook};
use crate::support::sushy::free_port;
use crate::support::{Site, flat, id_of};
use rackplan::bootstrap::serve::{InstallEvent, state_file};

struct Server {
    child: Child,
    port: u16,
    banner: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(site: &Site, extra: &[&str]) -> Server {
        let port = free_port();
        let mut child = Command::new(env!("CARGO_BIN_EXE_rackplan"))
            .args(["serve", "--site"])
            .arg(site.dir())
            .args([
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--base-url",
                &format!("http://127.0.0.1:{port}"),
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                l.lock().unwrap().push(line);
            }
        });
        // The banner ends with the install-state line or the artefact warnings after it;
        // stdout stays open (and read) so the server never writes into a closed pipe.
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut banner = String::new();
        while !banner.contains("install state: ") {
            let mut l = String::new();
            let n = out.read_line(&mut l).unwrap();
            assert!(n > 0, "serve stopped: {banner}{:?}", log.lock().unwrap());
            banner.push_str(&l);
        }
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = out.read_to_end(&mut sink);
        });
        Server {
            child,
            port,
            banner,
            log,
        }
    }

    /// SIGTERM; the exit code (bounded wait) and the log.
    fn terminate(&mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let code = self.wait(Duration::from_secs(20));
        (code, self.log_text())
    }

    fn wait(&mut self, limit: Duration) -> Option<i32> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                // The log thread may still be reading the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return st.code();
            }
            assert!(Instant::now() < deadline, "serve did not stop");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The path (with its token) of the config URL an iPXE script carries.
fn config_path(script: &str, port: u16) -> String {
    let url = script
        .split_whitespace()
        .find_map(|w| w.strip_prefix("harvester.install.config_url="))
        .unwrap_or_else(|| panic!("no config_url: {script}"));
    url.strip_prefix(&format!("http://127.0.0.1:{port}"))
        .unwrap()
        .to_string()
}

#[test]
fn an_installed_node_still_boots_its_disk_after_a_restart() {
    let site = Site::example();
    let mut s = Server::start(&site, &[]);
    assert!(
        s.banner.contains("(0 installed nodes restored"),
        "{}",
        s.banner
    );
    let mac = mac_of(&site, "hv-c01");
    let (code, script) = http(s.port, "GET", &format!("/ipxe?mac={mac}"));
    assert_eq!(code, 200, "{script}");
    let (code, _) = http(s.port, "GET", &config_path(&script, s.port));
    assert_eq!(code, 200);
    let key = key_of(&site, "hv-c01");
    assert_eq!(webhook(s.port, "/webhook/hv-c01/STARTED", Some(&key)), 204);
    assert_eq!(
        webhook(s.port, "/webhook/hv-c01/SUCCEEDED", Some(&key)),
        204
    );
    let key2 = key_of(&site, "hv-c02");
    assert_eq!(webhook(s.port, "/webhook/hv-c02/STARTED", Some(&key2)), 204);

    // SIGTERM: a clean stop that says where the state went.
    let (code, log) = s.terminate();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("install state saved in"), "{log}");
    let file = site.file("install-state.yaml");
    let saved = state_file::load(&file).unwrap().expect("the state file");
    let id = id_of(&site, "hv-c01");
    assert!(saved.installed("hv-c01", &id));
    let events: Vec<InstallEvent> = saved.nodes["hv-c01"]
        .events
        .iter()
        .map(|e| e.event)
        .collect();
    assert_eq!(
        events,
        [
            InstallEvent::TokenIssued,
            InstallEvent::ConfigServed,
            InstallEvent::Started,
            InstallEvent::Succeeded
        ]
    );

    // With no server, `status --site` reads the file.
    let r = site.run(&["status", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let row = |h: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(h))
            .unwrap_or_else(|| panic!("{}", r.stdout))
            .to_string()
    };
    assert!(
        row("hv-c01").contains("installed") && row("hv-c01").contains("SUCCEEDED"),
        "{}",
        r.stdout
    );
    assert!(row("hv-c02").contains("installing"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("1 installed, 1 installing, 13 waiting, 0 failed"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("install-state.yaml"), "{}", r.stdout);

    // Started again: the installed node gets no token and no install script.
    let mut s = Server::start(&site, &[]);
    assert!(
        s.banner.contains("(1 installed nodes restored"),
        "{}",
        s.banner
    );
    let (code, again) = http(s.port, "GET", &format!("/ipxe?mac={mac}"));
    assert_eq!(code, 200);
    assert!(!again.contains("token="), "{again}");
    assert!(!again.contains("harvester.install"), "{again}");
    assert!(again.contains("booting from its disk"), "{again}");
    let st = get_json(s.port, "/status");
    assert_eq!(st["nodes"]["hv-c01"]["state"], "installed", "{st:#}");
    assert_eq!(st["nodes"]["hv-c01"]["events"][3]["event"], "SUCCEEDED");
    assert_eq!(st["nodes"]["hv-c02"]["state"], "installing");
    assert_eq!(st["nodes"]["hv-c03"]["state"], "waiting");
    // Other nodes still get their scripts.
    let (_, other) = http(
        s.port,
        "GET",
        &format!("/ipxe?mac={}", mac_of(&site, "hv-c03")),
    );
    assert!(other.contains("token="), "{other}");
    assert_eq!(s.terminate().0, Some(0));

    // `--reinstall` is the one way to install it again.
    let s = Server::start(&site, &["--reinstall", "hv-c01"]);
    let (_, script) = http(s.port, "GET", &format!("/ipxe?mac={mac}"));
    assert!(script.contains("token="), "{script}");
}

#[test]
fn a_corrupt_state_file_stops_serve_and_status_with_a_located_error() {
    let site = Site::example();
    let id = id_of(&site, "hv-c01");
    site.write(
        "install-state.yaml",
        &format!(
            "version: 1\nnodes:\n  hv-c01:\n    node: {id}\n    events:\n      - event: SUCCEEDED\n        at: \"2025-06-01T12:00:00Z\"\n      - event: REBOOTED\n        at: \"2025-06-01T12:05:00Z\"\n"
        ),
    );
    let serve = site.run(&["serve", "--site", "{site}", "--listen", "127.0.0.1:0"]);
    assert_eq!(serve.code, 2, "{}{}", serve.stdout, serve.stderr);
    assert!(!serve.stdout.contains("listening"), "{}", serve.stdout);
    let status = site.run(&["status", "--site", "{site}"]);
    assert_eq!(status.code, 2, "{}{}", status.stdout, status.stderr);
    for e in [&serve.stderr, &status.stderr] {
        let e = flat(e);
        assert!(
            e.contains(
                "install-state.yaml:8:16: nodes.hv-c01.events[1].event: unknown variant `REBOOTED`"
            ),
            "{e}"
        );
        assert!(e.contains("Do not delete it"), "{e}");
    }
    insta::assert_snapshot!(flat(&status.stderr));

    // A dangling link is not "nothing installed" either.
    std::fs::remove_file(site.file("install-state.yaml")).unwrap();
    std::os::unix::fs::symlink(
        site.dir().join("gone.yaml"),
        site.file("install-state.yaml"),
    )
    .unwrap();
    let serve = site.run(&["serve", "--site", "{site}", "--listen", "127.0.0.1:0"]);
    assert_eq!(serve.code, 2, "{}", serve.stderr);
    assert!(
        flat(&serve.stderr).contains("symbolic link"),
        "{}",
        serve.stderr
    );
}

#[test]
fn sigterm_stops_accepting_and_finishes_the_download_in_flight() {
    let site = Site::example();
    let art = tempfile::tempdir().unwrap();
    let size = 32 * 1024 * 1024;
    std::fs::write(art.path().join("harvester.iso"), vec![7u8; size]).unwrap();
    let mut s = Server::start(&site, &["--artifacts", &art.path().display().to_string()]);
    let mut c = TcpStream::connect(("127.0.0.1", s.port)).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        c,
        "GET /harvester.iso HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut got = vec![0u8; 64 * 1024];
    c.read_exact(&mut got).unwrap();
    let pid = s.child.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    // No new connection is taken (bounded wait for the listener to close).
    let deadline = Instant::now() + Duration::from_secs(5);
    while TcpStream::connect(("127.0.0.1", s.port)).is_ok() {
        assert!(Instant::now() < deadline, "still accepting after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The download in flight runs to its end.
    let mut rest = Vec::new();
    c.read_to_end(&mut rest).unwrap();
    got.extend_from_slice(&rest);
    let text_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(got.starts_with(b"HTTP/1.1 200"));
    assert_eq!(got.len() - text_end, size, "the whole file arrived");
    assert_eq!(s.wait(Duration::from_secs(20)), Some(0), "{}", s.log_text());
}

#[test]
fn one_server_per_site_and_render_is_not_blocked() {
    let site = Site::example();
    let _s = Server::start(&site, &[]);
    let second = site.run(&["serve", "--site", "{site}", "--listen", "127.0.0.1:0"]);
    assert_eq!(second.code, 2, "{}", second.stderr);
    assert!(
        flat(&second.stderr).contains("another `rackplan serve` (pid"),
        "{}",
        second.stderr
    );
    let r = site.run(&["render", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = site.run(&["plan", "--site", "{site}"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn status_url_stops_reading_an_endless_answer() {
    let site = Site::example();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut sock, _) = listener.accept().unwrap();
        let mut req = [0u8; 4096];
        let _ = sock.read(&mut req);
        let _ = sock.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"nodes\": {\"a\": \"",
        );
        // Up to 1 GiB, or until the client hangs up.
        let chunk = vec![b'x'; 64 * 1024];
        let mut sent = 0usize;
        while sent < 1 << 30 {
            if sock.write_all(&chunk).is_err() {
                break;
            }
            sent += chunk.len();
        }
        sent
    });
    let started = Instant::now();
    let r = site.run(&[
        "status",
        "--site",
        "{site}",
        "--url",
        &format!("http://127.0.0.1:{port}"),
    ]);
    let sent = server.join().unwrap();
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        flat(&r.stderr).contains("the answer is larger than 8388608 bytes"),
        "{}",
        r.stderr
    );
    assert!(
        sent < 64 * 1024 * 1024,
        "the client read {sent} bytes before it stopped"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_base_url_path_that_reads_as_a_route_capture_is_a_usage_error() {
    let site = Site::example();
    for (url, why) in [
        ("http://127.0.0.1:1/:p", "starts with `:`"),
        ("http://127.0.0.1:1/pxe/*rest", "starts with `*`"),
    ] {
        let r = site.run(&[
            "serve",
            "--site",
            "{site}",
            "--listen",
            "127.0.0.1:0",
            "--base-url",
            url,
        ]);
        assert_eq!(r.code, 2, "{url}: {}", r.stderr);
        assert!(flat(&r.stderr).contains(why), "{url}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
    site.replace(
        "site.yaml",
        "pxe_base_url: http://10.10.0.5/harvester/v1.6.1",
        "pxe_base_url: http://10.10.0.5/harvester/:version",
    );
    for cmd in ["check", "render", "serve"] {
        let r = site.run(&[cmd, "--site", "{site}"]);
        assert_eq!(r.code, 2, "{cmd}: {}", r.stderr);
        let e = flat(&r.stderr);
        assert!(
            e.contains("harvester.pxe_base_url") && e.contains("starts with `:`"),
            "{cmd}: {e}"
        );
    }
}
