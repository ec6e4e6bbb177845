//! Benchmark of one UI frame (filled in with the UI).
fn main() {}
