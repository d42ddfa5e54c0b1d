use super::*;

#[test]
fn hostile_values_are_written_as_text() {
    let form = AskForm {
        namespace: "team-p".into(),
        shape: "standard".into(),
        name: "\"><script>alert(1)</script>".into(),
        duration: "72h".into(),
        reason: "</textarea><img src=x onerror=alert(1)>".into(),
    };
    let v = VerdictView {
        admitted: false,
        outcome: "refused",
        message: "<b>bold</b> & 'quoted'".into(),
        delivery: None,
    };
    let html = ask(
        "c\"srf",
        &[("team-p".into(), "<i>paiement</i>".into())],
        &["standard".into()],
        &form,
        Some(&v),
    );
    for bad in ["<script", "<img", "<b>", "<i>", "c\"srf"] {
        assert!(!html.contains(bad), "{bad} in {html}");
    }
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;b&gt;bold&lt;/b&gt; &amp; &#39;quoted&#39;"),
        "{html}"
    );
    assert!(
        html.contains("name=\"csrf\" value=\"c&quot;srf\""),
        "{html}"
    );
}

#[test]
fn error_pages_name_the_status_and_what_to_do() {
    let p = error(
        403,
        "Request x cannot be shown.",
        "forbidden: User \"bob\"",
        None,
    );
    assert!(p.contains("<h1>Forbidden</h1>"), "{p}");
    assert!(p.contains("User &quot;bob&quot;"), "{p}");
    assert!(p.contains("the API server refused it for you"), "{p}");
    assert!(!p.contains("Sign out"), "no session, no navigation");
    let p = error(502, "x", "connection refused", Some("t"));
    assert!(p.contains("Nothing was changed"), "{p}");
    assert!(p.contains("Sign out"), "{p}");
}

#[test]
fn durations_read_in_words() {
    assert_eq!(duration_words(45.0), "45 s");
    assert_eq!(duration_words(840.0), "14 min");
    assert_eq!(duration_words(874.4), "14 min 34 s");
    assert_eq!(duration_words(4000.0), "67 min");
    assert_eq!(duration_words(9000.0), "2.5 h");
}

#[test]
fn a_quota_that_cannot_be_read_says_so_rather_than_a_number() {
    let t = |quota, used| TeamView {
        team: "paiement".into(),
        namespace: "team-p".into(),
        quota,
        used,
        max_lifetime: "30d".into(),
    };
    let page = |v: TeamView| shapes("c", &[v], &[]);
    assert!(
        page(t(Ok(Some(80.0)), Ok(36.0)))
            .contains("36 of 80 vCPU held, 44 left; lifetimes up to 30d")
    );
    assert!(page(t(Ok(None), Ok(0.0))).contains("0 vCPU held, no quota"));
    assert!(
        page(t(Err(Unread("forbidden".into())), Ok(0.0)))
            .contains("the quota cannot be read (forbidden)")
    );
    assert!(
        page(t(Ok(Some(80.0)), Err(Unread("down".into()))))
            .contains("what it holds cannot be read (down)")
    );
}
