//! The terminals teammates run in (tmux, Zellij, kitty, WezTerm, iTerm2, GNU screen) and a teammate's own pane.

mod iterm2;
