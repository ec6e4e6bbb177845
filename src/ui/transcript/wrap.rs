//! Word wrapping of styled lines into screen rows, with a hanging indent for continuation rows
//! and hard splits for words wider than the screen. Text is sanitized first: tabs become spaces
//! and control characters (escape sequences a teammate might send) are shown as visible escapes.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthChar;

/// Text safe to put in a terminal cell: line breaks kept, tabs as four spaces, every other
/// control character, escape sequence introducer or bidi override shown as a visible escape
/// (the one escaping function, [`crate::protocol::display::visible_text`]).
pub fn sanitize(text: &str) -> String {
    crate::protocol::display::visible_text(text).into_owned()
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(0)
}

/// Display width of a string.
pub fn str_width(s: &str) -> usize {
    s.chars().map(char_width).sum()
}

/// Cuts a string to at most `width` columns, ending with `…` when cut.
pub fn truncate(s: &str, width: usize) -> String {
    if str_width(s) <= width {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let w = char_width(c);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

struct Row {
    cells: Vec<(char, Style)>,
    width: usize,
}

impl Row {
    fn indented(hang: usize) -> Row {
        Row {
            cells: vec![(' ', Style::default()); hang],
            width: hang,
        }
    }

    /// The row as a line, without trailing spaces when it was broken.
    fn broken(mut self) -> Line<'static> {
        while self.cells.last().is_some_and(|(c, _)| *c == ' ') {
            self.cells.pop();
        }
        self.into_line()
    }

    fn into_line(self) -> Line<'static> {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut text = String::new();
        let mut style = None;
        for (c, s) in self.cells {
            if style != Some(s) {
                if let Some(prev) = style
                    && !text.is_empty()
                {
                    spans.push(Span::styled(std::mem::take(&mut text), prev));
                }
                style = Some(s);
            }
            text.push(c);
        }
        if let Some(s) = style
            && !text.is_empty()
        {
            spans.push(Span::styled(text, s));
        }
        Line::from(spans)
    }
}

/// Wraps one styled line into rows at most `width` wide; continuation rows start with `hang`
/// spaces (ignored when the screen is too narrow for it). Always returns at least one row.
pub fn wrap_line(line: &Line<'_>, hang: u16, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let hang = if usize::from(hang) * 2 > width {
        0
    } else {
        usize::from(hang)
    };
    // Tokens: runs of whitespace or of non-whitespace, each cell with its style.
    let mut tokens: Vec<(bool, Vec<(char, Style)>)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for c in span.content.chars() {
            let space = c == ' ';
            match tokens.last_mut() {
                Some((is_space, cells)) if *is_space == space => cells.push((c, style)),
                _ => tokens.push((space, vec![(c, style)])),
            }
        }
    }
    let mut rows: Vec<Line<'static>> = Vec::new();
    let mut row = Row::indented(0);
    for (is_space, cells) in tokens {
        let token_width: usize = cells.iter().map(|(c, _)| char_width(*c)).sum();
        if row.width + token_width <= width {
            row.width += token_width;
            row.cells.extend(cells);
            continue;
        }
        if is_space {
            rows.push(std::mem::replace(&mut row, Row::indented(hang)).broken());
            continue;
        }
        if token_width <= width - hang && row.width > hang {
            rows.push(std::mem::replace(&mut row, Row::indented(hang)).broken());
            row.width += token_width;
            row.cells.extend(cells);
            continue;
        }
        for (c, style) in cells {
            let w = char_width(c);
            if row.width + w > width && row.width > hang {
                rows.push(std::mem::replace(&mut row, Row::indented(hang)).broken());
            }
            row.width += w;
            row.cells.push((c, style));
        }
    }
    rows.push(row.into_line());
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(rows: &[Line<'_>]) -> Vec<String> {
        rows.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_at_words_with_a_hanging_indent() {
        let line = Line::from("> the quick brown fox jumps");
        assert_eq!(
            text(&wrap_line(&line, 2, 12)),
            vec!["> the quick", "  brown fox", "  jumps"]
        );
    }

    #[test]
    fn splits_words_longer_than_the_row() {
        let line = Line::from("abcdefghij");
        assert_eq!(text(&wrap_line(&line, 0, 4)), vec!["abcd", "efgh", "ij"]);
    }

    #[test]
    fn keeps_styles_across_rows() {
        let line = Line::from(vec![
            Span::styled("●red", Style::default().fg(ratatui::style::Color::Red)),
            Span::raw(" hello world"),
        ]);
        let rows = wrap_line(&line, 0, 10);
        assert_eq!(text(&rows), vec!["●red hello", "world"]);
        assert_eq!(rows[0].spans[0].style.fg, Some(ratatui::style::Color::Red));
    }

    #[test]
    fn empty_line_is_one_row_and_control_characters_are_made_visible() {
        assert_eq!(wrap_line(&Line::from(""), 0, 10).len(), 1);
        // protocol::display shows an escape as `\e`: it never reaches the terminal.
        assert_eq!(sanitize("a\u{1b}[31mb\tc"), "a\\e[31mb    c");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 4), "abc");
    }
}
