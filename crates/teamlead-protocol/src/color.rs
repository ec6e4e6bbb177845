//! The teammate palette (PROTOCOL.md 7): assigned round-robin per lead session, fixed at spawn.

use std::fmt;

/// One palette color.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Color {
    Red,
    Blue,
    Green,
    Yellow,
    Purple,
    Orange,
    Pink,
    Cyan,
}

impl Color {
    /// The palette in assignment order.
    pub(crate) const PALETTE: [Color; 8] = [
        Color::Red,
        Color::Blue,
        Color::Green,
        Color::Yellow,
        Color::Purple,
        Color::Orange,
        Color::Pink,
        Color::Cyan,
    ];

    /// The name written to files.
    pub fn as_str(self) -> &'static str {
        match self {
            Color::Red => "red",
            Color::Blue => "blue",
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Purple => "purple",
            Color::Orange => "orange",
            Color::Pink => "pink",
            Color::Cyan => "cyan",
        }
    }

    /// Parses a palette name; anything else is `None`.
    pub fn parse(s: &str) -> Option<Color> {
        Color::PALETTE.into_iter().find(|c| c.as_str() == s)
    }

    /// The `n`-th color of the round-robin.
    pub fn nth(n: usize) -> Color {
        Color::PALETTE[n % Color::PALETTE.len()]
    }

    /// The tmux color name (`purple → magenta`, `orange → colour208`, `pink → colour205`).
    pub fn tmux_name(self) -> &'static str {
        match self {
            Color::Purple => "magenta",
            Color::Orange => "colour208",
            Color::Pink => "colour205",
            other => other.as_str(),
        }
    }

    /// The 256-color index used by terminal renderers.
    pub fn ansi256(self) -> u8 {
        match self {
            Color::Red => 1,
            Color::Blue => 4,
            Color::Green => 2,
            Color::Yellow => 3,
            Color::Purple => 5,
            Color::Orange => 208,
            Color::Pink => 205,
            Color::Cyan => 6,
        }
    }
}

impl fmt::Display for Color {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
