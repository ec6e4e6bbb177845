//! The terminals teammates run in (tmux, Zellij, kitty, WezTerm, iTerm2, GNU screen) and a teammate's own pane.

mod kitty;
mod kitty_lead;
mod screen;
mod teammate_pane;
mod tmux;
mod wezterm;
mod zellij;
mod zellij_inside;
mod zellij_lead;
