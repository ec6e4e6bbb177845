//! Syntax colours for diff lines, by `syntect` (its bundled syntaxes and themes, pure Rust
//! regexes), loaded once on first use. The syntax is chosen by the file's extension only (no
//! file is read: the UI touches none). A file's lines are highlighted as one stream, lazily,
//! as far down as the screen has scrolled.

use std::sync::OnceLock;

use ratatui::style::Color;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn theme() -> Option<&'static Theme> {
    static THEME: OnceLock<Option<Theme>> = OnceLock::new();
    THEME
        .get_or_init(|| {
            let mut set = ThemeSet::load_defaults();
            set.themes.remove("base16-ocean.dark")
        })
        .as_ref()
}

/// A highlighter for one file's lines (`None`: plain text, or no theme).
pub struct Highlighter {
    inner: Option<HighlightLines<'static>>,
}

impl Highlighter {
    pub fn for_path(path: &str) -> Highlighter {
        let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let set = syntaxes();
        let inner = match (set.find_syntax_by_extension(ext), theme()) {
            (Some(syntax), Some(theme)) => Some(HighlightLines::new(syntax, theme)),
            _ => None,
        };
        Highlighter { inner }
    }

    /// The colour of each byte range of `line` (in order, covering it).
    pub fn line(&mut self, line: &str) -> Vec<(usize, usize, Option<Color>)> {
        let Some(h) = self.inner.as_mut() else {
            return vec![(0, line.len(), None)];
        };
        let with_newline = format!("{line}\n");
        let Ok(tokens) = h.highlight_line(&with_newline, syntaxes()) else {
            return vec![(0, line.len(), None)];
        };
        let mut out = Vec::with_capacity(tokens.len());
        let mut at = 0;
        for (style, text) in tokens {
            let end = (at + text.len()).min(line.len());
            if end > at {
                let c = style.foreground;
                out.push((at, end, Some(Color::Rgb(c.r, c.g, c.b))));
            }
            at += text.len();
        }
        out
    }
}
