//! Integration tests: the real binaries on temp repositories with a bare origin.

mod create;
mod env;
mod guard;
