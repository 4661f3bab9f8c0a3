//! What an engine's `inspect` says of a container, as docker and podman print it.
//! Called by `engine` (`state`) and `container`.

/// What `inspect` says about a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerState {
    pub running: bool,
    pub image: String,
    pub id: String,
    /// The container's first process as the host sees it (0 when not running).
    pub pid: u32,
    /// When it was last started (`State.StartedAt`); parking counts it as activity.
    pub started_at: Option<std::time::SystemTime>,
}

/// Parse `container inspect` JSON (an array with one object), as docker and podman
/// print it.
pub fn parse_inspect(json: &[u8]) -> Option<ContainerState> {
    let v: serde_json::Value = serde_json::from_slice(json).ok()?;
    let o = v.as_array()?.first()?;
    Some(ContainerState {
        id: o["Id"].as_str().unwrap_or("").to_string(),
        pid: o["State"]["Pid"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
            .unwrap_or(0),
        running: o["State"]["Running"].as_bool().unwrap_or(false),
        started_at: o["State"]["StartedAt"].as_str().and_then(parse_rfc3339),
        image: o["Config"]["Image"]
            .as_str()
            .or(o["ImageName"].as_str())
            .unwrap_or("")
            .to_string(),
    })
}

/// An RFC 3339 time as the engines print it (`2026-12-02T06:53:57.831643437Z`, or with
/// an offset `+01:00`); `None` for anything else, and for docker's zero time.
fn parse_rfc3339(s: &str) -> Option<std::time::SystemTime> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b.get(4) != Some(&b'-') || b.get(10) != Some(&b'T') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let mut i = 19;
    let mut nanos: u32 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = s.get(start..i.min(start + 9))?;
        nanos = format!("{frac:0<9}").parse().ok()?;
    }
    let offset = match s.get(i..)? {
        "Z" | "z" => 0,
        o if o.len() == 6 && (o.starts_with('+') || o.starts_with('-')) => {
            let m = num(i + 1..i + 3)? * 3600 + num(i + 4..i + 6)? * 60;
            if o.starts_with('-') {
                -m
            } else {
                m
            }
        }
        _ => return None,
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || y < 1970 {
        return None;
    }
    // Days from the civil date (Howard Hinnant's algorithm).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    let secs = u64::try_from(secs).ok().filter(|s| *s > 0)?;
    Some(std::time::UNIX_EPOCH + std::time::Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspect_samples() {
        let docker = br#"[{"Id":"1","State":{"Status":"exited","Running":false},"Config":{"Image":"treebox-img:1"}}]"#;
        assert_eq!(
            parse_inspect(docker),
            Some(ContainerState {
                running: false,
                image: "treebox-img:1".into(),
                id: "1".into(),
                pid: 0,
                started_at: None,
            })
        );
        let podman = br#"[{"Id":"1","State":{"Running":true,"Pid":42,"StartedAt":"2026-12-02T06:53:57.831643437Z"},"ImageName":"localhost/treebox-img:1","Config":{}}]"#;
        let p = parse_inspect(podman).unwrap();
        assert!(p.running);
        assert_eq!(p.pid, 42);
        assert_eq!(
            p.started_at,
            Some(std::time::UNIX_EPOCH + std::time::Duration::new(1_796_194_437, 831_643_437))
        );
        assert_eq!(parse_inspect(b"[]"), None);
        assert_eq!(parse_inspect(b"garbage"), None);
    }

    #[test]
    fn rfc3339_times() {
        let at = |s| {
            parse_rfc3339(s).map(|t| t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs())
        };
        assert_eq!(at("1970-01-02T00:00:00Z"), Some(86_400));
        assert_eq!(at("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(
            at("2026-12-02T07:53:57.5+01:00"),
            at("2026-12-02T06:53:57Z")
        );
        assert_eq!(at("2026-12-02T05:53:57-01:00"), at("2026-12-02T06:53:57Z"));
        // docker's zero time for a container never started, and junk.
        assert_eq!(at("0001-01-01T00:00:00Z"), None);
        assert_eq!(at("yesterday"), None);
        assert_eq!(at("2026-13-02T06:53:57Z"), None);
    }
}
