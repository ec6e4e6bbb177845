//! Teammates on other hosts over real OpenSSH (test hosts are network namespaces).

mod acceptance;
mod check;
pub(crate) mod claude;
mod connections;
mod lifecycle;
mod link_chaos;
mod review;
mod tasks;
mod teammates;
