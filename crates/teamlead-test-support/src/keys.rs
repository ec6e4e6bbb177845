//! How a test types into the lead, whatever carries its keys (a pseudo-terminal, a tmux pane,
//! a Zellij client): [`Keyboard`] is a lead's screen and keys, and its provided methods are
//! what a person does with them.
//!
//! - The composer: [`Keyboard::type_keys`] types text and waits until the composer's row shows
//!   it; a key that never arrives (nothing changes for [`SETTLE`]) is noticed, and only what
//!   is missing is typed again (or the line is cleared and typed again when what shows is not
//!   the start of the text). [`Keyboard::type_line`] then presses Enter.
//! - The approval dialogs: a dialog ignores keys for its grace period
//!   (`teamlead::ui::modal::guard::GRACE_MS`) and shows nothing while it does, so
//!   [`Keyboard::wait_out_grace`] presses a key that changes nothing an answer depends on (→
//!   moves the permission dialog's selection; →, then ← back, moves the plan dialog's mode)
//!   until the dialog shows its effect, waiting longer after each press (a key pressed again
//!   before the one taken is drawn would be taken twice), then until the screen is quiet.
//!   [`Keyboard::approve`] opens the dialog on purpose (Ctrl+P), waits out the grace period,
//!   presses `y` once and waits until the request is answered.

use std::time::{Duration, Instant};

/// How long any wait here may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// How long nothing may change on screen before a typed key counts as lost.
pub const SETTLE: Duration = Duration::from_secs(2);

/// How long the first press of [`Keyboard::press_until`] is given to show its effect before
/// the key is pressed again (a dialog in its grace period drops it, so nothing shows); each
/// later press gets twice as long as the one before, up to [`SETTLE`]. Pressed again too soon,
/// a key that was taken but not drawn yet would be taken twice.
const PROBE: Duration = Duration::from_millis(200);

/// How long the screen must stay the same before no key pressed earlier counts as still on
/// its way.
const QUIET: Duration = Duration::from_millis(300);

/// A key a test presses (text is typed with [`Keyboard::type_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Enter,
    Esc,
    Up,
    Down,
    Left,
    Right,
    /// Ctrl+P: the approvals dialog, on purpose.
    CtrlP,
    /// Ctrl+U: clears the composer's line up to the cursor.
    CtrlU,
    Char(char),
}

impl Key {
    /// The bytes a terminal sends for the key.
    pub fn bytes(self) -> Vec<u8> {
        match self {
            Key::Enter => b"\r".to_vec(),
            Key::Esc => b"\x1b".to_vec(),
            Key::Up => b"\x1b[A".to_vec(),
            Key::Down => b"\x1b[B".to_vec(),
            Key::Right => b"\x1b[C".to_vec(),
            Key::Left => b"\x1b[D".to_vec(),
            Key::CtrlP => b"\x10".to_vec(),
            Key::CtrlU => b"\x15".to_vec(),
            Key::Char(c) => c.to_string().into_bytes(),
        }
    }

    /// The key's name for `tmux send-keys`.
    pub fn tmux_name(self) -> String {
        match self {
            Key::Enter => "Enter".into(),
            Key::Esc => "Escape".into(),
            Key::Up => "Up".into(),
            Key::Down => "Down".into(),
            Key::Left => "Left".into(),
            Key::Right => "Right".into(),
            Key::CtrlP => "C-p".into(),
            Key::CtrlU => "C-u".into(),
            Key::Char(c) => c.to_string(),
        }
    }
}

/// An approval dialog, told apart by its title.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialog {
    Permission,
    Plan,
}

impl Dialog {
    /// The dialog on `screen`, if one is.
    pub fn on(screen: &str) -> Option<Dialog> {
        if screen.contains("needs permission") {
            Some(Dialog::Permission)
        } else if screen.contains("wants to proceed") {
            Some(Dialog::Plan)
        } else {
            None
        }
    }
}

/// The rows of the permission dialog's selected option (`❯ label`).
fn selected(screen: &str) -> Vec<String> {
    screen
        .lines()
        .filter(|l| l.contains("❯ "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The plan dialog's mode (`◂ mode ▸`).
fn plan_mode(screen: &str) -> Option<String> {
    let start = screen.find("◂ ")? + "◂ ".len();
    let len = screen[start..].find(" ▸")?;
    Some(screen[start..start + len].to_string())
}

/// The composer's text as its rows show it (the rounded box whose first row starts with the
/// `>` prompt), one string per row, trailing blanks dropped; `None` when no composer shows.
/// An empty composer shows its placeholder.
pub fn composer_rows(screen: &str) -> Option<Vec<String>> {
    let lines: Vec<&str> = screen.lines().collect();
    let first = lines
        .iter()
        .rposition(|l| l.trim_start().starts_with("│> ") || l.trim() == "│>")?;
    let mut rows = Vec::new();
    for line in &lines[first..] {
        let line = line.trim_start();
        let Some(inner) = line.strip_prefix('│') else {
            break;
        };
        let inner = inner.trim_end();
        let inner = inner.strip_suffix('│').unwrap_or(inner);
        // The prompt (first row) or the text's indent (the rows after).
        let text = inner
            .strip_prefix("> ")
            .or_else(|| inner.strip_prefix("  "))
            .unwrap_or(inner.trim_start_matches('>'));
        rows.push(text.trim_end().to_string());
    }
    Some(rows)
}

/// How far the composer's rows show `text`.
#[derive(Debug, PartialEq, Eq)]
enum Shown {
    /// The first `n` bytes of `text` (a row break stands for the blanks the composer wrapped
    /// at; blanks after the last row do not show).
    Prefix(usize),
    /// Something that is not the start of `text`.
    Other,
}

fn shown(rows: &[String], text: &str) -> Shown {
    let mut at = 0;
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            at += text[at..].len() - text[at..].trim_start().len();
        }
        if !text[at..].starts_with(row.as_str()) {
            return Shown::Other;
        }
        at += row.len();
    }
    Shown::Prefix(at)
}

/// A lead a test types into.
pub trait Keyboard {
    /// What the lead's screen shows.
    fn screen(&self) -> String;

    /// Types `text` literally.
    fn type_text(&self, text: &str);

    /// Presses one key.
    fn press(&self, key: Key);

    /// What a failed wait shows.
    fn explain(&self) -> String {
        format!("screen:\n{}", self.screen())
    }

    /// Polls the screen until `check` holds; panics after [`WAIT`] with `what`.
    fn poll_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        let start = Instant::now();
        loop {
            if check(&self.screen()) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out after {WAIT:?} waiting for {what}\n{}",
                self.explain()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types `text` into the composer (which holds nothing typed yet) and waits until the
    /// composer's row shows it. When nothing changes for [`SETTLE`] and the text is not all
    /// there, the missing end is typed again; when what shows is not the start of the text,
    /// the line is cleared (Ctrl+U) and typed again.
    fn type_keys(&self, text: &str) {
        let start = Instant::now();
        let want = text.trim_end();
        self.type_text(text);
        let mut last = None;
        let mut since = Instant::now();
        loop {
            let rows = composer_rows(&self.screen());
            let now = rows.as_ref().map(|r| shown(r, text));
            if let Some(Shown::Prefix(n)) = now
                && n >= want.len()
            {
                return;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out after {WAIT:?} waiting for the composer to show `{text}`; it shows \
                 {rows:?}\n{}",
                self.explain()
            );
            if rows != last {
                last = rows;
                since = Instant::now();
            } else if since.elapsed() >= SETTLE {
                match now {
                    Some(Shown::Prefix(n)) => self.type_text(&text[n..]),
                    Some(Shown::Other) => {
                        self.press(Key::CtrlU);
                        self.type_text(text);
                    }
                    None => {}
                }
                since = Instant::now();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Types a one-line composer input ([`Keyboard::type_keys`]) and presses Enter.
    fn type_line(&self, line: &str) {
        self.type_keys(line);
        self.press(Key::Enter);
    }

    /// Presses `key` until `done(screen)` holds, giving each press longer to show than the
    /// one before ([`PROBE`], doubling up to [`SETTLE`]).
    fn press_until(&self, key: Key, what: &str, done: impl Fn(&str) -> bool) {
        let start = Instant::now();
        let mut wait = PROBE;
        loop {
            self.press(key);
            let pressed = Instant::now();
            while pressed.elapsed() < wait {
                if done(&self.screen()) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out after {WAIT:?} pressing {key:?} for {what}\n{}",
                self.explain()
            );
            wait = (wait * 2).min(SETTLE);
        }
    }

    /// Waits until the screen has stayed the same for [`QUIET`]: a key pressed before has
    /// been drawn by then.
    fn wait_quiet(&self) {
        let start = Instant::now();
        let mut last = self.screen();
        let mut since = Instant::now();
        while since.elapsed() < QUIET {
            assert!(
                start.elapsed() < WAIT,
                "the screen did not settle within {WAIT:?}\n{}",
                self.explain()
            );
            std::thread::sleep(Duration::from_millis(20));
            let now = self.screen();
            if now != last {
                last = now;
                since = Instant::now();
            }
        }
    }

    /// Waits until the approval dialog on top (opened on purpose: a dialog that took the
    /// keyboard by itself gives a key in its grace period to the composer) takes keys: presses
    /// a key that changes nothing an answer depends on until it shows its effect, then waits
    /// until the screen is quiet (no press still on its way). The permission dialog's
    /// selection moves (`y`, `a` and `n` answer whatever is selected); the plan dialog's mode
    /// moves and is moved back, one press at a time.
    fn wait_out_grace(&self) {
        // Ctrl+P may bring another dialog to the top (permissions before plans) after the
        // screen was read: a dialog that changes under the presses starts the wait again.
        loop {
            let screen = self.screen();
            let kind = Dialog::on(&screen);
            match kind {
                Some(Dialog::Permission) => {
                    let before = selected(&screen);
                    self.press_until(Key::Right, "the permission dialog to take keys", |s| {
                        Dialog::on(s) != kind || selected(s) != before
                    });
                    self.wait_quiet();
                    if Dialog::on(&self.screen()) != kind {
                        continue;
                    }
                    return;
                }
                Some(Dialog::Plan) => {
                    let Some(mode) = plan_mode(&screen) else {
                        // Read while the dialog was still being drawn (its border is there,
                        // its mode row not yet): read again once it shows, or another dialog.
                        self.poll_screen("the plan dialog's mode", |s| {
                            Dialog::on(s) != kind || plan_mode(s).is_some()
                        });
                        continue;
                    };
                    self.press_until(Key::Right, "the plan dialog to take keys", |s| {
                        Dialog::on(s) != kind || plan_mode(s).is_some_and(|m| m != mode)
                    });
                    self.wait_quiet();
                    if Dialog::on(&self.screen()) != kind {
                        continue;
                    }
                    // Back to the mode it offered (a key after the grace period is never
                    // dropped).
                    loop {
                        let now = plan_mode(&self.screen());
                        if now.as_deref() == Some(mode.as_str()) {
                            break;
                        }
                        self.press(Key::Left);
                        self.poll_screen("the plan dialog's mode to move back", |s| {
                            plan_mode(s) != now
                        });
                    }
                    return;
                }
                None => panic!("no approval dialog on screen\n{}", self.explain()),
            }
        }
    }

    /// Opens the approvals dialog on purpose (Ctrl+P) and waits until it shows and takes keys.
    /// Ctrl+P is pressed again once the dialog shows: a request that arrived after the first
    /// (or a dialog that took the keyboard by itself meanwhile) is then on top, and Ctrl+P
    /// makes it count as opened on purpose without restarting its grace period.
    fn open_approvals(&self) -> Dialog {
        self.press(Key::CtrlP);
        self.poll_screen("the approvals dialog", |s| Dialog::on(s).is_some());
        self.press(Key::CtrlP);
        self.wait_out_grace();
        Dialog::on(&self.screen()).expect("a dialog on screen")
    }

    /// Approves the request at the head of the approvals queue with `y`: opens the dialog on
    /// purpose, waits out its grace period, presses `y` once and waits until the dialog has
    /// moved on (the permission dialog gone or showing the next request, which nothing has
    /// selected yet; the plan gone or another plan).
    fn approve(&self) {
        let dialog = self.open_approvals();
        let body = plan_body(&self.screen());
        self.press(Key::Char('y'));
        self.poll_screen("the request answered", |s| match (dialog, Dialog::on(s)) {
            (_, None) => true,
            (Dialog::Permission, Some(Dialog::Permission)) => selected(s).is_empty(),
            (Dialog::Plan, Some(Dialog::Plan)) => plan_body(s) != body,
            _ => true,
        });
    }
}

/// The plan dialog's text (its rows from the title to the mode), which tells one plan from
/// the next.
fn plan_body(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip_while(|l| !l.contains("wants to proceed"))
        .take_while(|l| !l.contains("◂ "))
        .map(|l| l.trim().to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    #[test]
    fn composer_rows_are_read_inside_the_box() {
        let screen = "transcript\n╭──────╮\n│> /spawn a  │\n│  say hi    │\n╰──────╯\nfooter";
        let rows = composer_rows(screen).unwrap();
        assert_eq!(rows, vec!["/spawn a", "say hi"]);
        assert_eq!(shown(&rows, "/spawn a say hi"), Shown::Prefix(15));
        assert_eq!(shown(&rows, "/spawn a say hi there"), Shown::Prefix(15));
        assert_eq!(shown(&rows, "/spawn b"), Shown::Other);
        assert_eq!(composer_rows("no box here"), None);
    }

    /// A composer that loses keys: the `drop`th typed character never arrives, and `extra`
    /// arrives once after the first character.
    struct Lossy {
        text: RefCell<String>,
        typed: RefCell<usize>,
        drop: usize,
        extra: Option<char>,
        sent: RefCell<Vec<String>>,
    }

    impl Lossy {
        fn new(drop: usize, extra: Option<char>) -> Lossy {
            Lossy {
                text: RefCell::new(String::new()),
                typed: RefCell::new(0),
                drop,
                extra,
                sent: RefCell::new(Vec::new()),
            }
        }
    }

    impl Keyboard for Lossy {
        fn screen(&self) -> String {
            format!("╭────╮\n│> {}    │\n╰────╯", self.text.borrow())
        }
        fn type_text(&self, text: &str) {
            self.sent.borrow_mut().push(text.to_string());
            for c in text.chars() {
                let n = {
                    let mut typed = self.typed.borrow_mut();
                    *typed += 1;
                    *typed
                };
                if n != self.drop {
                    self.text.borrow_mut().push(c);
                }
                if n == 1
                    && let Some(extra) = self.extra
                {
                    self.text.borrow_mut().push(extra);
                }
            }
        }
        fn press(&self, key: Key) {
            if key == Key::CtrlU {
                self.text.borrow_mut().clear();
            }
        }
    }

    #[test]
    fn a_lost_key_at_the_end_is_typed_again_alone() {
        let lead = Lossy::new(5, None);
        lead.type_keys("/team");
        assert_eq!(*lead.text.borrow(), "/team");
        assert_eq!(*lead.sent.borrow(), vec!["/team", "m"]);
    }

    /// A plan dialog whose first read catches it half drawn (its border, not yet its mode
    /// row), as a read between two writes of the terminal does; its mode moves with the arrows.
    #[derive(Default)]
    struct HalfDrawnPlan {
        reads: Cell<usize>,
        mode: Cell<usize>,
    }

    const PLAN_MODES: [&str; 2] = ["default", "acceptEdits"];

    impl Keyboard for HalfDrawnPlan {
        fn screen(&self) -> String {
            self.reads.set(self.reads.get() + 1);
            let border = "╭  @reviewer  wants to proceed with this plan ──────╮";
            if self.reads.get() == 1 {
                return format!("transcript\n{border}\ntranscript");
            }
            format!(
                "{border}\n│ ◂ {} ▸ │\n╰──────╯",
                PLAN_MODES[self.mode.get()]
            )
        }
        fn type_text(&self, _: &str) {}
        fn press(&self, key: Key) {
            let (mode, n) = (self.mode.get(), PLAN_MODES.len());
            match key {
                Key::Right => self.mode.set((mode + 1) % n),
                Key::Left => self.mode.set((mode + n - 1) % n),
                _ => {}
            }
        }
    }

    #[test]
    fn a_plan_dialog_read_half_drawn_is_read_again() {
        let lead = HalfDrawnPlan::default();
        lead.wait_out_grace();
        assert_eq!(plan_mode(&lead.screen()).as_deref(), Some("default"));
    }

    #[test]
    fn a_line_that_went_wrong_is_cleared_and_typed_again() {
        let lead = Lossy::new(3, None);
        lead.type_keys("/team");
        assert_eq!(*lead.text.borrow(), "/team");
        let stray = Lossy::new(0, Some('x'));
        stray.type_keys("/team");
        assert_eq!(*stray.text.borrow(), "/team");
        assert_eq!(*stray.sent.borrow(), vec!["/team", "/team"]);
    }
}
