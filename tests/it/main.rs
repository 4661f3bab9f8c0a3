//! Integration tests: the real binaries on temp repositories with a bare origin.

mod badinput;
mod branches;
mod claude_worktree;
mod clone;
mod container;
mod create;
mod docs;
mod doctor;
mod env;
mod faults;
mod guard;
mod hook_managers;
mod hostile;
mod hostile_boxes;
mod hostile_clone_boxes;
mod hostile_include;
mod hostile_objects;
mod lifecycle;
mod proof;
mod races;
mod sandboxed;
mod sandboxed_hostile;
mod schema;
mod screens;
mod status;
mod template;
