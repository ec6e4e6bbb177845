//! Terminal styling for command output: ANSI bold/dim and palette colors, only when stdout is
//! a terminal and `NO_COLOR` is not set; plain text otherwise.

use std::io::IsTerminal;

use crate::protocol::Color;

/// Whether to style, decided once per command.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    enabled: bool,
}

impl Style {
    /// Styling for stdout.
    pub fn stdout() -> Style {
        Style {
            enabled: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
        }
    }

    fn wrap(&self, code: &str, text: &str) -> String {
        if self.enabled {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    pub fn bold(&self, text: &str) -> String {
        self.wrap("1", text)
    }

    pub fn dim(&self, text: &str) -> String {
        self.wrap("2", text)
    }

    pub fn warn(&self, text: &str) -> String {
        self.wrap("33", text)
    }

    /// `text` in a palette color (plain when the color is unknown).
    pub fn color(&self, color: Option<&str>, text: &str) -> String {
        match color.and_then(Color::parse) {
            Some(c) => self.wrap(&format!("38;5;{}", c.ansi256()), text),
            None => text.to_string(),
        }
    }
}

/// Pads `text` to `width` characters (styling is applied after padding by callers).
pub fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    if len >= width {
        text.to_string()
    } else {
        format!("{text}{}", " ".repeat(width - len))
    }
}
