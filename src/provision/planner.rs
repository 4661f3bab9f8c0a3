//! The planning stage: from a resolved `Context` to an immutable [`Plan`] — which
//! checkout to make (new branch, existing branch, resume), the base commit, the
//! ecosystems in the base tree — refusing whatever the real run would refuse.
//!
//! Invariant: planning writes nothing (`--dry-run` is [`dry_run`]). Callers:
//! `apply::create` (twice: once before the fetch, once under the box's lock) and the CLI.

use crate::config::UserConfig;
use crate::ecosystem::Ecosystem;
use crate::git::Repo;
use crate::names::Leaf;
use crate::plan::{BaseFrom, Caches, Checkout, Fetch, Plan};
use crate::state::Record;
use crate::vocab::GitMode;

use super::request::{choose_name, context, fetch_mode, Context};
use super::{copy, fetch, CreateRequest, ProvisionError};

/// Decide everything; refuse what the real run would refuse. Writes nothing.
pub(super) fn make_plan(
    req: &CreateRequest,
    cfg: &UserConfig,
    ctx: &Context,
    leaf: &Leaf,
    branch: &str,
    placeholder: bool,
    fetch: Fetch,
) -> Result<Plan, ProvisionError> {
    if let Some(other) = case_twin(&ctx.layout, leaf) {
        return Err(ProvisionError::CaseConflict {
            leaf: leaf.to_string(),
            other: other.to_string(),
        });
    }
    let record = Record::load(&ctx.layout.record_path(leaf))?;
    // The record's path, when there is one, says where the checkout is; a new box's
    // goes where its runner places it.
    let path = match &record {
        Some(r) => ctx.layout.path_of(leaf, Some(r)),
        None => ctx.layout.placed_path(leaf, ctx.runner.is_container()),
    };
    // A container box's checkout is mounted at its own path: one the engine's mount
    // syntax cannot spell (a data dir with a comma) is refused before anything is made.
    if ctx.runner.is_container() && !crate::runner::oci::mountable(&path) {
        return Err(crate::runner::oci::ContainerError::Unmountable { path }.into());
    }
    // The other root's directory of the same name: taken too (one leaf, one box).
    let other = match path.parent() == Some(ctx.layout.box_root.as_path()) {
        true => ctx.layout.checkout_path(leaf),
        false => ctx.layout.box_path(leaf),
    };
    // A checkout git knows: a registered worktree, a clone with its own `.git`, or a
    // sandboxed worktree (registered in its own bare clone).
    let sandboxed = record.as_ref().is_some_and(|r| r.bare_clone.is_some());
    let registered = ctx.repo.worktree_admin_dir(&path).is_some()
        || std::fs::symlink_metadata(path.join(".git"))
            .is_ok_and(|m| m.is_dir() || (sandboxed && m.is_file()));
    let mut base_ref = None;
    let mut base_commit = None;
    let checkout = match &record {
        Some(r) if r.setup_completed && path.exists() => {
            return Err(ProvisionError::BoxExists {
                leaf: leaf.to_string(),
                path,
            })
        }
        Some(r) if path.exists() && registered => {
            // A box keeps the runner it was made with: finishing a container box's
            // setup on the host (or the other way round) is never what was asked.
            if r.runner != ctx.runner {
                return Err(ProvisionError::IsolationMismatch {
                    leaf: leaf.to_string(),
                    recorded: r.runner.to_string(),
                    requested: ctx.runner.to_string(),
                    flagged: req.isolation.is_some(),
                });
            }
            if r.git_mode != ctx.git_mode {
                return Err(ProvisionError::ModeMismatch {
                    leaf: leaf.to_string(),
                    built: r.git_mode.to_string(),
                    requested: ctx.git_mode.to_string(),
                });
            }
            base_commit = r.base_commit.clone();
            base_ref = r.base_ref.clone();
            Checkout::Resume {
                branch: r.branch.clone(),
            }
        }
        _ => {
            if path.exists() || registered {
                return Err(ProvisionError::PathTaken {
                    leaf: leaf.to_string(),
                    path,
                });
            }
            if std::fs::symlink_metadata(&other).is_ok() {
                return Err(ProvisionError::PathTaken {
                    leaf: leaf.to_string(),
                    path: other,
                });
            }
            // An interrupted create may have made its branch before dying.
            let own_branch = record
                .as_ref()
                .is_some_and(|r| r.created_branch && r.branch == branch);
            if req.checkout.is_some() || own_branch {
                if ctx.repo.local_branch(branch).is_some() {
                    // A clone, a sandboxed worktree have their own branches; only a
                    // worktree of this repository competes with its other checkouts.
                    if ctx.git_mode == GitMode::Worktree
                        && !ctx.runner.is_container()
                        && ctx.repo.branch_checked_out(branch)
                    {
                        return Err(ProvisionError::BranchCheckedOut {
                            branch: branch.to_string(),
                        });
                    }
                    Checkout::ExistingLocal {
                        branch: branch.to_string(),
                    }
                } else if ctx.origin_branch(branch).is_some() {
                    Checkout::FromRemote {
                        branch: branch.to_string(),
                        remote_ref: format!("refs/remotes/origin/{branch}"),
                    }
                } else if own_branch {
                    new_branch(ctx, branch, &mut base_ref, &mut base_commit)?
                } else {
                    return Err(ProvisionError::BranchNotFound {
                        branch: branch.to_string(),
                    });
                }
            } else {
                if ctx.repo.local_branch(branch).is_some() {
                    return Err(ProvisionError::BranchExists {
                        branch: branch.to_string(),
                    });
                }
                // A new local NAME would shadow origin's NAME: taking it is `--checkout`.
                if ctx.origin_branch(branch).is_some() {
                    return Err(ProvisionError::BranchOnOrigin {
                        branch: branch.to_string(),
                    });
                }
                new_branch(ctx, branch, &mut base_ref, &mut base_commit)?
            }
        }
    };
    let ecosystems = match &base_commit {
        Some(c) => ecosystems_in_tree(&ctx.repo, c),
        None => match &checkout {
            Checkout::ExistingLocal { branch } => ecosystems_in_tree(
                &ctx.repo,
                &ctx.repo
                    .local_branch(branch)
                    .map(|o| o.to_string())
                    .unwrap_or_default(),
            ),
            Checkout::FromRemote { branch, .. } => ecosystems_in_tree(
                &ctx.repo,
                &ctx.origin_branch(branch)
                    .map(|o| o.to_string())
                    .unwrap_or_default(),
            ),
            _ => Vec::new(),
        },
    };
    let warm_mode = req.warm.or(cfg.warm).unwrap_or_default();
    // An interrupted box may have run: nothing is copied into it any more.
    let warm = if matches!(checkout, Checkout::Resume { .. }) {
        super::warm::Warming::none(warm_mode)
    } else {
        super::warm::plan(&ctx.repo, &ecosystems, warm_mode, &path, ctx.runner)
    };
    let program = cfg.harness_program(ctx.harness);
    // The agent's arguments: the trust carried to a host clone box, then the user's.
    let extra = super::host_trust::launch_extra(
        ctx.harness,
        ctx.runner,
        ctx.git_mode,
        &ctx.repo.main_root,
        &path,
        &req.extra_args,
    );
    Ok(Plan {
        repo: ctx.repo.main_root.clone(),
        name: leaf.to_string(),
        branch: branch.to_string(),
        placeholder,
        path,
        fetch,
        base: ctx.base.clone(),
        base_from: ctx.base_from,
        base_ref,
        base_commit,
        checkout,
        git_mode: ctx.git_mode,
        runner: ctx.runner,
        runner_reason: ctx.runner_reason.clone(),
        harness: ctx.harness,
        ecosystems,
        custom_setup: cfg.setup.clone(),
        caches: if req.cold {
            Caches::Cold
        } else {
            Caches::Shared
        },
        env_source: copy::env_source(&ctx.repo.main_root, cfg.env_file.as_deref()),
        included: super::include::plan(&ctx.repo),
        warm,
        launch: req.launch,
        forward_tokens: forward_tokens(req, cfg)?,
        forge_hosts: forge_hosts(req, ctx)?,
        launch_argv: ctx.harness.launch_argv(
            &program,
            &extra,
            Some(&crate::runner::oci::status::planned_hooks(
                &ctx.layout,
                leaf,
                ctx.runner,
            )),
        ),
    })
}

/// The variables forwarded into the box: `--token-from` and the config's
/// `forwardTokens`, each name once, checked.
fn forward_tokens(req: &CreateRequest, cfg: &UserConfig) -> Result<Vec<String>, ProvisionError> {
    let mut names: Vec<String> = req
        .token_from
        .iter()
        .chain(&cfg.forward_tokens)
        .cloned()
        .collect();
    if let Some(bad) = names.iter().find(|n| !crate::names::env_name_ok(n)) {
        return Err(ProvisionError::TokenName { name: bad.clone() });
    }
    names.sort();
    names.dedup();
    Ok(names)
}

/// `--allow-forge`: the hosts of origin's URL (and GitHub's API host), for a box with
/// a firewall; refused without one (every host is reachable then) or without a forge.
fn forge_hosts(req: &CreateRequest, ctx: &Context) -> Result<Vec<String>, ProvisionError> {
    if !req.allow_forge {
        return Ok(Vec::new());
    }
    if !ctx.firewall || !ctx.runner.is_container() {
        return Err(ProvisionError::ForgeNeedsFirewall);
    }
    let url = ctx
        .repo
        .git
        .find_remote("origin")
        .ok()
        .and_then(|r| r.url().ok().map(str::to_string))
        .unwrap_or_default();
    let hosts = crate::runner::oci::forge::forge_hosts(&url);
    if hosts.is_empty() {
        return Err(ProvisionError::NoForge { url });
    }
    Ok(hosts)
}

fn new_branch(
    ctx: &Context,
    branch: &str,
    base_ref: &mut Option<String>,
    base_commit: &mut Option<String>,
) -> Result<Checkout, ProvisionError> {
    // What the fetch would bring (`--dry-run`) counts as commits too.
    let empty = ctx.repo.has_no_commits() && ctx.remote_heads.as_ref().is_none_or(|h| h.is_empty());
    let Some(resolved) = ctx.resolve_base() else {
        // A clone can start with no commits; a worktree needs one.
        let named = ctx.base_from == BaseFrom::Flag;
        if empty && ctx.git_mode == GitMode::Clone && !named {
            return Ok(Checkout::Unborn {
                branch: branch.to_string(),
            });
        }
        // Nobody chose this base: say where the default came from, and how to fix it.
        let defaulted = matches!(ctx.base_from, BaseFrom::OriginHead | BaseFrom::Default);
        let checked_out = ctx
            .repo
            .main_branch()
            .filter(|b| *b != ctx.base && ctx.repo.local_branch(b).is_some());
        if defaulted && !empty && ctx.repo.has_remote("origin") {
            return Err(ProvisionError::DefaultBaseNotFound {
                base: ctx.base.clone(),
                origin_head: ctx.base_from == BaseFrom::OriginHead,
                checked_out,
            });
        }
        return Err(ProvisionError::BaseNotFound {
            base: ctx.base.clone(),
            empty,
            checked_out,
        });
    };
    // A base tracking the boxes' directory would put its files among the boxes.
    if let Ok(Some(entry)) = tracks_boxes_dir(&ctx.repo, resolved.oid) {
        let r = &resolved.refname;
        let base = r
            .strip_prefix("refs/remotes/")
            .or_else(|| r.strip_prefix("refs/heads/"));
        return Err(ProvisionError::BaseTracksBoxes {
            base: base.unwrap_or(r).to_string(),
            entry,
        });
    }
    *base_ref = Some(resolved.refname.clone());
    *base_commit = Some(resolved.oid.to_string());
    Ok(Checkout::NewBranch {
        branch: branch.to_string(),
        start: resolved.refname,
    })
}

/// Does the commit `id`'s tree have the boxes' directory at its top (as macOS compares
/// names)? The entry, as it is spelled there; only the top-level tree is read.
fn tracks_boxes_dir(repo: &Repo, id: git2::Oid) -> Result<Option<String>, git2::Error> {
    let tree = repo.git.find_commit(id)?.tree()?;
    let found = tree
        .iter()
        .find(|e| crate::names::is_boxes_dir(e.name_bytes()))
        .map(|e| crate::sanitize::line(&String::from_utf8_lossy(e.name_bytes())));
    Ok(found)
}

/// Ecosystems whose lockfile sits at the top of the commit's tree (libgit2, no checkout).
fn ecosystems_in_tree(repo: &Repo, commit: &str) -> Vec<Ecosystem> {
    let Some(tree) = git2::Oid::from_str(commit)
        .ok()
        .and_then(|o| repo.git.find_commit(o).ok())
        .and_then(|c| c.tree().ok())
    else {
        return Vec::new();
    };
    let has = |name: &str| {
        tree.get_name(name)
            .is_some_and(|e| e.kind() == Some(git2::ObjectType::Blob) && e.filemode() != 0o120000)
    };
    let mut out = Vec::new();
    for eco in Ecosystem::ALL {
        if eco == Ecosystem::Npm && has(Ecosystem::Pnpm.lockfile()) {
            continue;
        }
        if has(eco.lockfile()) {
            out.push(eco);
        }
    }
    out
}

/// Plan a create without doing anything (`--dry-run`): no fetch, current refs.
pub fn dry_run(
    req: &CreateRequest,
    cfg: &UserConfig,
) -> Result<(Plan, Vec<String>), ProvisionError> {
    let mut ctx = context(req, cfg)?;
    let (leaf, branch, placeholder) = choose_name(req, &ctx)?;
    let fetch = fetch_mode(req, &ctx);
    match fetch {
        // What the fetch would bring, without fetching; a remote the real run could
        // not fetch from is refused here too.
        Fetch::Origin => {
            ctx.remote_heads = Some(fetch::remote_heads(&ctx.git, &ctx.repo.main_root)?);
            ctx.learn_origin_head(false);
        }
        Fetch::Skipped => ctx
            .warnings
            .push("--no-fetch: the base may be stale".into()),
        Fetch::NoOrigin => {}
    }
    let plan = make_plan(req, cfg, &ctx, &leaf, &branch, placeholder, fetch)?;
    Ok((plan, ctx.warnings))
}

/// Another box whose leaf differs from `leaf` only by case (by its record or its
/// directory under either root): the two would be one directory on a case-insensitive
/// file system.
fn case_twin(layout: &crate::state::Layout, leaf: &Leaf) -> Option<Leaf> {
    let on_disk = layout.leaves_on_disk().into_iter().map(|(l, _)| l);
    layout
        .recorded_leaves()
        .into_iter()
        .chain(on_disk)
        .find(|l| l != leaf && l.same_box(leaf))
}

#[cfg(test)]
mod tests {
    //! The planner on real temp repositories: what it decides, and what it refuses
    //! without writing anything.
    use super::*;
    use crate::harness::Harness;
    use crate::state::Layout;
    use std::path::{Path, PathBuf};

    struct Fixture {
        _tmp: tempfile::TempDir,
        repo: PathBuf,
        state: PathBuf,
    }

    fn git(dir: &Path, args: &[&str]) {
        crate::testing::git(dir, args);
    }

    /// origin (bare) with `main` holding `files`, cloned as the repo.
    fn fixture(files: &[&str]) -> Fixture {
        fixture_on("main", files)
    }

    /// origin (bare) whose default branch is `default`, holding `files`, cloned.
    fn fixture_on(default: &str, files: &[&str]) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        git(&root, &["init", "-q", "-b", default, "seed"]);
        for f in files {
            std::fs::write(root.join("seed").join(f), "x").unwrap();
        }
        std::fs::write(root.join("seed/README"), "r").unwrap();
        git(&root.join("seed"), &["add", "."]);
        git(&root.join("seed"), &["commit", "-q", "-m", "i"]);
        git(&root, &["clone", "-q", "--bare", "seed", "origin.git"]);
        git(&root, &["clone", "-q", "origin.git", "repo"]);
        Fixture {
            repo: root.join("repo"),
            state: root.join("state"),
            _tmp: tmp,
        }
    }

    fn req(f: &Fixture, name: Option<&str>) -> CreateRequest {
        CreateRequest {
            cwd: f.repo.clone(),
            name: name.map(str::to_string),
            state_root: Some(f.state.clone()),
            seed: Some(1),
            launch: true,
            ..Default::default()
        }
    }

    fn plan(_f: &Fixture, r: &CreateRequest) -> Result<Plan, ProvisionError> {
        dry_run(r, &UserConfig::default()).map(|(p, _)| p)
    }

    #[test]
    fn new_branch_from_origin_base() {
        let f = fixture(&["Cargo.lock", "pnpm-lock.yaml", "package-lock.json"]);
        let p = plan(&f, &req(&f, Some("feat/x"))).unwrap();
        assert_eq!(p.name, "feat--x");
        assert_eq!(p.branch, "feat/x");
        assert!(!p.placeholder);
        assert_eq!(p.path, f.repo.join(".treebox/worktrees/feat--x"));
        assert_eq!(p.base_ref.as_deref(), Some("refs/remotes/origin/main"));
        assert!(matches!(p.checkout, Checkout::NewBranch { .. }));
        assert_eq!(p.fetch, Fetch::Origin);
        // pnpm wins over npm; detected from the base tree, before any checkout.
        assert_eq!(p.ecosystems, [Ecosystem::Pnpm, Ecosystem::Cargo]);
        // The status producer's settings, in the box's bookkeeping (SPEC §7).
        let settings = f.state.join("repos");
        let argv = agent_part(&p.launch_argv, "claude");
        assert_eq!(
            argv[..3],
            ["claude", "--dangerously-skip-permissions", "--settings"]
        );
        assert!(
            Path::new(&argv[3]).starts_with(&settings),
            "{:?}",
            p.launch_argv
        );
        assert!(argv[3].ends_with("feat--x/agent/claude-settings.json"));
        assert_eq!(argv.len(), 4);
        assert!(!f.state.exists(), "planning writes nothing");
        assert!(!p.path.exists());
    }

    #[test]
    fn nameless_gets_a_placeholder() {
        let f = fixture(&[]);
        let p = plan(&f, &req(&f, None)).unwrap();
        assert!(p.placeholder);
        assert_eq!(p.branch, format!("treebox/{}", p.name));
    }

    #[test]
    fn refusals() {
        let f = fixture(&[]);
        git(&f.repo, &["branch", "taken"]);
        assert!(matches!(
            plan(&f, &req(&f, Some("taken"))),
            Err(ProvisionError::BranchExists { .. })
        ));
        let mut r = req(&f, Some("x"));
        r.base = Some("nope".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BaseNotFound { .. })
        ));
        let mut r = req(&f, None);
        r.checkout = Some("ghost".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BranchNotFound { .. })
        ));
        assert!(matches!(
            plan(&f, &req(&f, Some("Bad Name"))),
            Err(ProvisionError::Name(_))
        ));
        let mut r = req(&f, Some("x"));
        r.isolation = Some("vm".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::Unsupported { .. })
        ));
        // The main branch is checked out in the main worktree.
        let mut r = req(&f, None);
        r.checkout = Some("main".into());
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BranchCheckedOut { .. })
        ));
        std::fs::create_dir_all(f.repo.join(".treebox/worktrees/squat")).unwrap();
        assert!(matches!(
            plan(&f, &req(&f, Some("squat"))),
            Err(ProvisionError::PathTaken { .. })
        ));
        assert!(!f.state.exists());
    }

    #[test]
    fn base_defaults_to_the_branch_origin_head_names() {
        let f = fixture_on("master", &[]);
        let p = plan(&f, &req(&f, Some("x"))).unwrap();
        assert_eq!(
            (p.base.as_str(), p.base_from),
            ("master", BaseFrom::OriginHead)
        );
        assert_eq!(p.base_ref.as_deref(), Some("refs/remotes/origin/master"));
        // The user config beats origin/HEAD; the flag beats the config.
        git(&f.repo, &["branch", "dev"]);
        let cfg = UserConfig {
            base: Some("dev".into()),
            ..Default::default()
        };
        let (p, _) = dry_run(&req(&f, Some("y")), &cfg).unwrap();
        assert_eq!((p.base.as_str(), p.base_from), ("dev", BaseFrom::Config));
        let mut r = req(&f, Some("y"));
        r.base = Some("master".into());
        let (p, _) = dry_run(&r, &cfg).unwrap();
        assert_eq!((p.base.as_str(), p.base_from), ("master", BaseFrom::Flag));
        // Without origin/HEAD the plan asks origin (writing nothing), as the fetch would.
        git(&f.repo, &["remote", "set-head", "origin", "--delete"]);
        let p = plan(&f, &req(&f, Some("z"))).unwrap();
        assert_eq!(
            (p.base.as_str(), p.base_from),
            ("master", BaseFrom::OriginHead)
        );
        assert!(!f.repo.join(".git/refs/remotes/origin/HEAD").exists());
        // Not asked (no fetch, or origin's HEAD not followed): the default is `main`,
        // which this repository lacks.
        let mut r = req(&f, Some("z"));
        r.no_fetch = true;
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::DefaultBaseNotFound {
                origin_head: false,
                ..
            })
        ));
        git(
            &f.repo,
            &["config", "remote.origin.followRemoteHEAD", "never"],
        );
        assert!(matches!(
            plan(&f, &req(&f, Some("z"))),
            Err(ProvisionError::DefaultBaseNotFound {
                origin_head: false,
                ..
            })
        ));
        // origin/HEAD naming a branch that is gone.
        git(
            &f.repo,
            &[
                "symbolic-ref",
                "refs/remotes/origin/HEAD",
                "refs/remotes/origin/gone",
            ],
        );
        assert!(matches!(
            plan(&f, &req(&f, Some("z"))),
            Err(ProvisionError::DefaultBaseNotFound {
                origin_head: true,
                ..
            })
        ));
        assert!(!f.state.exists());
    }

    #[test]
    fn a_new_name_origin_already_has_is_refused() {
        let f = fixture(&[]);
        git(&f.repo, &["push", "-q", "origin", "main:theirs"]);
        git(&f.repo, &["update-ref", "-d", "refs/remotes/origin/theirs"]);
        // Refused whether origin/theirs is fetched yet (dry run asks origin) or not.
        assert!(matches!(
            plan(&f, &req(&f, Some("theirs"))),
            Err(ProvisionError::BranchOnOrigin { .. })
        ));
        let mut r = req(&f, Some("theirs"));
        r.no_fetch = true;
        assert!(
            plan(&f, &r).is_ok(),
            "not fetched: local refs do not know it"
        );
        git(&f.repo, &["fetch", "-q", "origin"]);
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BranchOnOrigin { .. })
        ));
        assert!(!f.state.exists());
    }

    #[test]
    fn checkout_local_and_remote() {
        let f = fixture(&[]);
        git(&f.repo, &["branch", "mine"]);
        let mut r = req(&f, None);
        r.checkout = Some("mine".into());
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::ExistingLocal {
                branch: "mine".into()
            }
        );
        git(&f.repo, &["push", "-q", "origin", "mine:theirs"]);
        git(&f.repo, &["fetch", "-q", "origin"]);
        r.checkout = Some("theirs".into());
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::FromRemote {
                branch: "theirs".into(),
                remote_ref: "refs/remotes/origin/theirs".into()
            }
        );
    }

    /// The agent's own argv in a host box's `launch_argv`: after the writer's `sh WRITER
    /// idle start --exec`, which comes first exactly when `program` is found on `PATH`
    /// (one that is not is started directly, and fails to start).
    fn agent_part<'a>(argv: &'a [String], program: &str) -> &'a [String] {
        let through = crate::cmd::on_path(program);
        assert_eq!(argv[0] == "sh", through, "{argv:?}");
        if through {
            assert!(argv[1].ends_with("/agent/status"), "{argv:?}");
            assert_eq!(argv[2..5], ["idle", "start", "--exec"]);
            return &argv[5..];
        }
        argv
    }

    #[test]
    fn flags_config_and_no_origin() {
        let f = fixture(&[]);
        let mut r = req(&f, Some("x"));
        r.no_fetch = true;
        r.harness = Some(Harness::Codex);
        r.extra_args = vec!["do it".into()];
        r.cold = true;
        let p = plan(&f, &r).unwrap();
        assert_eq!(p.fetch, Fetch::Skipped);
        assert_eq!(p.caches, Caches::Cold);
        let argv = agent_part(&p.launch_argv, "codex");
        assert_eq!(
            argv[..2],
            ["codex", "--dangerously-bypass-approvals-and-sandbox",]
        );
        assert_eq!(p.launch_argv.last().map(String::as_str), Some("do it"));
        git(&f.repo, &["remote", "remove", "origin"]);
        let p = plan(&f, &req(&f, Some("y"))).unwrap();
        assert_eq!(p.fetch, Fetch::NoOrigin);
        assert_eq!(p.base_ref.as_deref(), Some("refs/heads/main"));
    }

    #[test]
    fn incomplete_box_is_resumed_and_complete_one_refused() {
        let f = fixture(&[]);
        let r = req(&f, Some("half"));
        let path = f.repo.join(".treebox/worktrees/half");
        git(
            &f.repo,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "half",
                path.to_str().unwrap(),
            ],
        );
        let repo = Repo::discover(&f.repo).unwrap();
        let layout = Layout::with_state_root(&repo.main_root, &repo.common_dir, &f.state);
        let leaf = Leaf::parse("half").unwrap();
        let mut rec = crate::state::record::tests::sample();
        rec.name = "half".into();
        rec.branch = "half".into();
        rec.path = path.clone();
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert_eq!(
            plan(&f, &r).unwrap().checkout,
            Checkout::Resume {
                branch: "half".into()
            }
        );
        rec.setup_completed = true;
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::BoxExists { .. })
        ));
        // A record from another mode cannot be finished in this one.
        rec.setup_completed = false;
        rec.git_mode = GitMode::Clone;
        rec.save(&layout.record_path(&leaf)).unwrap();
        assert!(matches!(
            plan(&f, &r),
            Err(ProvisionError::ModeMismatch { .. })
        ));
    }

    #[test]
    fn the_checkouts_root_counts_for_twins_and_for_a_recorded_box() {
        let f = fixture(&[]);
        let repo = Repo::discover(&f.repo).unwrap();
        let layout = Layout::with_state_root(&repo.main_root, &repo.common_dir, &f.state);
        // A checkout there whose name differs only by case is the same directory on
        // a case-insensitive file system.
        std::fs::create_dir_all(layout.checkout_root.join("Dock")).unwrap();
        assert!(matches!(
            plan(&f, &req(&f, Some("dock"))),
            Err(ProvisionError::CaseConflict { .. })
        ));
        std::fs::remove_dir_all(layout.checkout_root.join("Dock")).unwrap();
        // A finished box whose record places it there exists where its record says.
        let leaf = Leaf::parse("moved").unwrap();
        let path = layout.checkout_path(&leaf);
        std::fs::create_dir_all(&path).unwrap();
        let mut rec = crate::state::record::tests::sample();
        rec.name = "moved".into();
        rec.branch = "moved".into();
        rec.path = path.clone();
        rec.setup_completed = true;
        rec.save(&layout.record_path(&leaf)).unwrap();
        match plan(&f, &req(&f, Some("moved"))) {
            Err(ProvisionError::BoxExists { path: p, .. }) => assert_eq!(p, path),
            other => panic!("{other:?}"),
        }
    }
}
