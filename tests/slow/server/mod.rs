//! The lead server: screens attached to it, the headless server, notifications, and the web view.

mod attach;
mod headless;
mod hostile_frames;
mod notify;
mod web_browser;
mod web_screenshot;
