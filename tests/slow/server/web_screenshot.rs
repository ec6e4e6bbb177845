//! The README's picture of the web view, made by hand from the real binary in a real headless
//! Chromium at a phone's size (390×844, drawn at twice the pixels): `teamlead serve --web` on a
//! temporary home under /tmp leads two shell teammates, each waiting on a Bash permission
//! request; the page, logged in with the printed link, is saved as `assets/web-phone.png`.
//! Ignored in the suite (it writes into the project); run it after a change to the page:
//!
//! ```sh
//! cargo test --test slow -- --ignored --exact server::web_screenshot::web_phone_screenshot
//! ```

use std::time::{Duration, Instant};

use crate::browser_common::{Driver, PHONE, printed_link, runtime, until};
use crate::server_common::{Ws, wait_until};

/// Where the picture goes, in the project.
const PICTURE: &str = "assets/web-phone.png";

#[test]
#[ignore = "writes assets/web-phone.png: run by hand after a change to the page"]
fn web_phone_screenshot() {
    // A home with a neutral name under /tmp, so no path of the machine's shows.
    let root = tempfile::Builder::new()
        .prefix("teamlead-web-")
        .tempdir_in("/tmp")
        .expect("temp dir");
    for d in ["home", "work", "logs"] {
        std::fs::create_dir(root.path().join(d)).expect("mkdir");
    }
    let ws = Ws {
        root,
        team: "parser-work".into(),
    };
    let mut server = ws.serve(&["--web"]);
    let link = printed_link(&mut server);
    ws.ctl_ok(&["/spawn alpha \"take the tasks\""]);
    ws.ctl_ok(&["/spawn beta \"take the tasks\""]);
    ws.ctl_ok(&["/task add 'Run the parser tests' --command \"cargo test -p parser\""]);
    ws.ctl_ok(&["wait", "--approval", "--timeout", "30"]);
    ws.ctl_ok(&[
        "/task add 'Count the TODOs left' --command \"grep -rc TODO src | sort -t: -k2 -n | tail -3\"",
    ]);
    wait_until(
        "two requests waiting",
        || ws.ctl_ok(&["pending"]).matches("Bash").count() >= 2,
        || ws.ctl_ok(&["pending"]),
    );

    let driver = Driver::start();
    runtime().block_on(async {
        let c = driver.client_scaled(2.0).await;
        c.goto(&link).await.expect("open the login link");
        until(
            &c,
            "two requests, the team and the tasks on the page",
            "return document.getElementById('link').classList.contains('live')
               && document.querySelectorAll('.request[data-kind=permission] button.choice-once').length === 2
               && document.querySelectorAll('#members li').length === 2
               && document.querySelectorAll('#tasks li').length === 2",
        )
        .await;
        let text: String = c
            .execute("return document.body.innerText", vec![])
            .await
            .unwrap()
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            !text.contains("/tmp") && !text.contains("teamlead-web-"),
            "a path shows on the page:\n{text}"
        );
        let size = c
            .execute(
                "return [window.innerWidth, window.innerHeight, document.documentElement.scrollWidth]",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            size,
            serde_json::json!([PHONE.0, PHONE.1, PHONE.0]),
            "[width, height, the page's width]: a phone's viewport, nothing wider"
        );
        // Let the page settle (fonts, layout) before the picture: two frames without a change.
        let start = Instant::now();
        let mut last = Vec::new();
        loop {
            let png = c.screenshot().await.expect("a screenshot");
            if png == last || start.elapsed() > Duration::from_secs(10) {
                break;
            }
            last = png;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PICTURE);
        std::fs::write(&out, &last).expect("write the picture");
        eprintln!("wrote {PICTURE} ({} bytes)", last.len());
        c.close().await.unwrap();
    });
    drop(driver);
    ws.ctl_ok(&["/quit"]);
    server.wait_exit();
}
