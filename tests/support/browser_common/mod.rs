//! A real headless Chromium for the web view's tests, driven through WebDriver: chromedriver in
//! its own session on a free port, a fresh browser profile, the flags that keep the browser off
//! the network, a phone's viewport (390×844: chromedriver's mobile emulation), and a guard that
//! ends every chromedriver and chromium process it started, a failed test included. `until`
//! polls a script in the page with a deadline; `printed_link` reads the login link.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::json;

use crate::programs;
use crate::server_common::{Server, wait_until};
use crate::web_common::login_link;

/// The window of a phone (CSS pixels): what the browser tests and the README's picture use.
pub const PHONE: (u32, u32) = (390, 844);

/// chromedriver in its own session, and the browser profile; both gone on drop.
pub struct Driver {
    child: Child,
    profile: tempfile::TempDir,
    port: u16,
}

impl Driver {
    pub fn start() -> Driver {
        let driver = programs::required("chromedriver");
        programs::required("chromium");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut cmd = Command::new(driver);
        cmd.arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start chromedriver");
        wait_until(
            "chromedriver to listen",
            || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
            String::new,
        );
        Driver {
            child,
            profile: tempfile::Builder::new()
                .prefix("tl-chromium-")
                .tempdir()
                .unwrap(),
            port,
        }
    }

    /// A browser session the size of a phone.
    pub async fn client(&self) -> Client {
        self.client_scaled(1.0).await
    }

    /// A browser session the size of a phone, drawn at `ratio` device pixels to a CSS pixel.
    /// Chromium keeps a window at least 500 pixels wide, so the phone is chromedriver's mobile
    /// emulation (the viewport, the device pixel ratio and touch), not the window's size.
    pub async fn client_scaled(&self, ratio: f64) -> Client {
        let caps = json!({
            "goog:chromeOptions": {
                "binary": programs::required("chromium"),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--hide-scrollbars",
                    format!("--user-data-dir={}", self.profile.path().display()),
                ],
                "mobileEmulation": {
                    "deviceMetrics": {"width": PHONE.0, "height": PHONE.1, "pixelRatio": ratio, "touch": true, "mobile": true}
                }
            }
        });
        let serde_json::Value::Object(caps) = caps else {
            unreachable!()
        };
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&format!("http://127.0.0.1:{}", self.port))
            .await
            .expect("a browser session")
    }

    /// The processes of this driver's browser (its profile is in their command lines).
    fn browsers(&self) -> Vec<i32> {
        let needle = self.profile.path().display().to_string();
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let pid = e.file_name().to_string_lossy().parse::<i32>().ok()?;
                let line = std::fs::read(e.path().join("cmdline")).ok()?;
                String::from_utf8_lossy(&line)
                    .contains(&needle)
                    .then_some(pid)
            })
            .collect()
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: signals to the driver's own process group and to pids read from /proc.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = self.browsers();
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            for pid in left {
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Polls a script in the page until it returns true.
pub async fn until(c: &Client, what: &str, script: &str) -> Duration {
    let start = Instant::now();
    loop {
        let v = c.execute(script, vec![]).await.expect("run a script");
        if v == json!(true) {
            return start.elapsed();
        }
        if start.elapsed() > Duration::from_secs(30) {
            let text = c
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap_or_default();
            panic!("timed out waiting for {what}; the page says:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The login link `teamlead serve --web` printed on its stdout; the rest of its stdout is read
/// (and dropped) by a thread until the server ends, so the server never writes into a closed pipe.
pub fn printed_link(server: &mut Server) -> String {
    let stdout = server.child.stdout.take().expect("the server's stdout");
    let mut lines = BufReader::new(stdout).lines();
    let link = loop {
        let line = lines.next().expect("the login link").expect("a line");
        if let Some(link) = login_link(&line) {
            break link;
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    link
}

/// A tokio runtime for a test that drives the browser.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}
