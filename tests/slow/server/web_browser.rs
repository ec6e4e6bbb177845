//! The web view in a real headless Chromium, driven through WebDriver (chromedriver and the
//! fantoccini client): `teamlead serve --web` leads a shell teammate whose task needs a Bash
//! permission; a page logs in with the printed link, sees the request, answers it, and sees
//! the teammate run the command (its output in the transcript, with the audit line); a second
//! page open on the same request can no longer answer it; a teammate's markup stays text.
//! The browser runs with a fresh profile and the flags that keep it off the network; every
//! chromedriver and chromium process is ended by the guard, a failed test included.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::programs;
use crate::server_common::{Ws, story, wait_until};
use crate::web_common::login_link;

/// chromedriver in its own session, and the browser profile; both gone on drop.
struct Driver {
    child: Child,
    profile: tempfile::TempDir,
    port: u16,
}

impl Driver {
    fn start() -> Driver {
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

    async fn client(&self) -> Client {
        let caps = json!({
            "goog:chromeOptions": {
                "binary": programs::required("chromium"),
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=390,844",
                    format!("--user-data-dir={}", self.profile.path().display()),
                ]
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
async fn until(c: &Client, what: &str, script: &str) -> Duration {
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

#[test]
fn web_a_browser_logs_in_answers_a_request_and_a_second_page_cannot_answer_it_again() {
    let ws = Ws::new("webteam");
    let mut server = ws.serve(&["--web"]);
    let stdout = server.child.stdout.take().expect("the server's stdout");
    let mut lines = BufReader::new(stdout).lines();
    let link = loop {
        let line = lines.next().expect("the login link").expect("a line");
        if let Some(link) = login_link(&line) {
            break link;
        }
    };
    let base = link.split("/login").next().unwrap().to_string();
    ws.ctl_ok(&["/spawn alpha \"take the tasks\""]);
    ws.ctl_ok(&[
        "/task add '<img src=x onerror=window.pwned=1>' --command \"echo hello-from-the-web\"",
    ]);
    ws.ctl_ok(&["wait", "--approval", "--timeout", "30"]);

    let driver = Driver::start();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let c = driver.client().await;
        c.goto(&link).await.expect("open the login link");
        let shown = until(
            &c,
            "the request on the first page",
            "return !!document.querySelector('.request[data-kind=permission] button.choice-once')",
        )
        .await;
        eprintln!("web_browser: the request was on the page {shown:?} after the login link opened");
        let card = c
            .find(Locator::Css(".request[data-kind=permission]"))
            .await
            .unwrap();
        let text = card.text().await.unwrap();
        assert!(text.contains("echo hello-from-the-web"), "{text}");
        assert!(text.contains("@alpha needs permission"), "{text}");
        let first = c.window().await.unwrap();

        // A second page on the same request.
        let second = c.new_window(true).await.unwrap().handle;
        c.switch_to_window(second.clone()).await.unwrap();
        c.goto(&format!("{base}/")).await.unwrap();
        until(
            &c,
            "the request on the second page",
            "return !!document.querySelector('.request[data-kind=permission]')",
        )
        .await;
        let stale = c
            .execute(
                "const r = document.querySelector('.request[data-kind=permission]'); return [Number(r.dataset.key), r.dataset.digest];",
                vec![],
            )
            .await
            .unwrap();

        // The first page answers.
        c.switch_to_window(first).await.unwrap();
        let clicked = Instant::now();
        c.find(Locator::Css("button.choice-once"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        until(
            &c,
            "the teammate to run the command",
            "return [...document.querySelectorAll('#transcript li')].some(li => li.textContent.includes('hello-from-the-web') && li.dataset.kind === 'teammate')",
        )
        .await;
        eprintln!("web_browser: the command's output was on the page {:?} after the click", clicked.elapsed());
        until(
            &c,
            "the audit line",
            "return document.getElementById('transcript').textContent.includes('allowed once: answered from the web (127.0.0.1)')",
        )
        .await;
        until(&c, "the request gone", "return !document.querySelector('.request')").await;
        // The teammate's markup stayed text.
        let inert = c
            .execute(
                "return [window.pwned === undefined, document.querySelectorAll('img, svg, script:not([src])').length, document.body.textContent.includes('<img src=x onerror=window.pwned=1>')]",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(inert, json!([true, 0, true]), "markup must stay text");

        // The second page: the request went from it by itself, and an answer it still held is
        // refused with 409.
        c.switch_to_window(second).await.unwrap();
        until(&c, "the request gone from the second page", "return !document.querySelector('.request')").await;
        let status = c
            .execute_async(
                "const [key, digest] = arguments[0]; const done = arguments[arguments.length - 1];
                 fetch('/api/session').then(r => r.json()).then(s => fetch('/api/answer', {method: 'POST',
                   headers: {'content-type': 'application/json', 'x-teamlead-csrf': s.csrf},
                   body: JSON.stringify({key, digest, choice: 'once'})})).then(r => done(r.status), e => done(String(e)));",
                vec![stale],
            )
            .await
            .unwrap();
        assert_eq!(status, json!(409), "a second answer");
        c.close().await.unwrap();
    });
    // The lead saw exactly one answer.
    let answers = story(&ws)
        .into_iter()
        .filter(|e| e["kind"] == "permission_answer")
        .count();
    assert_eq!(answers, 1, "answered {answers} times");
    assert!(ws.ctl_ok(&["pending"]).contains("nothing waits"));
    drop(driver);
    ws.ctl_ok(&["/quit"]);
    server.wait_exit();
}
