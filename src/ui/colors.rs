//! How much colour the terminal gets. [`ColorMode`] is decided once per session: none when
//! `NO_COLOR` is set (and not empty) or `TERM=dumb`; all of it when `COLORTERM` says
//! `truecolor`/`24bit` or `TERM` names a 256-colour or direct-colour terminal; else the 16
//! named colours. The config file's `theme` and the `--theme` flag can pick one instead.
//! [`adapt`] applies the mode to a drawn buffer (every screen and dialog alike), and
//! [`ColorWriter`] to the bytes on their way to the terminal (crossterm writes even the 16
//! named colours as 256-colour escapes, `38;5;N`, which a 16-colour terminal does not know).

use std::io::{self, Write};

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

/// How much colour to use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ColorMode {
    /// Every colour as styled (256-colour palette included).
    #[default]
    Full,
    /// The 16 named colours only, written as the classic SGR codes (`31`, `92`, …).
    Basic,
    /// No colour at all: highlights become reverse video.
    None,
}

impl ColorMode {
    /// The mode the environment asks for (`var` reads a variable).
    pub fn from_env(var: &dyn Fn(&str) -> Option<String>) -> ColorMode {
        let set = |k: &str| var(k).filter(|v| !v.is_empty());
        if set("NO_COLOR").is_some() {
            return ColorMode::None;
        }
        let term = set("TERM").unwrap_or_default().to_ascii_lowercase();
        if term == "dumb" {
            return ColorMode::None;
        }
        let colorterm = set("COLORTERM").unwrap_or_default().to_ascii_lowercase();
        if colorterm.contains("truecolor")
            || colorterm.contains("24bit")
            || term.contains("256color")
            || term.contains("direct")
        {
            ColorMode::Full
        } else {
            ColorMode::Basic
        }
    }

    /// The mode of this process's environment.
    pub fn from_process() -> ColorMode {
        ColorMode::from_env(&|k| std::env::var(k).ok())
    }
}

/// The nearest of the 16 named colours to an RGB value.
fn nearest_named(r: u8, g: u8, b: u8) -> Color {
    const NAMED: [(Color, (u8, u8, u8)); 16] = [
        (Color::Black, (0, 0, 0)),
        (Color::Red, (205, 0, 0)),
        (Color::Green, (0, 205, 0)),
        (Color::Yellow, (205, 205, 0)),
        (Color::Blue, (0, 0, 238)),
        (Color::Magenta, (205, 0, 205)),
        (Color::Cyan, (0, 205, 205)),
        (Color::Gray, (229, 229, 229)),
        (Color::DarkGray, (127, 127, 127)),
        (Color::LightRed, (255, 0, 0)),
        (Color::LightGreen, (0, 255, 0)),
        (Color::LightYellow, (255, 255, 0)),
        (Color::LightBlue, (92, 92, 255)),
        (Color::LightMagenta, (255, 0, 255)),
        (Color::LightCyan, (0, 255, 255)),
        (Color::White, (255, 255, 255)),
    ];
    let d = |(cr, cg, cb): (u8, u8, u8)| {
        let dr = i32::from(cr) - i32::from(r);
        let dg = i32::from(cg) - i32::from(g);
        let db = i32::from(cb) - i32::from(b);
        dr * dr + dg * dg + db * db
    };
    NAMED
        .iter()
        .min_by_key(|(_, rgb)| d(*rgb))
        .map_or(Color::Reset, |(c, _)| *c)
}

/// The RGB value of a 256-colour palette index 16…255.
fn indexed_rgb(i: u8) -> (u8, u8, u8) {
    if i >= 232 {
        let v = 8 + (i - 232) * 10;
        return (v, v, v);
    }
    let i = i - 16;
    let level = |n: u8| if n == 0 { 0 } else { 55 + n * 40 };
    (level(i / 36), level((i / 6) % 6), level(i % 6))
}

/// A colour as the 16 named colours can show it. The palette's two colours that have no name
/// keep apart from red, yellow and purple: orange (208) is light red, pink (205) light magenta.
pub fn basic(color: Color) -> Color {
    match color {
        Color::Indexed(i) if i < 16 => named_index(i),
        Color::Indexed(208) => Color::LightRed,
        Color::Indexed(205) => Color::LightMagenta,
        Color::Indexed(i) => {
            let (r, g, b) = indexed_rgb(i);
            nearest_named(r, g, b)
        }
        Color::Rgb(r, g, b) => nearest_named(r, g, b),
        other => other,
    }
}

fn named_index(i: u8) -> Color {
    const BY_INDEX: [Color; 16] = [
        Color::Black,
        Color::Red,
        Color::Green,
        Color::Yellow,
        Color::Blue,
        Color::Magenta,
        Color::Cyan,
        Color::Gray,
        Color::DarkGray,
        Color::LightRed,
        Color::LightGreen,
        Color::LightYellow,
        Color::LightBlue,
        Color::LightMagenta,
        Color::LightCyan,
        Color::White,
    ];
    BY_INDEX[usize::from(i & 15)]
}

/// Applies `mode` to every cell of a drawn buffer: `Basic` maps the 256-colour palette and
/// RGB to the nearest named colour; `None` takes every colour away and shows a coloured
/// background (a highlight, a banner) as reverse video instead.
pub fn adapt(buf: &mut Buffer, mode: ColorMode) {
    match mode {
        ColorMode::Full => {}
        ColorMode::Basic => {
            for cell in &mut buf.content {
                cell.fg = basic(cell.fg);
                cell.bg = basic(cell.bg);
            }
        }
        ColorMode::None => {
            for cell in &mut buf.content {
                if cell.bg != Color::Reset {
                    cell.modifier.insert(Modifier::REVERSED);
                }
                cell.fg = Color::Reset;
                cell.bg = Color::Reset;
            }
        }
    }
}

/// SGR parameters as the mode allows: `38;5;N`/`48;5;N` below 16 become the classic codes
/// (`Basic`), every colour parameter is dropped (`None`). Returns the new parameter list.
fn rewrite_sgr(params: &str, mode: ColorMode) -> String {
    let parts: Vec<&str> = params.split(';').collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let p = parts[i];
        let n: Option<u16> = p.parse().ok();
        match n {
            Some(base @ (38 | 48 | 58)) => {
                // Extended colour: 5;N or 2;R;G;B.
                let (color, used) = match parts.get(i + 1).and_then(|s| s.parse::<u8>().ok()) {
                    Some(5) => (
                        parts
                            .get(i + 2)
                            .and_then(|s| s.parse::<u8>().ok())
                            .map(|n| basic(Color::Indexed(n))),
                        3,
                    ),
                    Some(2) => {
                        let c = |k: usize| parts.get(i + k).and_then(|s| s.parse::<u8>().ok());
                        let rgb = match (c(2), c(3), c(4)) {
                            (Some(r), Some(g), Some(b)) => Some(nearest_named(r, g, b)),
                            _ => None,
                        };
                        (rgb, 5)
                    }
                    _ => (None, 1),
                };
                i += used;
                if mode == ColorMode::Basic
                    && base != 58
                    && let Some(code) = color.and_then(|c| classic_code(c, base == 48))
                {
                    out.push(code.to_string());
                }
                continue;
            }
            Some(30..=37 | 40..=47 | 90..=97 | 100..=107) if mode == ColorMode::None => {}
            _ => out.push(p.to_string()),
        }
        i += 1;
    }
    out.join(";")
}

/// `31` for red foreground, `101` for light red background.
fn classic_code(color: Color, background: bool) -> Option<u16> {
    let index = match color {
        Color::Black => 0,
        Color::Red => 1,
        Color::Green => 2,
        Color::Yellow => 3,
        Color::Blue => 4,
        Color::Magenta => 5,
        Color::Cyan => 6,
        Color::Gray => 7,
        Color::DarkGray => 8,
        Color::LightRed => 9,
        Color::LightGreen => 10,
        Color::LightYellow => 11,
        Color::LightBlue => 12,
        Color::LightMagenta => 13,
        Color::LightCyan => 14,
        Color::White => 15,
        _ => return None,
    };
    let base = if background { 40 } else { 30 };
    Some(if index < 8 {
        base + index
    } else {
        base + 60 + index - 8
    })
}

/// Rewrites the colour escapes of terminal output for a [`ColorMode`] other than `Full`.
/// Output is held until `flush` (ratatui flushes after every frame), so an escape split
/// between two writes is seen whole.
pub struct ColorWriter<W: Write> {
    out: W,
    mode: ColorMode,
    pending: Vec<u8>,
}

impl<W: Write> ColorWriter<W> {
    pub fn new(out: W, mode: ColorMode) -> ColorWriter<W> {
        ColorWriter {
            out,
            mode,
            pending: Vec::new(),
        }
    }
}

/// `bytes` with every SGR escape rewritten for `mode`.
pub fn rewrite(bytes: &[u8], mode: ColorMode) -> Vec<u8> {
    if mode == ColorMode::Full {
        return bytes.to_vec();
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let start = i + 2;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b';') {
                end += 1;
            }
            if bytes.get(end) == Some(&b'm') {
                let params = String::from_utf8_lossy(&bytes[start..end]);
                let kept = rewrite_sgr(&params, mode);
                if !kept.is_empty() || params.is_empty() {
                    out.extend_from_slice(b"\x1b[");
                    out.extend_from_slice(kept.as_bytes());
                    out.push(b'm');
                }
                i = end + 1;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

impl<W: Write> Write for ColorWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.mode == ColorMode::Full {
            return self.out.write(buf);
        }
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            let bytes = rewrite(&std::mem::take(&mut self.pending), self.mode);
            self.out.write_all(&bytes)?;
        }
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> ColorMode {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ColorMode::from_env(&move |k| {
            pairs
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_environment_decides() {
        assert_eq!(
            env(&[("NO_COLOR", "1"), ("TERM", "xterm-256color")]),
            ColorMode::None
        );
        assert_eq!(
            env(&[("NO_COLOR", ""), ("TERM", "xterm-256color")]),
            ColorMode::Full
        );
        assert_eq!(env(&[("TERM", "xterm")]), ColorMode::Basic);
        assert_eq!(env(&[("TERM", "linux")]), ColorMode::Basic);
        assert_eq!(
            env(&[("TERM", "xterm"), ("COLORTERM", "truecolor")]),
            ColorMode::Full
        );
        assert_eq!(env(&[("TERM", "dumb")]), ColorMode::None);
    }

    #[test]
    fn sixteen_colours_use_classic_codes() {
        let basic = |s: &str| String::from_utf8(rewrite(s.as_bytes(), ColorMode::Basic)).unwrap();
        assert_eq!(basic("\x1b[38;5;9;48;5;0mx"), "\x1b[91;40mx");
        assert_eq!(basic("\x1b[38;5;1m\x1b[39m"), "\x1b[31m\x1b[39m");
        assert_eq!(basic("\x1b[38;5;208m"), "\x1b[91m");
        assert_eq!(basic("\x1b[38;5;196m"), "\x1b[91m");
        assert_eq!(basic("\x1b[1;38;2;0;0;0m"), "\x1b[1;30m");
        assert_eq!(basic("\x1b[2J\x1b[0m"), "\x1b[2J\x1b[0m");
    }

    #[test]
    fn no_colour_drops_every_colour() {
        let none = |s: &str| String::from_utf8(rewrite(s.as_bytes(), ColorMode::None)).unwrap();
        assert_eq!(none("\x1b[38;5;9;48;5;0mx"), "x");
        assert_eq!(none("\x1b[1;31mx\x1b[m"), "\x1b[1mx\x1b[m");
        let mut buf = Buffer::empty(ratatui::layout::Rect::new(0, 0, 2, 1));
        buf[(0, 0)].set_bg(Color::Yellow).set_fg(Color::Black);
        buf[(1, 0)].set_fg(Color::Indexed(208));
        adapt(&mut buf, ColorMode::None);
        assert!(buf[(0, 0)].modifier.contains(Modifier::REVERSED));
        assert_eq!(buf[(1, 0)].fg, Color::Reset);
    }

    #[test]
    fn palette_indices_map_to_the_nearest_named_colour() {
        assert_eq!(basic(Color::Indexed(208)), Color::LightRed);
        assert_eq!(basic(Color::Indexed(205)), Color::LightMagenta);
        assert_eq!(basic(Color::Indexed(9)), Color::LightRed);
        assert_eq!(basic(Color::Red), Color::Red);
    }
}
