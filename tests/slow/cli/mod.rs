//! The command-line tools as child processes on temporary homes (`inspect`, `monitor`, `task`, `clean`, `config`, `hosts`, `man`, `relay`).

mod home_untouched;
mod monitor;
