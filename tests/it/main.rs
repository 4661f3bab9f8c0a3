//! Integration tests: the real binaries on temp repositories with a bare origin.

mod create;
mod docs;
mod env;
mod guard;
mod schema;
