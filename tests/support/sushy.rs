//! Real Redfish servers for tests: sushy-tools' `sushy-static` serving a mockup folder on
//! 127.0.0.1, one process per simulated BMC. `.ci/run` installs sushy-tools into
//! `.venv-redfish`; RACKPLAN_SUSHY_STATIC can point elsewhere.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::{repo, shared};

/// `DIR/bmcs.yaml` listing these BMC addresses, nothing else (no credentials, no TLS).
pub fn write_bmcs(dir: &Path, urls: &[String]) {
    let mut text = String::from("bmcs:\n");
    for u in urls {
        text.push_str(&format!("  - address: \"{u}\"\n"));
    }
    std::fs::write(dir.join("bmcs.yaml"), text).unwrap();
}

pub fn sushy_static() -> PathBuf {
    let p = std::env::var_os("RACKPLAN_SUSHY_STATIC").map_or_else(
        || repo().join(".venv-redfish/bin/sushy-static"),
        PathBuf::from,
    );
    assert!(
        p.exists(),
        "{} not found: run `python3 -m venv .venv-redfish && .venv-redfish/bin/pip install sushy-tools==2.2.0` (as .ci/run does)",
        p.display()
    );
    p
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn mockup(name: &str) -> PathBuf {
    shared().join("reference/redfish-mockups").join(name)
}

pub fn mockup_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(shared().join("reference/redfish-mockups"))
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.path()
                .join("redfish/v1/index.json")
                .exists()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

/// A running sushy-static; killed when dropped.
pub struct Sushy {
    child: Child,
    pub port: u16,
    pub tls: bool,
}

impl Sushy {
    pub fn start(mockup_dir: &Path, tls: Option<(&Path, &Path)>) -> Sushy {
        for _ in 0..5 {
            let port = free_port();
            let mut cmd = Command::new(sushy_static());
            cmd.args(["-i", "127.0.0.1", "-p", &port.to_string(), "--mockup-files"])
                .arg(mockup_dir.join("redfish/v1"))
                // It prints every request's headers, credentials included: keep them out of logs.
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            if let Some((cert, key)) = tls {
                cmd.arg("-c").arg(cert).arg("-k").arg(key);
            }
            let mut child = cmd.spawn().expect("start sushy-static");
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Sushy {
                        child,
                        port,
                        tls: tls.is_some(),
                    };
                }
                if child.try_wait().unwrap().is_some() {
                    break; // port taken by someone else: try another
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("sushy-static did not start");
    }

    pub fn url(&self) -> String {
        format!(
            "{}://127.0.0.1:{}",
            if self.tls { "https" } else { "http" },
            self.port
        )
    }
}

impl Drop for Sushy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
