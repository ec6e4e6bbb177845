//! One key chord ([`KeySpec`]): whether a terminal key event is it, its label in hints and
//! help (`ctrl+c`, `shift+tab`, `↑`), and the same text read back (the config file's keys).

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// One key chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySpec {
    pub code: KeyCode,
    pub mods: KeyModifiers,
}

impl KeySpec {
    /// Whether a key event is this chord. Shift is ignored for characters (it is already in the
    /// character) and for Shift+Tab (terminals differ in reporting it).
    pub fn matches(&self, event: &KeyEvent) -> bool {
        match (self.code, event.code) {
            (KeyCode::BackTab, KeyCode::BackTab) => true,
            (KeyCode::Char(a), KeyCode::Char(b)) => {
                a == b && self.mods == event.modifiers.difference(KeyModifiers::SHIFT)
            }
            (a, b) => a == b && self.mods == event.modifiers,
        }
    }

    /// `ctrl+c`, `shift+tab`, `↑`, `enter`, `y`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("ctrl+");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("alt+");
        }
        if self.mods.contains(KeyModifiers::SHIFT) {
            out.push_str("shift+");
        }
        match self.code {
            KeyCode::Char(' ') => out.push_str("space"),
            KeyCode::Char(c) => out.push(c),
            KeyCode::Enter => out.push_str("enter"),
            KeyCode::Esc => out.push_str("esc"),
            KeyCode::Tab => out.push_str("tab"),
            KeyCode::BackTab => out.push_str("shift+tab"),
            KeyCode::Up => out.push('↑'),
            KeyCode::Down => out.push('↓'),
            KeyCode::Left => out.push('←'),
            KeyCode::Right => out.push('→'),
            KeyCode::PageUp => out.push_str("pgup"),
            KeyCode::PageDown => out.push_str("pgdn"),
            KeyCode::Backspace => out.push_str("backspace"),
            KeyCode::F(n) => out.push_str(&format!("f{n}")),
            other => out.push_str(&format!("{other:?}").to_lowercase()),
        }
        out
    }

    /// Reads a chord as [`KeySpec::label`] writes it, and the usual spellings: modifiers
    /// `ctrl+`, `alt+`, `shift+` (any case, in any order) before one key: a character, `space`,
    /// `enter`, `esc`, `tab`, `backspace`, `up`/`↑`, `down`/`↓`, `left`/`←`, `right`/`→`,
    /// `pgup`/`pageup`, `pgdn`/`pagedown`, `home`, `end`, `insert`, `delete`, `f1`…`f12`.
    /// `shift+` and a letter is the capital letter.
    pub fn parse(text: &str) -> Result<KeySpec, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty key".to_string());
        }
        let mut mods = KeyModifiers::NONE;
        let mut rest = text;
        loop {
            let lower = rest.to_ascii_lowercase();
            let (flag, len) = if lower.starts_with("ctrl+") {
                (KeyModifiers::CONTROL, 5)
            } else if lower.starts_with("alt+") {
                (KeyModifiers::ALT, 4)
            } else if lower.starts_with("shift+") {
                (KeyModifiers::SHIFT, 6)
            } else {
                break;
            };
            if rest.len() == len {
                break;
            }
            mods |= flag;
            rest = &rest[len..];
        }
        let mut chars = rest.chars();
        let single = match (chars.next(), chars.next()) {
            (Some(c), None) => Some(c),
            _ => None,
        };
        let code = match rest.to_ascii_lowercase().as_str() {
            "space" => KeyCode::Char(' '),
            "enter" | "return" => KeyCode::Enter,
            "esc" | "escape" => KeyCode::Esc,
            "tab" => KeyCode::Tab,
            "backtab" => KeyCode::BackTab,
            "backspace" => KeyCode::Backspace,
            "up" | "↑" => KeyCode::Up,
            "down" | "↓" => KeyCode::Down,
            "left" | "←" => KeyCode::Left,
            "right" | "→" => KeyCode::Right,
            "pgup" | "pageup" => KeyCode::PageUp,
            "pgdn" | "pagedown" => KeyCode::PageDown,
            "home" => KeyCode::Home,
            "end" => KeyCode::End,
            "insert" => KeyCode::Insert,
            "delete" | "del" => KeyCode::Delete,
            f if f.starts_with('f')
                && f[1..].parse::<u8>().is_ok_and(|n| (1..=12).contains(&n)) =>
            {
                KeyCode::F(f[1..].parse().unwrap_or(1))
            }
            _ => match single {
                // Terminals report ctrl and alt with a letter in lower case.
                Some(c) if mods.intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) => {
                    KeyCode::Char(c.to_ascii_lowercase())
                }
                Some(c) => KeyCode::Char(c),
                None => {
                    return Err(format!(
                        "`{text}` is not a key (see `teamlead config init`)"
                    ));
                }
            },
        };
        Ok(match code {
            KeyCode::Tab if mods.contains(KeyModifiers::SHIFT) => KeySpec {
                code: KeyCode::BackTab,
                mods: KeyModifiers::NONE,
            },
            KeyCode::BackTab => KeySpec {
                code,
                mods: KeyModifiers::NONE,
            },
            // Shift is in the character (`shift+k` is `K`).
            KeyCode::Char(c) if mods.contains(KeyModifiers::SHIFT) => KeySpec {
                code: KeyCode::Char(c.to_uppercase().next().unwrap_or(c)),
                mods: mods.difference(KeyModifiers::SHIFT),
            },
            _ => KeySpec { code, mods },
        })
    }

    /// Whether pressing it would otherwise type a character (no ctrl or alt).
    pub fn types_text(&self) -> bool {
        matches!(self.code, KeyCode::Char(_))
            && !self
                .mods
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_read_back() {
        for binding in super::super::KEYMAP {
            for key in binding.keys {
                assert_eq!(KeySpec::parse(&key.label()), Ok(*key), "{}", key.label());
            }
        }
    }

    #[test]
    fn usual_spellings() {
        let k = |t: &str| KeySpec::parse(t).unwrap();
        assert_eq!(k("Ctrl+N"), k("ctrl+n"));
        assert_eq!(k("shift+k"), k("K"));
        assert_eq!(k("shift+tab"), k("backtab"));
        assert_eq!(k("up"), k("↑"));
        assert_eq!(k("f5").code, KeyCode::F(5));
        assert_eq!(k("+").code, KeyCode::Char('+'));
        assert_eq!(k("ctrl++").code, KeyCode::Char('+'));
        assert!(KeySpec::parse("ctrl+nope").is_err());
        assert!(KeySpec::parse("").is_err());
        assert!(k("x").types_text() && !k("ctrl+x").types_text() && !k("enter").types_text());
    }
}
