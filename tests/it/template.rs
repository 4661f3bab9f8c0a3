//! `git treebox template init|list|path` (SPEC §7): operator-owned templates under
//! `$XDG_CONFIG_HOME/treebox/templates`, validated strictly, never read from the repo.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{Run, TestEnv};

const BUNDLED_FILES: [(&str, u32); 4] = [
    ("Dockerfile", 0o644),
    ("allowlist.txt", 0o644),
    ("container.json", 0o644),
    ("init-firewall.sh", 0o755),
];

fn templates_dir(env: &TestEnv) -> PathBuf {
    env.config_dir().join("treebox/templates")
}

fn bundled_source(file: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("templates/default")
            .join(file),
    )
    .unwrap()
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// Every file under `dir` with its contents, for "nothing changed" assertions.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>, u32)> {
    let mut out = Vec::new();
    fn go(base: &Path, d: &Path, out: &mut Vec<(String, Vec<u8>, u32)>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                go(base, &p, out);
            } else {
                out.push((rel, std::fs::read(&p).unwrap(), mode(&p)));
            }
        }
    }
    go(dir, dir, &mut out);
    out.sort();
    out
}

fn load_schema(name: &str) -> Value {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/schema/{name}.schema.json"));
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

/// The schema with every object that declares `properties` closed to undeclared ones.
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

/// Validate `doc` against `docs/schema/<name>.schema.json` and its strict copy.
#[track_caller]
fn assert_valid(name: &str, doc: &Value) {
    let schema = load_schema(name);
    let meta = jsonschema::meta::validator_for(&schema).expect("a bundled meta-schema");
    assert!(
        meta.is_valid(&schema),
        "{name}.schema.json is not a valid schema"
    );
    assert_eq!(schema["properties"]["schemaVersion"]["const"], 1);
    for s in [schema.clone(), strict(&schema)] {
        let v = jsonschema::validator_for(&s).expect("the schema compiles");
        let errs: Vec<String> = v
            .iter_errors(doc)
            .map(|e| format!("  at `{}`: {e}", e.instance_path()))
            .collect();
        assert!(
            errs.is_empty(),
            "does not match {name}.schema.json:\n{}\n{}",
            errs.join("\n"),
            serde_json::to_string_pretty(doc).unwrap()
        );
    }
}

/// The one JSON error object a failing command in JSON mode writes to stderr.
#[track_caller]
fn error_document(r: &Run) -> Value {
    assert!(r.stdout.is_empty(), "{r:#?}");
    let doc: Value = serde_json::from_str(r.stderr.trim()).unwrap();
    assert_valid("error", &doc);
    doc
}

#[test]
fn template_init_writes_the_bundled_files_with_their_modes() {
    let env = TestEnv::new();
    let r = env.treebox(&["template", "init"]);
    r.ok();
    let dir = templates_dir(&env).join("default");
    assert_eq!(r.stdout.trim(), dir.to_string_lossy());
    for (file, m) in BUNDLED_FILES {
        let p = dir.join(file);
        assert_eq!(std::fs::read(&p).unwrap(), bundled_source(file), "{file}");
        assert_eq!(mode(&p), m, "{file}");
    }
    assert_eq!(tree(&dir).len(), BUNDLED_FILES.len());

    let r = env.treebox(&["template", "init", "mine"]);
    r.ok();
    assert_eq!(
        r.stdout.trim(),
        templates_dir(&env).join("mine").to_string_lossy()
    );
    assert!(r.stderr.contains("\"template\": \"mine\""), "{r:#?}");
    // No scratch directories left beside them.
    let mut names: Vec<String> = std::fs::read_dir(templates_dir(&env))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["default", "mine"]);
}

#[test]
fn template_init_refuses_an_existing_template_unless_forced() {
    let env = TestEnv::new();
    env.treebox(&["template", "init", "mine"]).ok();
    let dir = templates_dir(&env).join("mine");
    std::fs::write(dir.join("container.json"), "{\"baseImage\": \"debian\"}\n").unwrap();
    std::fs::write(dir.join("extra.txt"), "mine\n").unwrap();
    let before = tree(&templates_dir(&env));

    let r = env.treebox(&["template", "init", "mine"]);
    r.code(5);
    assert!(r.stdout.is_empty(), "{r:#?}");
    assert!(r.stderr.contains("already exists"), "{r:#?}");
    assert!(
        r.stderr.contains("git treebox template init mine --force"),
        "{r:#?}"
    );
    assert_eq!(tree(&templates_dir(&env)), before, "nothing changed");

    env.treebox(&["template", "init", "mine", "--force"]).ok();
    assert_eq!(
        std::fs::read(dir.join("container.json")).unwrap(),
        bundled_source("container.json")
    );
    assert!(!dir.join("extra.txt").exists(), "--force replaces it whole");
    assert_eq!(mode(&dir.join("init-firewall.sh")), 0o755);
}

#[test]
fn template_init_refuses_invalid_names_and_writes_nothing() {
    let env = TestEnv::new();
    for name in [
        "Upper",
        "../escape",
        "a/b",
        ".hidden",
        "x y",
        &"a".repeat(65),
    ] {
        let r = env.treebox(&["template", "init", name]);
        r.code(2);
        assert!(r.stderr.contains("invalid template name"), "{name}: {r:#?}");
        assert!(r.stdout.is_empty());
    }
    assert!(
        !env.config_dir().join("treebox").exists(),
        "nothing written"
    );
    assert!(!env.config_dir().join("escape").exists());
    // Usage errors from clap are exit 2 too.
    env.treebox(&["template", "init", "a", "b"]).code(2);
}

#[test]
fn template_list_shows_bundled_and_user_templates() {
    let env = TestEnv::new();
    let r = env.treebox(&["template", "list"]);
    r.ok();
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{r:#?}");
    assert!(lines[0].starts_with("NAME"));
    assert!(
        lines[1].starts_with("default") && lines[1].contains("bundled") && lines[1].contains("ok"),
        "{r:#?}"
    );
    let doc = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &doc);
    assert_eq!(doc["templates"].as_array().unwrap().len(), 1);
    assert_eq!(doc["templates"][0]["source"], "bundled");
    assert_eq!(doc["templates"][0]["path"], Value::Null);
    assert_eq!(
        doc["userDir"].as_str(),
        Some(&*templates_dir(&env).to_string_lossy())
    );

    env.treebox(&["template", "init", "mine"]).ok();
    let r = env.treebox(&["template", "ls"]);
    r.ok();
    assert!(r.stderr.is_empty(), "no problems, no warnings: {r:#?}");
    let mine = r.stdout.lines().find(|l| l.starts_with("mine")).unwrap();
    assert!(mine.contains("user") && mine.contains(" ok "), "{mine}");
    let doc = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &doc);
    let names: Vec<&str> = doc["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["default", "mine"]);
    assert_eq!(doc["templates"][1]["ok"], true);

    // A user `default` replaces the bundled one.
    env.treebox(&["template", "init"]).ok();
    let doc = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &doc);
    assert_eq!(doc["templates"].as_array().unwrap().len(), 2);
    assert_eq!(doc["templates"][0]["source"], "user");
    assert_eq!(doc["templates"][0]["overridesBundled"], true);
    let r = env.treebox(&["template", "list"]);
    assert!(r.stdout.contains("user (overrides bundled)"), "{r:#?}");
}

#[test]
fn template_list_reports_problems_and_still_succeeds() {
    let env = TestEnv::new();
    for name in ["typo", "types", "escape"] {
        env.treebox(&["template", "init", name]).ok();
    }
    let dir = templates_dir(&env);
    std::fs::write(
        dir.join("typo/container.json"),
        r#"{"baseImag": "node:22-bookworm-slim"}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("types/container.json"),
        r#"{"capAdd": "NET_ADMIN", "env": {"GITHUB_TOKEN": "x"}}"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("escape/container.json"),
        r#"{"firewall": {"script": "../../etc/passwd", "allowlist": "allowlist.txt"}}"#,
    )
    .unwrap();
    let before = tree(&dir);

    let r = env.treebox(&["template", "list"]);
    r.ok();
    let row = |name: &str| {
        r.stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("{name}: {r:#?}"))
            .to_string()
    };
    assert!(row("typo").contains("1 problem"), "{r:#?}");
    assert!(row("types").contains("2 problems"), "{r:#?}");
    assert!(row("escape").contains("1 problem"), "{r:#?}");
    assert!(row("default").contains("ok"), "{r:#?}");
    let typo_file = dir.join("typo/container.json");
    for needle in [
        format!(
            "warning: template `typo`: {}: unknown key `baseImag` (did you mean `baseImage`?)",
            typo_file.display()
        ),
        "`capAdd` must be a list of strings".to_string(),
        "`env.GITHUB_TOKEN` looks like a credential".to_string(),
        "`firewall.script`: `../../etc/passwd` must be a path inside the template".to_string(),
    ] {
        assert!(r.stderr.contains(&needle), "{needle}\n{r:#?}");
    }

    let doc = env.treebox(&["template", "list", "--json"]).ok().json();
    assert_valid("template-list", &doc);
    let t = |name: &str| {
        doc["templates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(t("typo")["ok"], false);
    assert!(t("typo")["problems"][0]
        .as_str()
        .unwrap()
        .contains("did you mean `baseImage`"));
    assert_eq!(t("types")["problems"].as_array().unwrap().len(), 2);
    assert_eq!(t("escape")["ok"], false);
    assert_eq!(t("default")["ok"], true);
    assert_eq!(tree(&dir), before, "listing writes nothing");

    // A template with problems still has a path, so it can be fixed.
    let r = env.treebox(&["template", "path", "typo"]);
    r.ok();
    assert_eq!(r.stdout.trim(), dir.join("typo").to_string_lossy());
}

#[test]
fn template_path_prints_user_dirs_and_refuses_the_bundled_one() {
    let env = TestEnv::new();
    let r = env.treebox(&["template", "path"]);
    r.code(3);
    assert!(r.stdout.is_empty());
    assert!(r.stderr.contains("bundled"), "{r:#?}");
    assert!(r.stderr.contains("`git treebox template init`"), "{r:#?}");
    let r = env.treebox(&["template", "path", "--json"]);
    r.code(3);
    let doc = error_document(&r);
    assert_eq!(doc["error"]["code"], 3);
    assert_eq!(doc["error"]["kind"], "template-bundled");

    let r = env.treebox(&["template", "path", "nope"]);
    r.code(3);
    assert!(r.stderr.contains("no template named `nope`"), "{r:#?}");
    env.treebox(&["template", "path", "Bad"]).code(2);

    env.treebox(&["template", "init", "mine"]).ok();
    let r = env.treebox(&["template", "path", "mine"]);
    r.ok();
    assert_eq!(
        r.stdout.trim(),
        templates_dir(&env).join("mine").to_string_lossy()
    );
    let doc = env
        .treebox(&["template", "path", "mine", "--json"])
        .ok()
        .json();
    assert_valid("template-path", &doc);
    assert_eq!(doc["source"], "user");

    env.treebox(&["template", "init"]).ok();
    let r = env.treebox(&["template", "path"]);
    r.ok();
    assert_eq!(
        r.stdout.trim(),
        templates_dir(&env).join("default").to_string_lossy()
    );
}

#[test]
fn template_commands_never_read_the_repository() {
    // SPEC §8.3: a repo's own templates and container config are never looked at.
    let env = TestEnv::new();
    let planted = env.repo.join(".treebox/templates/evil");
    std::fs::create_dir_all(&planted).unwrap();
    std::fs::write(planted.join("container.json"), r#"{"baseImag": "evil"}"#).unwrap();
    std::fs::write(planted.join("Dockerfile"), "FROM evil\n").unwrap();
    let planted_default = env.repo.join(".treebox/templates/default");
    std::fs::create_dir_all(&planted_default).unwrap();
    std::fs::write(planted_default.join("container.json"), "{\"evil\": 1}").unwrap();
    std::fs::write(
        env.repo.join("container.json"),
        r#"{"capAdd": ["SYS_ADMIN"]}"#,
    )
    .unwrap();
    std::fs::write(env.repo.join("Dockerfile"), "FROM evil\n").unwrap();
    std::fs::write(env.repo.join(".treebox.json"), r#"{"template": "evil"}"#).unwrap();
    let snap = env.snapshot();

    for cwd in [env.repo.clone(), planted.clone()] {
        let r = env.treebox_in(&cwd, &["template", "list"]);
        r.ok();
        assert!(r.stderr.is_empty(), "{r:#?}");
        assert!(!r.stdout.contains("evil"), "{r:#?}");
        let doc = env
            .treebox_in(&cwd, &["template", "list", "--json"])
            .ok()
            .json();
        assert_eq!(doc["templates"].as_array().unwrap().len(), 1, "{doc}");
        assert_eq!(doc["templates"][0]["source"], "bundled");
        assert_eq!(doc["templates"][0]["ok"], true);
        env.treebox_in(&cwd, &["template", "path", "evil"]).code(3);
        env.treebox_in(&cwd, &["template", "path"]).code(3);
    }
    assert_eq!(env.snapshot(), snap, "nothing written to the repo");
}
