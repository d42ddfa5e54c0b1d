use super::*;

fn alice(now: i64) -> Session {
    Session::new(
        "rackplan-test-alice".into(),
        vec![("team-p".into(), "paiement".into())],
        now,
        3600,
    )
    .unwrap()
}

#[test]
fn a_sealed_session_opens_to_itself_and_never_shows_the_token() {
    let k = Sealer::random().unwrap();
    let s = alice(1000);
    let c = k.seal(&s).unwrap();
    assert!(!c.contains("alice"), "{c}");
    assert_eq!(k.open(&c, 1001), Some(s.clone()));
    // Two seals of one session differ (a fresh nonce each).
    assert_ne!(k.seal(&s).unwrap(), c);
    assert_eq!(s.team_of("team-p"), Some("paiement"));
    assert_eq!(s.team_of("team-l"), None);
    assert_eq!(s.csrf.len(), 32);
}

#[test]
fn an_expired_changed_or_foreign_cookie_opens_to_nothing() {
    let k = Sealer::random().unwrap();
    let c = k.seal(&alice(1000)).unwrap();
    assert_eq!(k.open(&c, 1000 + 3600), None, "expired");
    let mut bytes = c.clone().into_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    assert_eq!(k.open(&String::from_utf8(bytes).unwrap(), 1001), None);
    assert_eq!(Sealer::random().unwrap().open(&c, 1001), None, "other key");
    assert_eq!(k.open("", 1001), None);
    assert_eq!(k.open("%%%", 1001), None);
    assert_eq!(k.open(&"A".repeat(5000), 1001), None);
}

#[test]
fn cookies_are_found_by_name_and_tokens_compared_whole() {
    let h = "a=1; rackplan_portal=xyz; b=2";
    assert_eq!(cookie_value(h, COOKIE), Some("xyz"));
    assert_eq!(cookie_value(h, "c"), None);
    assert!(same("abc", "abc"));
    assert!(!same("abc", "abd"));
    assert!(!same("abc", "ab"));
}
