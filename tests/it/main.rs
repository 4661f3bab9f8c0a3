//! Integration tests: the real binaries on temp repositories with a bare origin.

mod clone;
mod create;
mod docs;
mod doctor;
mod env;
mod guard;
mod lifecycle;
mod schema;
mod template;
