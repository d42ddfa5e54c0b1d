//! A real OpenSSH server for tests: Debian's `sshd` on a loopback address and a free port,
//! with generated host and user keys and a private config file. `.ci/run` installs
//! openssh-server; the server is killed when dropped.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::sushy::free_port;

pub fn keygen(path: &Path) {
    let st = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "rackplan-test", "-f"])
        .arg(path)
        .status()
        .expect("ssh-keygen");
    assert!(st.success());
}

pub fn user() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| "root".into())
}

pub struct Sshd {
    child: Child,
    pub addr: String,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

/// A user key pair in its own directory.
pub struct UserKey {
    pub dir: tempfile::TempDir,
}

impl UserKey {
    pub fn new() -> UserKey {
        let dir = tempfile::tempdir().unwrap();
        keygen(&dir.path().join("id_ed25519"));
        UserKey { dir }
    }
    /// A key pair protected by `passphrase`.
    pub fn with_passphrase(passphrase: &str) -> UserKey {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("ssh-keygen")
            .args([
                "-q",
                "-t",
                "ed25519",
                "-N",
                passphrase,
                "-C",
                "rackplan-test",
                "-f",
            ])
            .arg(dir.path().join("id_ed25519"))
            .status()
            .expect("ssh-keygen");
        assert!(st.success());
        UserKey { dir }
    }

    pub fn private(&self) -> PathBuf {
        self.dir.path().join("id_ed25519")
    }
    pub fn public(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("id_ed25519.pub")).unwrap()
    }
}

impl Sshd {
    /// Start sshd on `addr` (a 127.x.y.z address) trusting `key`; `extra` is appended to the
    /// config (e.g. a ForceCommand).
    pub fn start(addr: &str, key: &UserKey, extra: &str) -> Sshd {
        let sshd = Path::new("/usr/sbin/sshd");
        assert!(
            sshd.exists(),
            "/usr/sbin/sshd not found: install openssh-server (as .ci/run does)"
        );
        std::fs::create_dir_all("/run/sshd").ok();
        let dir = tempfile::tempdir().unwrap();
        keygen(&dir.path().join("host_ed25519"));
        std::fs::write(dir.path().join("authorized_keys"), key.public()).unwrap();
        for _ in 0..5 {
            let port = free_port();
            let config = format!(
                "Port {port}\nListenAddress {addr}\nHostKey {d}/host_ed25519\nAuthorizedKeysFile {d}/authorized_keys\n\
                 PidFile {d}/sshd.pid\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n\
                 PermitRootLogin prohibit-password\nMaxStartups 200\nLogLevel ERROR\n{extra}\n",
                d = dir.path().display()
            );
            let cfg = dir.path().join("sshd_config");
            std::fs::write(&cfg, config).unwrap();
            let mut child = Command::new(sshd)
                .arg("-D")
                .arg("-e")
                .arg("-f")
                .arg(&cfg)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline {
                if TcpStream::connect((addr, port)).is_ok() {
                    std::thread::sleep(Duration::from_millis(50));
                    if child.try_wait().unwrap().is_none() {
                        return Sshd {
                            child,
                            addr: addr.to_string(),
                            port,
                            dir,
                        };
                    }
                    break;
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(30));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("sshd did not start on {addr}");
    }

    pub fn target(&self) -> String {
        format!("{}@{}:{}", user(), self.addr, self.port)
    }

    /// The host's public key line, for a known_hosts file.
    pub fn known_hosts_line(&self) -> String {
        let pubkey = std::fs::read_to_string(self.dir.path().join("host_ed25519.pub")).unwrap();
        let mut parts = pubkey.split_whitespace();
        format!(
            "[{}]:{} {} {}\n",
            self.addr,
            self.port,
            parts.next().unwrap(),
            parts.next().unwrap()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real `ssh-agent` on a socket of its own, killed when dropped.
pub struct Agent {
    child: Child,
    pub sock: PathBuf,
    _dir: tempfile::TempDir,
}

impl Agent {
    pub fn start() -> Agent {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("agent.sock");
        let child = Command::new("ssh-agent")
            .args(["-D", "-a"])
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ssh-agent (openssh-client)");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !sock.exists() {
            assert!(Instant::now() < deadline, "ssh-agent did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        Agent {
            child,
            sock,
            _dir: dir,
        }
    }

    /// `ssh-add` a key file (unprotected) into this agent.
    pub fn add(&self, key: &Path) {
        let st = Command::new("ssh-add")
            .env("SSH_AUTH_SOCK", &self.sock)
            .arg(key)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "ssh-add {}", key.display());
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
