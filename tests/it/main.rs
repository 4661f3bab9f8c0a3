//! Integration tests: the real binaries on temp repositories with a bare origin.

mod badinput;
mod branches;
mod clone;
mod container;
mod create;
mod docs;
mod doctor;
mod env;
mod faults;
mod guard;
mod hostile;
mod hostile_boxes;
mod hostile_clone_boxes;
mod hostile_include;
mod hostile_objects;
mod lifecycle;
mod proof;
mod races;
mod sandboxed;
mod schema;
mod screens;
mod sessions;
mod template;
