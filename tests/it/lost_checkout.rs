//! Issue 38, point 7: a sandboxed worktree whose checkout is gone still holds the
//! agent's committed work in its bare clone (treebox's bookkeeping, out of the user's
//! reach). After the user's `git clean -ffdx` removed the checkout (before checkouts
//! moved out of the working tree; now it is deleted by hand), `fetch` and `land`
//! refused ("directory is gone"), `teardown` called the box empty, and `down` without
//! `-f`, off a terminal, deleted it with the commit. Now the work is judged from the
//! bare clone: removal is refused (5) off a terminal, prune keeps the record, and
//! `fetch` and `land` bring the commit back.

use crate::container::on_docker;

#[test]
fn a_sandboxed_worktree_whose_checkout_is_gone_keeps_and_lands_its_commits() {
    on_docker(|b| {
        let env = &b.env;
        env.treebox(&["create", "lost", "--no-launch"]).ok();
        assert!(
            b.record("lost")["bareClone"].is_string(),
            "a sandboxed worktree"
        );
        let tip = b.commit_inside(
            "lost",
            "echo work > work.txt && git add work.txt && git commit -qm 'in the box'",
        );
        // The agent is done; the user cleans the main checkout. A container box's
        // checkout sits outside it (issue 38, point 1), so `git clean -ffdx` no longer
        // reaches it; the user then deletes it by hand (or the data dir goes).
        let container = b.container("lost");
        assert!(b.engine(&["stop", "-t", "0", &container]).status.success());
        let checkout = env.box_path("lost");
        env.git(&env.repo, &["clean", "-ffdxq"]);
        assert!(
            checkout.join("work.txt").is_file(),
            "git clean -ffdx passes it by"
        );
        std::fs::remove_dir_all(&checkout).unwrap();
        assert!(!env.box_path("lost").exists(), "the checkout is gone");

        // Off a terminal, without -f: refused, nothing removed.
        let before = env.snapshot();
        for args in [vec!["down", "lost"], vec!["teardown", "lost"]] {
            let r = match args[0] {
                "down" => env.sandbox(&args),
                _ => env.treebox(&args),
            };
            assert_eq!(r.code, 5, "{args:?}: {r:?}");
            assert!(r.stderr.contains("lost"), "{args:?} names the box: {r:?}");
        }
        // prune, even with -f, keeps the record and says why.
        for args in [vec!["prune"], vec!["prune", "-f"]] {
            let r = env.sandbox(&args);
            assert!(
                r.stderr.contains("kept record of `lost`")
                    && r.stderr.contains("bare clone holds commits"),
                "{args:?}: {r:?}"
            );
        }
        assert_eq!(env.snapshot(), before, "nothing was removed");
        assert!(env.box_state("lost").join("record.json").exists());

        // The list says so, and the work comes back from the bare clone.
        let doc = env.sandbox(&["ls", "--json"]).ok().json();
        let row = crate::env::named(&doc, "boxes", "lost");
        assert_eq!(row["state"], "missing", "{row:#}");
        assert!(
            row["mode"]
                .as_str()
                .unwrap()
                .contains("work only in the box"),
            "{row:#}"
        );
        let fetched = env.sandbox(&["fetch", "lost", "--json"]).ok().json();
        assert_eq!(fetched["tip"], tip.as_str(), "{fetched:#}");
        let landed = env.treebox(&["land", "lost", "--json"]).ok().json();
        assert_eq!(landed["tip"], tip.as_str(), "{landed:#}");
        assert!(env.repo.join("work.txt").exists());
        // Landed: now it may go, off a terminal too.
        env.sandbox(&["down", "lost"]).ok();
        assert!(!env.box_state("lost").join("record.json").exists());
    });
}
