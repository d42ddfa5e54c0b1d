//! Headless Chromium driven over its DevTools protocol (a WebSocket on 127.0.0.1), with no
//! script of the test's in the page: fields are focused and typed into (`DOM.focus`,
//! `Input.insertText`), buttons clicked with the mouse at their box (`DOM.getBoxModel`,
//! `Input.dispatchMouseEvent`), the page read back as HTML (`DOM.getOuterHTML`) and
//! photographed (`Page.captureScreenshot`). So the same steps work with the page's script
//! turned off (`Emulation.setScriptExecutionDisabled`).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::kube::wait_for;
use super::sushy::free_port;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The DevTools targets as JSON (its server answers HTTP/1.1, by Content-Length).
fn list_targets(addr: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET /json/list HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let text = String::from_utf8_lossy(&raw).into_owned();
        if let Some((head, body)) = text.split_once("\r\n\r\n") {
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().ok())
                })
                .flatten()?;
            if body.len() >= len {
                return Some(body.to_string());
            }
        }
        let n = s.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
    }
}

/// One browser with one page; killed when dropped.
pub struct Browser {
    child: Child,
    ws: TcpStream,
    next: u64,
    /// Events read while waiting for an answer, not yet looked at.
    events: Vec<Value>,
}

impl Browser {
    pub fn start(profile: &Path) -> Browser {
        assert!(Path::new(CHROMIUM).exists(), "{CHROMIUM} is missing");
        let port = free_port();
        let child = Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
            ])
            .arg(format!("--remote-debugging-port={port}"))
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let addr = format!("127.0.0.1:{port}");
        let list = wait_for(30, "Chromium's DevTools", || {
            list_targets(&addr).filter(|b| b.contains("webSocketDebuggerUrl"))
        });
        let targets: Value = serde_json::from_str(&list).unwrap();
        let url = targets
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["type"] == "page")
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .expect("a page target")
            .to_string();
        let path = url.split_once(&addr).unwrap().1.to_string();
        let mut ws = TcpStream::connect(&addr).unwrap();
        ws.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(
            ws,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: cmFja3BsYW4tcG9ydGFsLQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut b = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            ws.read_exact(&mut b).unwrap();
            head.push(b[0]);
        }
        assert!(
            head.starts_with(b"HTTP/1.1 101"),
            "{}",
            String::from_utf8_lossy(&head)
        );
        let mut br = Browser {
            child,
            ws,
            next: 0,
            events: Vec::new(),
        };
        br.call("Page.enable", &json!({}));
        br.call("DOM.enable", &json!({}));
        br
    }

    fn send_frame(&mut self, text: &str) {
        let data = text.as_bytes();
        let mut f = vec![0x81u8];
        match data.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n < 65536 => {
                f.push(0xfe);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0xff);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x5a, 0x17, 0xc3, 0x99];
        f.extend_from_slice(&mask);
        f.extend(data.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.ws.write_all(&f).unwrap();
    }

    fn read_frame(&mut self) -> String {
        let mut text = Vec::new();
        loop {
            let mut h = [0u8; 2];
            self.ws.read_exact(&mut h).unwrap();
            let len = match h[1] & 0x7f {
                126 => {
                    let mut l = [0u8; 2];
                    self.ws.read_exact(&mut l).unwrap();
                    u64::from(u16::from_be_bytes(l))
                }
                127 => {
                    let mut l = [0u8; 8];
                    self.ws.read_exact(&mut l).unwrap();
                    u64::from_be_bytes(l)
                }
                n => u64::from(n),
            };
            let mut data = vec![0u8; len as usize];
            self.ws.read_exact(&mut data).unwrap();
            text.extend_from_slice(&data);
            if h[0] & 0x80 != 0 {
                return String::from_utf8(text).unwrap();
            }
        }
    }

    /// Call `method`; its result (a protocol error fails the test).
    pub fn call(&mut self, method: &str, params: &Value) -> Value {
        self.next += 1;
        let id = self.next;
        let msg = json!({"id": id, "method": method, "params": params}).to_string();
        self.send_frame(&msg);
        loop {
            let v: Value = serde_json::from_str(&self.read_frame()).unwrap();
            if v["id"] == id {
                assert!(v["error"].is_null(), "{method}: {v}");
                return v["result"].clone();
            }
            if v["method"].is_string() {
                self.events.push(v);
            }
        }
    }

    /// Wait for the page's load event (after a navigation or a form's submission).
    pub fn loaded(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(i) = self
                .events
                .iter()
                .position(|e| e["method"] == "Page.loadEventFired")
            {
                self.events.drain(..=i);
                return;
            }
            assert!(Instant::now() < deadline, "no load event in 60 s");
            let v: Value = serde_json::from_str(&self.read_frame()).unwrap();
            self.events.push(v);
        }
    }

    pub fn goto(&mut self, url: &str) {
        self.events.clear();
        self.call("Page.navigate", &json!({"url": url}));
        self.loaded();
    }

    fn node(&mut self, selector: &str) -> u64 {
        let root = self.call("DOM.getDocument", &json!({"depth": 0}))["root"]["nodeId"].clone();
        let n = self.call(
            "DOM.querySelector",
            &json!({"nodeId": root, "selector": selector}),
        )["nodeId"]
            .as_u64()
            .unwrap_or(0);
        assert!(n != 0, "no {selector} in the page:\n{}", self.html());
        n
    }

    /// Type `text` into the field `selector` (after what it holds).
    pub fn type_into(&mut self, selector: &str, text: &str) {
        let n = self.node(selector);
        self.call("DOM.focus", &json!({"nodeId": n}));
        self.call("Input.insertText", &json!({"text": text}));
    }

    /// Set the field `selector` to `text` (its value attribute: what a user would have
    /// typed over).
    pub fn set_value(&mut self, selector: &str, text: &str) {
        let n = self.node(selector);
        self.call(
            "DOM.setAttributeValue",
            &json!({"nodeId": n, "name": "value", "value": text}),
        );
    }

    /// Click the element `selector` with the mouse, and wait for the page it leads to.
    pub fn click(&mut self, selector: &str) {
        let n = self.node(selector);
        self.call("DOM.scrollIntoViewIfNeeded", &json!({"nodeId": n}));
        let q = self.call("DOM.getBoxModel", &json!({"nodeId": n}))["model"]["content"].clone();
        let xs: Vec<f64> = (0..4).map(|i| q[2 * i].as_f64().unwrap()).collect();
        let ys: Vec<f64> = (0..4).map(|i| q[2 * i + 1].as_f64().unwrap()).collect();
        let (x, y) = (xs.iter().sum::<f64>() / 4.0, ys.iter().sum::<f64>() / 4.0);
        self.events.clear();
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                &json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            );
        }
        self.loaded();
    }

    /// The page as HTML.
    pub fn html(&mut self) -> String {
        let root = self.call("DOM.getDocument", &json!({"depth": 0}))["root"]["nodeId"].clone();
        self.call("DOM.getOuterHTML", &json!({"nodeId": root}))["outerHTML"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The page's address now.
    pub fn url(&mut self) -> String {
        let h = self.call("Page.getNavigationHistory", &json!({}));
        let i = h["currentIndex"].as_u64().unwrap_or(0) as usize;
        h["entries"][i]["url"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Turn the page's script off (or on) for what follows.
    pub fn script(&mut self, on: bool) {
        self.call(
            "Emulation.setScriptExecutionDisabled",
            &json!({"value": !on}),
        );
    }

    /// A PNG of the whole page laid out `width` px wide.
    pub fn screenshot(&mut self, width: u32, png: &Path) {
        let metrics = |height: f64| json!({"width": width, "height": height as u32, "deviceScaleFactor": 1, "mobile": width < 600});
        self.call("Emulation.setDeviceMetricsOverride", &metrics(900.0));
        let m = self.call("Page.getLayoutMetrics", &json!({}));
        let height = m["cssContentSize"]["height"].as_f64().unwrap_or(900.0);
        self.call(
            "Emulation.setDeviceMetricsOverride",
            &metrics(height.clamp(600.0, 4000.0)),
        );
        let shot = self.call("Page.captureScreenshot", &json!({"format": "png"}));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        std::fs::write(png, bytes).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
