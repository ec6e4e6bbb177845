//! Renders a terminal screen captured with its escapes (`tmux capture-pane -e -p`) as an SVG
//! picture: one cell per character (two for wide ones), the SGR colours (16, 256 and RGB) and
//! attributes (bold, dim, italic, underline, reverse) that tmux writes. Used by
//! `assets/make-screenshots.sh` for the README's pictures; no network, no fonts shipped.
//!
//! Usage: `cargo run --example ansi_svg -- TITLE < capture.txt > picture.svg`

use std::fmt::Write as _;
use std::io::Read;

use unicode_width::UnicodeWidthChar;

const CELL_W: f32 = 8.4;
const CELL_H: f32 = 18.0;
const PAD: f32 = 12.0;
const BAR: f32 = 28.0;
const BG: &str = "#1e1e2e";
const FG: &str = "#d4d4d4";

const ANSI16: [&str; 16] = [
    "#1e1e2e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#d4d4d4",
    "#5c6370", "#ff7b86", "#b5e890", "#ffd68a", "#82c4ff", "#e09aff", "#7fd8e3", "#ffffff",
];

#[derive(Clone, Copy, PartialEq, Default)]
struct Style {
    fg: Option<(u8, u8, u8)>,
    bg: Option<(u8, u8, u8)>,
    bold: bool,
    dim: bool,
    italic: bool,
    underline: bool,
    reverse: bool,
}

fn hex(s: &str) -> (u8, u8, u8) {
    let v = u32::from_str_radix(&s[1..], 16).unwrap_or(0);
    ((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

fn indexed(n: u8) -> (u8, u8, u8) {
    match n {
        0..=15 => hex(ANSI16[usize::from(n)]),
        16..=231 => {
            let i = n - 16;
            let level = |c: u8| if c == 0 { 0 } else { 55 + c * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + (n - 232) * 10;
            (v, v, v)
        }
    }
}

/// Applies one SGR parameter list to `style`.
fn sgr(params: &str, style: &mut Style) {
    let nums: Vec<u16> = params
        .split([';', ':'])
        .map(|p| p.parse().unwrap_or(0))
        .collect();
    let mut i = 0;
    while i < nums.len() {
        let n = nums[i];
        match n {
            0 => *style = Style::default(),
            1 => style.bold = true,
            2 => style.dim = true,
            3 => style.italic = true,
            4 => style.underline = true,
            7 => style.reverse = true,
            22 => (style.bold, style.dim) = (false, false),
            23 => style.italic = false,
            24 => style.underline = false,
            27 => style.reverse = false,
            30..=37 => style.fg = Some(indexed((n - 30) as u8)),
            90..=97 => style.fg = Some(indexed((n - 90 + 8) as u8)),
            40..=47 => style.bg = Some(indexed((n - 40) as u8)),
            100..=107 => style.bg = Some(indexed((n - 100 + 8) as u8)),
            39 => style.fg = None,
            49 => style.bg = None,
            38 | 48 | 58 => {
                let color = match nums.get(i + 1) {
                    Some(5) => {
                        let c = nums.get(i + 2).map(|v| indexed(*v as u8));
                        i += 2;
                        c
                    }
                    Some(2) => {
                        let c = |k: usize| nums.get(i + k).copied().unwrap_or(0) as u8;
                        let rgb = (c(2), c(3), c(4));
                        i += 4;
                        Some(rgb)
                    }
                    _ => None,
                };
                match n {
                    38 => style.fg = color,
                    48 => style.bg = color,
                    _ => {}
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// The screen as rows of (character, style, width) cells.
fn parse(text: &str) -> Vec<Vec<(char, Style, usize)>> {
    let mut rows = Vec::new();
    let mut style = Style::default();
    for line in text.lines() {
        let mut row = Vec::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    let mut params = String::new();
                    for p in chars.by_ref() {
                        if p.is_ascii_digit() || p == ';' || p == ':' || p == '?' {
                            params.push(p);
                        } else {
                            if p == 'm' {
                                sgr(&params, &mut style);
                            }
                            break;
                        }
                    }
                }
                continue;
            }
            let width = c.width().unwrap_or(0);
            if width > 0 {
                row.push((c, style, width));
            }
        }
        rows.push(row);
    }
    rows
}

fn rgb((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn render(title: &str, rows: &[Vec<(char, Style, usize)>]) -> String {
    let cols = rows
        .iter()
        .map(|r| r.iter().map(|c| c.2).sum::<usize>())
        .max()
        .unwrap_or(0)
        .max(80);
    let width = PAD * 2.0 + cols as f32 * CELL_W;
    let height = BAR + PAD * 2.0 + rows.len() as f32 * CELL_H;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" role="img" aria-label="{title}">
<title>{title}</title>
<rect width="100%" height="100%" rx="8" fill="{BG}"/>
<circle cx="20" cy="14" r="6" fill="#ff5f57"/><circle cx="40" cy="14" r="6" fill="#febc2e"/><circle cx="60" cy="14" r="6" fill="#28c840"/>
<text x="{:.0}" y="19" fill="#8b8b9b" font-family="sans-serif" font-size="12" text-anchor="middle">{title}</text>
<g font-family="'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="14" xml:space="preserve">
"##,
        width / 2.0,
        title = escape(title),
    );
    for (y, row) in rows.iter().enumerate() {
        let top = BAR + PAD + y as f32 * CELL_H;
        let mut col = 0usize;
        let mut i = 0;
        while i < row.len() {
            let style = row[i].1;
            let start = col;
            let mut text = String::new();
            while i < row.len() && row[i].1 == style {
                text.push(row[i].0);
                col += row[i].2;
                i += 1;
            }
            let (mut fg, mut bg) = (style.fg.map(rgb), style.bg.map(rgb));
            if style.reverse {
                let f = fg.take().unwrap_or_else(|| FG.to_string());
                let b = bg.take().unwrap_or_else(|| BG.to_string());
                (fg, bg) = (Some(b), Some(f));
            }
            let x = PAD + start as f32 * CELL_W;
            let w = (col - start) as f32 * CELL_W;
            if let Some(bg) = bg {
                let _ = writeln!(
                    svg,
                    r#"<rect x="{x:.1}" y="{top:.1}" width="{w:.1}" height="{CELL_H}" fill="{bg}"/>"#
                );
            }
            if text.trim().is_empty() {
                continue;
            }
            let mut attrs = format!(r#" fill="{}""#, fg.unwrap_or_else(|| FG.to_string()));
            if style.bold {
                attrs.push_str(r#" font-weight="bold""#);
            }
            if style.dim {
                attrs.push_str(r#" opacity="0.6""#);
            }
            if style.italic {
                attrs.push_str(r#" font-style="italic""#);
            }
            if style.underline {
                attrs.push_str(r#" text-decoration="underline""#);
            }
            let _ = writeln!(
                svg,
                r#"<text x="{x:.1}" y="{:.1}" textLength="{w:.1}" lengthAdjust="spacingAndGlyphs"{attrs}>{}</text>"#,
                top + CELL_H * 0.75,
                escape(&text)
            );
        }
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

fn main() {
    let title = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "teamlead".to_string());
    let mut input = String::new();
    if std::io::stdin().read_to_string(&mut input).is_err() {
        eprintln!("ansi_svg: standard input is not UTF-8 text");
        std::process::exit(1);
    }
    print!("{}", render(&title, &parse(&input)));
}
