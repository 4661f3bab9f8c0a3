//! The published JSON Schemas (`docs/schema/`, SPEC §10) against real output.
//!
//! Each document treebox prints in JSON mode is produced by the real binary and
//! validated twice: against the published schema (which lets version-1 documents gain
//! fields), and against a strict copy that refuses undeclared fields, so a field added
//! to the program but not to its schema fails here.

use std::path::PathBuf;

use serde_json::Value;

use crate::env::{Run, TestEnv};

const SCHEMAS: [&str; 23] = [
    "create",
    "diff",
    "land",
    "plan",
    "error",
    "list",
    "enter",
    "teardown",
    "doctor",
    "template-list",
    "template-path",
    "sandbox-ls",
    "sandbox-bundle",
    "sandbox-fetch",
    "sandbox-prune",
    "sandbox-park",
    "sandbox-down",
    "watch",
    "screen",
    "stop",
    "box-create",
    "send",
    "wait",
];

/// Every subcommand of either binary that takes `--json`, and the schema of what it
/// prints on stdout (failures print `error` on stderr). Each schema is checked against
/// that command's real output by a test below.
const JSON_COMMANDS: &[(&str, &str)] = &[
    ("git-treebox create", "create"),
    ("git-treebox enter", "enter"),
    ("git-treebox list", "list"),
    ("git-treebox diff", "diff"),
    ("git-treebox land", "land"),
    ("git-treebox teardown", "teardown"),
    ("git-treebox doctor", "doctor"),
    ("git-treebox template list", "template-list"),
    ("git-treebox template path", "template-path"),
    ("git-sandbox up", "create"),
    ("git-sandbox ls", "sandbox-ls"),
    ("git-sandbox bundle", "sandbox-bundle"),
    ("git-sandbox fetch", "sandbox-fetch"),
    ("git-sandbox prune", "sandbox-prune"),
    ("git-sandbox park", "sandbox-park"),
    ("git-sandbox down", "sandbox-down"),
    ("git-treebox watch", "watch"),
    ("git-sandbox watch", "watch"),
];

fn schema_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"))
}

fn load_schema(name: &str) -> Value {
    let path = schema_path(name);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()))
}

/// The schema with every object that declares `properties` closed to undeclared ones
/// (`unevaluatedProperties: false`, which sees through `oneOf` and `$ref`).
fn strict(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: serde_json::Map<String, Value> =
                map.iter().map(|(k, v)| (k.clone(), strict(v))).collect();
            if map.get("properties").is_some_and(Value::is_object) {
                out.remove("additionalProperties");
                out.insert("unevaluatedProperties".into(), Value::Bool(false));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(strict).collect()),
        other => other.clone(),
    }
}

fn errors(schema: &Value, doc: &Value) -> Vec<String> {
    let validator = jsonschema::validator_for(schema).expect("the schema compiles");
    validator
        .iter_errors(doc)
        .map(|e| {
            format!(
                "  at `{}` (schema `{}`): {e}",
                e.instance_path(),
                e.schema_path()
            )
        })
        .collect()
}

/// Validate `doc` against `docs/schema/<name>.schema.json`, listing every error.
#[track_caller]
pub(crate) fn assert_valid(name: &str, doc: &Value, what: &str) {
    let schema = load_schema(name);
    let pretty = serde_json::to_string_pretty(doc).unwrap();
    let errs = errors(&schema, doc);
    assert!(
        errs.is_empty(),
        "{what}: does not match {name}.schema.json:\n{}\ndocument:\n{pretty}",
        errs.join("\n")
    );
    let errs = errors(&strict(&schema), doc);
    assert!(
        errs.is_empty(),
        "{what}: has fields {name}.schema.json does not declare:\n{}\ndocument:\n{pretty}",
        errs.join("\n")
    );
}

/// The one JSON object a failing command in JSON mode writes to stderr.
#[track_caller]
fn error_document(r: &Run) -> Value {
    assert!(
        r.stdout.is_empty(),
        "errors print nothing on stdout: {r:#?}"
    );
    let lines: Vec<&str> = r.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line on stderr: {r:#?}");
    serde_json::from_str(lines[0]).unwrap_or_else(|e| panic!("stderr is not JSON ({e}): {r:#?}"))
}

#[test]
fn schema_list_covers_every_published_schema() {
    // A schema added to docs/schema/ but not to SCHEMAS would escape the checks above
    // and below.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    let mut published: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".schema.json").map(str::to_string)
        })
        .collect();
    published.sort();
    let mut listed: Vec<String> = SCHEMAS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(published, listed);
}

#[test]
fn schema_files_are_valid_draft_2020_12_schemas() {
    for name in SCHEMAS {
        let schema = load_schema(name);
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        let meta = jsonschema::meta::validator_for(&schema).expect("a bundled meta-schema");
        let errs: Vec<String> = meta
            .iter_errors(&schema)
            .map(|e| format!("  at `{}`: {e}", e.instance_path()))
            .collect();
        assert!(errs.is_empty(), "{name}.schema.json:\n{}", errs.join("\n"));
        jsonschema::validator_for(&schema)
            .unwrap_or_else(|e| panic!("{name}.schema.json does not compile: {e}"));
        jsonschema::validator_for(&strict(&schema))
            .unwrap_or_else(|e| panic!("strict {name}.schema.json does not compile: {e}"));
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], true, "{name}");
        assert_eq!(schema["properties"]["schemaVersion"]["const"], 1, "{name}");
    }
}

/// Keywords these schemas use; anything else in a schema position is a typo (the
/// meta-schema allows unknown keywords, so it would not catch one).
const KEYWORDS: &[&str] = &[
    "$schema",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "const",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "pattern",
    "minimum",
    "maximum",
    "oneOf",
];

/// Check one schema node and everything under it; `at` is a JSON pointer for messages.
fn check_node(node: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(map) = node.as_object() else {
        problems.push(format!("{at}: a schema must be an object"));
        return;
    };
    for key in map.keys() {
        if !KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{at}: unknown keyword `{key}`"));
        }
    }
    if let Some(required) = map.get("required") {
        let props = map.get("properties").and_then(Value::as_object);
        for r in required.as_array().into_iter().flatten() {
            let r = r.as_str().unwrap_or_default();
            if !props.is_some_and(|p| p.contains_key(r)) {
                problems.push(format!("{at}: required `{r}` is not in `properties`"));
            }
        }
    }
    for key in ["properties", "$defs"] {
        for (k, v) in map
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            check_node(v, &format!("{at}/{key}/{k}"), problems);
        }
    }
    if let Some(items) = map.get("items") {
        check_node(items, &format!("{at}/items"), problems);
    }
    for (i, v) in map
        .get("oneOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        check_node(v, &format!("{at}/oneOf/{i}"), problems);
    }
}

#[test]
fn schema_required_fields_are_declared_and_keywords_known() {
    for name in SCHEMAS {
        let mut problems = Vec::new();
        check_node(&load_schema(name), "#", &mut problems);
        assert!(
            problems.is_empty(),
            "{name}.schema.json:\n{}",
            problems.join("\n")
        );
    }
}

#[test]
fn schema_strict_copy_refuses_undeclared_fields() {
    // The strict check is what catches drift; make sure it bites, including through
    // the tagged `checkout` union.
    let env = TestEnv::new();
    let plan = env
        .treebox(&["create", "strict", "--dry-run", "--json"])
        .ok()
        .json();
    let schema = strict(&load_schema("plan"));
    assert!(errors(&schema, &plan).is_empty());
    let mut extra = plan.clone();
    extra["surprise"] = Value::Bool(true);
    assert!(!errors(&schema, &extra).is_empty());
    assert!(errors(&load_schema("plan"), &extra).is_empty());
    let mut extra = plan.clone();
    extra["checkout"]["surprise"] = Value::Bool(true);
    assert!(!errors(&schema, &extra).is_empty());
    let mut wrong = plan;
    wrong["checkout"]["kind"] = "fromRemote".into();
    assert!(!errors(&load_schema("plan"), &wrong).is_empty());
}

#[test]
fn schema_create_documents() {
    let env = TestEnv::new();

    let plain = env.treebox(&["create", "fix/plain", "--json"]).ok().json();
    assert_valid("create", &plain, "create fix/plain --json");
    assert_eq!(plain["name"], "fix--plain");
    assert_eq!(plain["placeholder"], false);
    assert_eq!(plain["env"], "absent");

    let nameless = env.treebox(&["create", "--json"]).ok().json();
    assert_valid("create", &nameless, "create --json (nameless)");
    assert_eq!(nameless["placeholder"], true);

    // An existing branch: no branch is cut from the base.
    env.git(&env.repo, &["branch", "existing"]);
    let existing = env
        .treebox(&["create", "--checkout", "existing", "--json"])
        .ok()
        .json();
    assert_valid("create", &existing, "create --checkout existing --json");

    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    env.write_config(r#"{"setup":["true"]}"#);
    let setup = env.treebox(&["create", "with-env", "--json"]).ok().json();
    assert_valid("create", &setup, "create --json with .env and custom setup");
    assert_eq!(setup["env"], "copied");
    assert_eq!(setup["setup"].as_array().map(Vec::len), Some(1));
    assert_eq!(setup["setup"][0]["ok"], true);
}

#[test]
fn schema_plan_documents() {
    let env = TestEnv::new();
    let plan = env
        .treebox(&["create", "plan/me", "--dry-run", "--json"])
        .ok()
        .json();
    assert_valid("plan", &plan, "create plan/me --dry-run --json");
    assert_eq!(plan["checkout"]["kind"], "newBranch");

    let nameless = env.treebox(&["create", "--dry-run", "--json"]).ok().json();
    assert_valid("plan", &nameless, "create --dry-run --json (nameless)");

    // The other checkout kinds, and a plan with a .env, custom setup and a warning.
    env.git(&env.repo, &["branch", "local-one"]);
    env.git(&env.repo, &["push", "-q", "origin", "main:remote-one"]);
    env.git(&env.repo, &["fetch", "-q", "origin"]);
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    env.write_config(r#"{"setup":["true"]}"#);
    for (args, kind) in [
        (&["--checkout", "local-one"][..], "existingLocal"),
        (
            &["--checkout", "remote-one", "--no-fetch"][..],
            "fromRemote",
        ),
    ] {
        let mut argv = vec!["create", "--dry-run", "--json", "--cold"];
        argv.extend_from_slice(args);
        let doc = env.treebox(&argv).ok().json();
        assert_valid("plan", &doc, &argv.join(" "));
        assert_eq!(doc["checkout"]["kind"], kind);
    }
}

#[test]
fn schema_error_documents() {
    let env = TestEnv::new();
    env.git(&env.repo, &["branch", "taken"]);
    let r = env.treebox(&["create", "taken", "--json"]);
    r.code(5);
    let doc = error_document(&r);
    assert_valid("error", &doc, "create taken --json (branch exists)");
    assert_eq!(doc["error"]["code"], 5);

    let r = env.treebox(&["create", "--base", "nowhere", "--json"]);
    r.code(3);
    assert_valid("error", &error_document(&r), "create --base nowhere --json");

    env.git(
        &env.repo,
        &["remote", "set-url", "origin", "/nonexistent/origin.git"],
    );
    let r = env.treebox(&["create", "offline", "--json"]);
    r.code(4);
    let doc = error_document(&r);
    assert_valid("error", &doc, "create offline --json (fetch fails)");
    assert_eq!(doc["error"]["code"], 4);
}

/// The per-repository state directory (`$XDG_STATE_HOME/treebox/repos/<key>`).
fn repo_state(env: &TestEnv) -> PathBuf {
    env.repo_state()
}

fn list_document(env: &TestEnv, what: &str) -> Value {
    let doc = env.treebox(&["list", "--json"]).ok().json();
    assert_valid("list", &doc, what);
    doc
}

#[track_caller]
fn list_row(doc: &Value, name: &str) -> Value {
    doc["boxes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no box {name} in {doc:#}"))
        .clone()
}

#[test]
fn schema_list_documents() {
    let env = TestEnv::new();
    let empty = list_document(&env, "list --json (no boxes)");
    assert_eq!(empty["boxes"], Value::Array(Vec::new()));

    env.treebox(&["create", "fix/named", "--no-launch"]).ok();
    let doc = list_document(&env, "list --json (one named box)");
    let named = list_row(&doc, "fix--named");
    assert_eq!(named["branch"], "fix/named");
    assert_eq!(named["placeholder"], false);
    assert_eq!(named["state"], "ok");
    assert_eq!(named["deps"], "fresh");
    assert!(named["lastCommit"].is_i64(), "{named:#}");

    let nameless = env.treebox(&["create", "--json"]).ok().json();
    let leaf = nameless["name"].as_str().unwrap().to_string();
    let doc = list_document(&env, "list --json (a nameless box)");
    let row = list_row(&doc, &leaf);
    assert_eq!(row["placeholder"], true);
    assert_eq!(row["branch"], nameless["branch"]);

    env.treebox(&["create", "x", "--no-launch"]).ok();
    std::fs::remove_dir_all(env.box_path("x")).unwrap();
    let doc = list_document(&env, "list --json (a box whose directory is gone)");
    let gone = list_row(&doc, "x");
    assert_eq!(gone["state"], "missing");
    assert_eq!(gone["branch"], "x");
    assert_eq!(gone["deps"], "unknown");
    assert_eq!(gone["env"], "absent");

    // A worktree made by hand under the box root, and a record that cannot be read.
    let stray = env.box_path("stray");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            &stray.to_string_lossy(),
        ],
    );
    env.treebox(&["create", "broken", "--no-launch"]).ok();
    std::fs::write(
        repo_state(&env).join("boxes/broken/record.json"),
        "not json",
    )
    .unwrap();
    let doc = list_document(&env, "list --json (no-record and bad-record boxes)");
    let stray = list_row(&doc, "stray");
    assert_eq!(stray["state"], "no-record");
    assert_eq!(stray["gitMode"], Value::Null);
    assert_eq!(stray["branch"], Value::Null);
    assert_eq!(stray["placeholder"], false);
    assert_eq!(stray["lastCommit"], Value::Null);
    assert_eq!(list_row(&doc, "broken")["state"], "bad-record");

    // A recorded box git no longer lists (its registration deleted by hand).
    env.treebox(&["create", "orphan", "--no-launch"]).ok();
    std::fs::remove_dir_all(env.repo.join(".git/worktrees/orphan")).unwrap();
    let doc = list_document(&env, "list --json (an unregistered box)");
    let orphan = list_row(&doc, "orphan");
    assert_eq!(orphan["state"], "unregistered");
    assert_eq!(orphan["branch"], "orphan");

    // The strict copy closes the rows too (they sit behind a `$ref`).
    let mut extra = doc;
    extra["boxes"][0]["surprise"] = Value::Bool(true);
    assert!(errors(&load_schema("list"), &extra).is_empty());
    assert!(!errors(&strict(&load_schema("list")), &extra).is_empty());
}

#[test]
fn schema_enter_documents() {
    let env = TestEnv::new();
    std::fs::write(env.repo.join(".env"), "SECRET=1\n").unwrap();
    env.treebox(&["create", "enter/me", "--no-launch"]).ok();

    let fresh = env.treebox(&["enter", "enter--me", "--json"]).ok().json();
    assert_valid("enter", &fresh, "enter --json (fresh box)");
    assert_eq!(fresh["name"], "enter--me");
    assert_eq!(fresh["branch"], "enter/me");
    assert_eq!(fresh["finishedSetup"], false);
    assert_eq!(fresh["deps"], "unchanged");
    assert_eq!(fresh["env"], "unchanged");

    std::fs::write(env.repo.join(".env"), "SECRET=2\n").unwrap();
    let changed = env.treebox(&["enter", "enter--me", "--json"]).ok().json();
    assert_valid("enter", &changed, "enter --json (canonical .env changed)");
    assert_eq!(changed["env"], "copied");

    // Edited in the box, then the canonical one changes again: kept, with a warning.
    std::fs::write(env.box_path("enter--me").join(".env"), "MINE=1\n").unwrap();
    std::fs::write(env.repo.join(".env"), "SECRET=3\n").unwrap();
    let kept = env
        .treebox(&["enter", "enter--me", "--harness", "codex", "--json"])
        .ok()
        .json();
    assert_valid("enter", &kept, "enter --json (box's .env edited)");
    assert_eq!(kept["env"], "kept");
    assert_eq!(kept["harness"], "codex");
    assert_eq!(kept["warnings"].as_array().map(Vec::len), Some(1));
}

#[test]
fn schema_teardown_documents() {
    let env = TestEnv::new();
    for name in ["one", "two", "gone", "branchy"] {
        env.treebox(&["create", name, "--no-launch"]).ok();
    }

    let two = env
        .treebox(&["teardown", "--force", "--json", "one", "two"])
        .ok()
        .json();
    assert_valid("teardown", &two, "teardown --force --json one two");
    let removed = two["removed"].as_array().unwrap();
    assert_eq!(removed.len(), 2);
    assert_eq!(removed[0]["name"], "one");
    assert_eq!(removed[1]["name"], "two");
    assert_eq!(removed[0]["prunedOnly"], false);
    assert_eq!(removed[0]["branchDeleted"], false);

    std::fs::remove_dir_all(env.box_path("gone")).unwrap();
    let gone = env
        .treebox(&["teardown", "--force", "--json", "gone"])
        .ok()
        .json();
    assert_valid(
        "teardown",
        &gone,
        "teardown --force --json (directory gone)",
    );
    assert_eq!(gone["removed"][0]["prunedOnly"], true);
    assert_eq!(gone["removed"][0]["branch"], "gone");

    let branchy = env
        .treebox(&[
            "teardown",
            "--force",
            "--delete-branch",
            "--json",
            "branchy",
        ])
        .ok()
        .json();
    assert_valid(
        "teardown",
        &branchy,
        "teardown --force --delete-branch --json",
    );
    assert_eq!(branchy["removed"][0]["branch"], "branchy");
    assert_eq!(branchy["removed"][0]["branchDeleted"], true);

    let left = list_document(&env, "list --json (after teardown)");
    assert_eq!(left["boxes"], Value::Array(Vec::new()));
}

/// `git sandbox ARGS`, which must succeed; its stdout as JSON, validated against `name`.
#[track_caller]
fn sandbox_document(env: &TestEnv, name: &str, args: &[&str]) -> Value {
    let doc = env.sandbox(args).ok().json();
    assert_valid(name, &doc, &format!("sandbox {}", args.join(" ")));
    doc
}

#[test]
fn schema_sandbox_ls_documents() {
    let env = TestEnv::new();
    let empty = sandbox_document(&env, "sandbox-ls", &["ls", "--json"]);
    assert_eq!(empty["boxes"], Value::Array(Vec::new()));

    env.sandbox(&["up", "tree", "--json"]).ok();
    env.sandbox(&["up", "cloned", "--git", "clone", "--json"])
        .ok();
    env.commit_file(&env.box_path("cloned"), "c.txt", "c\n", "box work");
    env.sandbox(&["up", "x", "--json"]).ok();
    std::fs::remove_dir_all(env.box_path("x")).unwrap();
    // A worktree made by hand under the box root: no record.
    let stray = env.box_path("stray");
    env.git(
        &env.repo,
        &[
            "worktree",
            "add",
            "-q",
            "--detach",
            &stray.to_string_lossy(),
        ],
    );
    let doc = sandbox_document(&env, "sandbox-ls", &["ls", "--json"]);
    let tree = list_row(&doc, "tree");
    assert_eq!(tree["state"], "ready");
    assert_eq!(tree["gitMode"], "worktree");
    assert_eq!(tree["mode"], "worktree");
    assert_eq!(tree["branch"], "tree");
    assert_eq!(tree["dirty"], false);
    assert_eq!(tree["runner"], "host");
    assert_eq!(tree["status"], Value::Null);
    assert_eq!(tree["repo"], env.repo.to_string_lossy().as_ref());
    let cloned = list_row(&doc, "cloned");
    assert_eq!(cloned["gitMode"], "clone");
    assert_eq!(cloned["mode"], "clone, work only in the box");
    assert_eq!(cloned["dirty"], false);
    let gone = list_row(&doc, "x");
    assert_eq!(gone["state"], "missing");
    assert!(
        gone["dirty"].is_null(),
        "a gone directory cannot be dirty or clean"
    );
    let stray = list_row(&doc, "stray");
    assert_eq!(stray["state"], "no-record");
    assert_eq!(stray["gitMode"], Value::Null);
    assert_eq!(stray["runner"], Value::Null);

    // The repository moved away: only what the records say.
    std::fs::rename(&env.repo, env.root().join("moved")).unwrap();
    let out = env
        .command(crate::env::SANDBOX, &env.root())
        .args(["ls", "--json"])
        .output()
        .expect("run git-sandbox");
    let r = Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    let doc = r.ok().json();
    assert_valid("sandbox-ls", &doc, "sandbox ls --json (repository gone)");
    let cloned = list_row(&doc, "cloned");
    assert_eq!(cloned["state"], "repo-missing");
    assert_eq!(cloned["mode"], "clone, work unknown");
    assert_eq!(cloned["branch"], "cloned");
    assert_eq!(cloned["dirty"], Value::Null);

    // The strict copy closes the rows too (they sit behind a `$ref`).
    let mut extra = doc;
    extra["boxes"][0]["surprise"] = Value::Bool(true);
    assert!(errors(&load_schema("sandbox-ls"), &extra).is_empty());
    assert!(!errors(&strict(&load_schema("sandbox-ls")), &extra).is_empty());
}

#[test]
fn schema_sandbox_bundle_and_fetch_documents() {
    let env = TestEnv::new();
    env.sandbox(&["up", "solo", "--git", "clone", "--json"])
        .ok();
    let bx = env.box_path("solo");
    env.commit_file(&bx, "s.txt", "solo\n", "solo work");
    env.commit_file(&bx, "t.txt", "more\n", "more work");
    let tip = env.git(&bx, &["rev-parse", "HEAD"]).trim().to_string();
    let base = env
        .git(&env.repo, &["rev-parse", "HEAD"])
        .trim()
        .to_string();

    let bundle = sandbox_document(&env, "sandbox-bundle", &["bundle", "solo", "--json"]);
    assert_eq!(bundle["name"], "solo");
    assert_eq!(bundle["branch"], "solo");
    assert_eq!(bundle["tip"], tip.as_str());
    assert_eq!(bundle["commits"], 2);
    assert_eq!(bundle["prerequisites"], serde_json::json!([base]));
    assert!(
        std::path::Path::new(bundle["path"].as_str().unwrap()).is_file(),
        "{bundle:#}"
    );

    // `-o` relative to the current directory, reported as an absolute path.
    let named = sandbox_document(
        &env,
        "sandbox-bundle",
        &["bundle", "solo", "-o", "../solo.bundle", "--json"],
    );
    assert_eq!(
        named["path"],
        env.repo.join("../solo.bundle").to_str().unwrap()
    );
    assert!(env.root().join("solo.bundle").is_file());

    let fetch = sandbox_document(&env, "sandbox-fetch", &["fetch", "solo", "--json"]);
    assert_eq!(fetch["ref"], "refs/hort/solo/incoming");
    assert_eq!(fetch["branch"], "solo");
    assert_eq!(fetch["tip"], tip.as_str());
    assert_eq!(fetch["commits"], 2);

    // Fetched again with nothing new: a no-op document.
    let again = sandbox_document(&env, "sandbox-fetch", &["fetch", "solo", "--json"]);
    assert_eq!(again["commits"], 0);
    assert_eq!(again["tip"], tip.as_str());
    // Nothing left to bundle: an error document, exit 3.
    let r = env.sandbox(&["bundle", "solo", "--json"]);
    r.code(3);
    let doc = error_document(&r);
    assert_valid("error", &doc, "sandbox bundle --json (nothing to bundle)");
    assert_eq!(doc["error"]["kind"], "nothing-to-bundle");
}

#[test]
fn schema_sandbox_prune_documents() {
    let env = TestEnv::new();
    let nothing = sandbox_document(&env, "sandbox-prune", &["prune", "--json"]);
    assert_eq!(nothing["removed"], Value::Array(Vec::new()));

    env.sandbox(&["up", "kept", "--json"]).ok();
    env.sandbox(&["up", "x", "--json"]).ok();
    std::fs::remove_dir_all(env.box_path("x")).unwrap();
    env.git(&env.repo, &["update-ref", "refs/hort/ghost/base", "HEAD"]);
    let pruned = sandbox_document(&env, "sandbox-prune", &["prune", "-f", "--json"]);
    let kinds: Vec<&str> = pruned["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["record", "ref"], "{pruned:#}");
    assert!(
        pruned["removed"][1]["what"]
            .as_str()
            .unwrap()
            .contains("refs/hort/ghost/base"),
        "{pruned:#}"
    );

    let again = sandbox_document(&env, "sandbox-prune", &["prune", "-f", "--json"]);
    assert_eq!(again["removed"], Value::Array(Vec::new()));
    assert!(env.box_path("kept").is_dir());
}

#[test]
fn schema_sandbox_park_documents() {
    // Host boxes are never parked: a run over them has nothing to say.
    let env = TestEnv::new();
    let none = sandbox_document(&env, "sandbox-park", &["park", "--json"]);
    assert_eq!(none["parked"], Value::Array(Vec::new()));
    assert_eq!(none["firstSeen"], Value::Array(Vec::new()));
    env.sandbox(&["up", "hosted", "--json"]).ok();
    let hosted = sandbox_document(&env, "sandbox-park", &["park", "--idle", "0", "--json"]);
    assert_eq!(hosted["parked"], Value::Array(Vec::new()));
    assert_eq!(hosted["firstSeen"], Value::Array(Vec::new()));
}

#[test]
fn schema_sandbox_down_documents() {
    let env = TestEnv::new();
    env.sandbox(&["up", "fix/down", "--json"]).ok();
    let doc = sandbox_document(&env, "sandbox-down", &["down", "fix--down", "--json"]);
    assert_eq!(doc["removed"][0]["name"], "fix--down");
    assert_eq!(doc["removed"][0]["branch"], "fix/down");
    assert_eq!(doc["removed"][0]["prunedOnly"], false);
    assert!(!env.box_path("fix--down").exists());

    env.sandbox(&["up", "gone", "--json"]).ok();
    std::fs::remove_dir_all(env.box_path("gone")).unwrap();
    let doc = sandbox_document(&env, "sandbox-down", &["down", "gone", "--json"]);
    assert_eq!(doc["removed"][0]["prunedOnly"], true);
}

#[test]
fn schema_sandbox_up_prints_the_create_document() {
    let env = TestEnv::new();
    let doc = env.sandbox(&["up", "fix/up", "--json"]).ok().json();
    assert_valid("create", &doc, "sandbox up fix/up --json");
    assert_eq!(doc["name"], "fix--up");
    assert_eq!(doc["gitMode"], "worktree");

    let doc = env
        .sandbox(&["up", "cloned", "--git", "clone", "--json"])
        .ok()
        .json();
    assert_valid("create", &doc, "sandbox up cloned --git clone --json");
    assert_eq!(doc["gitMode"], "clone");
}

#[test]
fn schema_folder_box_documents() {
    let env = TestEnv::new();
    let folder = env.root().join("nogit");
    std::fs::create_dir_all(&folder).unwrap();
    let out = env
        .command(crate::env::SANDBOX, &folder)
        .args(["up", "f", "--json"])
        .output()
        .unwrap();
    let run = crate::env::Run::from_output(out);
    let doc = run.ok().json();
    assert_eq!(doc["gitMode"], "folder");
    assert_valid("create", &doc, "folder up --json");
    let ls = env.sandbox(&["ls", "--json"]).ok().json();
    assert_valid("sandbox-ls", &ls, "ls with a folder box");
    assert_eq!(ls["boxes"][0]["mode"], "folder");
}

/// The path (`git-treebox template list`) of every subcommand that has a `--json` flag.
fn commands_with_json() -> Vec<String> {
    use clap::CommandFactory;
    fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        if cmd.get_arguments().any(|a| a.get_long() == Some("json")) {
            out.push(path.to_string());
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }
    let mut out = Vec::new();
    walk(
        &treebox::cli::TreeboxCli::command(),
        "git-treebox",
        &mut out,
    );
    walk(
        &treebox::cli::sandbox::SandboxCli::command(),
        "git-sandbox",
        &mut out,
    );
    out.sort();
    out
}

#[test]
fn schema_every_json_command_has_a_published_schema() {
    // A command that gains `--json` must name its schema in JSON_COMMANDS (and get a
    // test validating its output below).
    let mut listed: Vec<String> = JSON_COMMANDS.iter().map(|(c, _)| c.to_string()).collect();
    listed.sort();
    assert_eq!(commands_with_json(), listed);
    for (cmd, schema) in JSON_COMMANDS {
        assert!(
            SCHEMAS.contains(schema),
            "{cmd}: schema {schema} is not in SCHEMAS"
        );
    }
}

#[test]
fn schema_doctor_documents() {
    let env = TestEnv::new();
    // doctor exits 1 when a check fails; its document is printed either way.
    let inside = env.treebox(&["doctor", "--json"]);
    assert_valid("doctor", &inside.json(), "doctor in a repository");
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let r = env.treebox_in(&outside, &["doctor", "--json"]);
    let doc = r.json();
    assert_valid("doctor", &doc, "doctor outside a repository");
    assert_eq!(doc["ok"], false);
}

#[test]
fn schema_template_documents() {
    let env = TestEnv::new();
    let bundled = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &bundled, "template list, bundled only");
    env.treebox(&["template", "init", "mine"]).ok();
    let both = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &both, "template list with a user template");
    let path = env
        .treebox(&["template", "path", "mine", "--json"])
        .ok()
        .json();
    assert_valid("template-path", &path, "template path of a user template");
    let r = env.treebox(&["template", "path", "default", "--json"]);
    assert_ne!(r.code, 0, "the bundled template has no directory: {r:#?}");
    assert_valid(
        "error",
        &error_document(&r),
        "template path of the bundled one",
    );
}
