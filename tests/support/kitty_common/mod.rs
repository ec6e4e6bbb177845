//! A real kitty (Debian's 0.26) under its own Xvfb for the kitty tests: the X server picks a free
//! display (`-displayfd`) and keeps its screen in a file (`-fbdir`), so a test can count the
//! pixels a person would see; kitty runs with remote control on a private socket, its own HOME
//! and config, one window (`sleep`) that stands for the lead's. Both are killed on drop, the
//! windows' programs with them (kitty hangs up their terminals). `kitty @` makes
//! `$XDG_CONFIG_HOME/kitty` (or `~/.config/kitty`) when it runs: every call of these tests goes
//! through [`RealKitty::program`], which runs it with the temporary HOME and config.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use teamlead::backend::terminals::kitty::{KittyBackend, parse_ls};

/// kitty's own active border color (`--config NONE`): the border of the window with the keyboard.
pub const KITTY_ACTIVE_BORDER: &str = "#00ff00";

/// How long kitty may take to answer remote control after it starts.
const START_WAIT: Duration = Duration::from_secs(30);

/// One window as `kitty @ ls` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KittyWindow {
    pub tab: String,
    pub id: String,
    pub title: String,
    /// kitty's `is_focused`: the window that has the keyboard.
    pub focused: bool,
    /// The pid of the window's program.
    pub pid: u32,
}

/// Xvfb and kitty, killed on drop.
pub struct RealKitty {
    pub dir: tempfile::TempDir,
    /// A `kitty` that runs the real one with this kitty's HOME and config directory.
    pub program: String,
    xvfb: Child,
    kitty: Child,
    pub listen_on: String,
    /// The X display (`:N`).
    pub display: String,
}

impl RealKitty {
    pub fn start() -> RealKitty {
        let dir = tempfile::tempdir().expect("temp dir");
        let fb = dir.path().join("fb");
        std::fs::create_dir(&fb).expect("framebuffer dir");
        let mut xvfb = Command::new("Xvfb")
            .args(["-displayfd", "1", "-screen", "0", "1280x800x24"])
            .arg("-fbdir")
            .arg(&fb)
            .args(["-nolisten", "tcp"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb is installed (apt-get install xvfb)");
        let mut number = String::new();
        let mut out = xvfb.stdout.take().expect("Xvfb's stdout");
        let mut byte = [0u8; 1];
        while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
            number.push(byte[0] as char);
        }
        let display = format!(":{}", number.trim());
        let program = dir.path().join("kitty");
        let wrapper = format!(
            "#!/bin/sh\nHOME='{home}' XDG_CONFIG_HOME='{home}/config' exec kitty \"$@\"\n",
            home = dir.path().display()
        );
        std::fs::write(&program, wrapper).expect("the kitty wrapper");
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("an executable wrapper");
        let program = program.to_string_lossy().into_owned();
        let socket = dir.path().join("kitty.sock");
        let listen_on = format!("unix:{}", socket.display());
        let kitty = Command::new("kitty")
            .args([
                "--config",
                "NONE",
                "-o",
                "allow_remote_control=yes",
                "-o",
                "enabled_layouts=splits",
                "--listen-on",
                &listen_on,
                "sh",
                "-c",
                "sleep 600",
            ])
            .current_dir(dir.path())
            .env("DISPLAY", &display)
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .env("HOME", dir.path())
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env_remove("KITTY_WINDOW_ID")
            .env_remove("KITTY_LISTEN_ON")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kitty is installed (apt-get install kitty)");
        // Built before the checks, so a failed start still kills both.
        let real = RealKitty {
            dir,
            program,
            xvfb,
            kitty,
            listen_on,
            display,
        };
        assert!(number.trim().parse::<u32>().is_ok(), "Xvfb gave no display");
        let start = Instant::now();
        while !KittyBackend::is_available(&real.program, &real.listen_on) {
            assert!(
                start.elapsed() < START_WAIT,
                "kitty's remote control did not answer"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        real
    }

    /// `kitty @ ls`'s JSON (empty when it fails).
    fn ls(&self) -> String {
        Command::new(&self.program)
            .args(["@", "--to", &self.listen_on, "ls"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// (tab, window, title) of every window.
    pub fn windows(&self) -> Vec<(String, String, String)> {
        parse_ls(&self.ls()).unwrap_or_default()
    }

    pub fn tab_of(&self, window: &str) -> Option<String> {
        self.windows()
            .into_iter()
            .find(|(_, w, _)| w == window)
            .map(|(t, _, _)| t)
    }

    /// Every window with its focus and program, in `ls` order.
    pub fn listed(&self) -> Vec<KittyWindow> {
        let json: serde_json::Value = serde_json::from_str(&self.ls()).unwrap_or_default();
        let mut found = Vec::new();
        for os_window in json.as_array().into_iter().flatten() {
            for tab in os_window["tabs"].as_array().into_iter().flatten() {
                for w in tab["windows"].as_array().into_iter().flatten() {
                    found.push(KittyWindow {
                        tab: tab["id"].to_string(),
                        id: w["id"].to_string(),
                        title: w["title"].as_str().unwrap_or_default().to_string(),
                        focused: w["is_focused"].as_bool().unwrap_or(false),
                        pid: w["pid"].as_u64().unwrap_or(0) as u32,
                    });
                }
            }
        }
        found
    }

    /// What a window shows (`kitty @ get-text`; empty when it cannot be read).
    pub fn text_of(&self, window: &str) -> String {
        Command::new(&self.program)
            .args(["@", "--to", &self.listen_on, "get-text", "--match"])
            .arg(format!("id:{window}"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// The window that has the keyboard.
    pub fn focused(&self) -> Option<String> {
        self.listed().into_iter().find(|w| w.focused).map(|w| w.id)
    }

    /// How many pixels of the screen have this color (`#rrggbb`), as Xvfb last drew it.
    pub fn pixels_of(&self, hex: &str) -> usize {
        let want = u32::from_str_radix(hex.trim_start_matches('#'), 16).expect("#rrggbb");
        self.screen_colors().get(&want).copied().unwrap_or(0)
    }

    /// Every color on the screen with its pixel count (Xvfb's XWD file, 32 bits a pixel).
    pub fn screen_colors(&self) -> HashMap<u32, usize> {
        let path: PathBuf = self.dir.path().join("fb").join("Xvfb_screen0");
        let data = std::fs::read(path).expect("Xvfb's screen file");
        let word =
            |at: usize| u32::from_be_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]]);
        let (header, width, height) = (word(0) as usize, word(16) as usize, word(20) as usize);
        let (bits, line, colormap) = (word(44), word(48) as usize, word(76) as usize);
        assert_eq!(bits, 32, "a 24-bit screen keeps 32 bits a pixel");
        let pixels = &data[header + colormap * 12..];
        let mut counts = HashMap::new();
        for y in 0..height {
            for px in pixels[y * line..y * line + width * 4].chunks_exact(4) {
                // Little-endian BGRX.
                let rgb = u32::from(px[2]) << 16 | u32::from(px[1]) << 8 | u32::from(px[0]);
                *counts.entry(rgb).or_insert(0) += 1;
            }
        }
        counts
    }

    /// The environment of a program in kitty's first window (the lead's): the variables the
    /// backend's detection reads, nothing of another terminal or multiplexer, and kitty's
    /// temporary HOME and config directory (the `kitty @` the lead runs makes one).
    pub fn lead_env(&self) -> Vec<(String, String)> {
        let home = self.dir.path();
        let lead = self
            .windows()
            .first()
            .expect("kitty's first window")
            .1
            .clone();
        vec![
            ("KITTY_WINDOW_ID".into(), lead),
            ("KITTY_LISTEN_ON".into(), self.listen_on.clone()),
            ("TERM_PROGRAM".into(), String::new()),
            ("ZELLIJ".into(), String::new()),
            ("ZELLIJ_SESSION_NAME".into(), String::new()),
            ("WEZTERM_PANE".into(), String::new()),
            ("ITERM_SESSION_ID".into(), String::new()),
            ("HOME".into(), home.to_string_lossy().into_owned()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join("config").to_string_lossy().into_owned(),
            ),
        ]
    }
}

impl Drop for RealKitty {
    fn drop(&mut self) {
        let _ = self.kitty.kill();
        let _ = self.kitty.wait();
        let _ = self.xvfb.kill();
        let _ = self.xvfb.wait();
    }
}
