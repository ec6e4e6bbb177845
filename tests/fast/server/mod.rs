//! The lead server: screens attached to it, the headless server, notifications, and the web view.

mod web_api;
