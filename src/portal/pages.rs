//! The portal's pages as HTML text: plain server-rendered documents that need no script
//! (the Content-Security-Policy allows none), one stylesheet, and every value that comes
//! from the cluster, the catalogue or the user escaped (`esc`) where it is written.

use crate::report::escape::html as esc;

/// Why a figure or list the page would show could not be read (shown in its place).
#[derive(Debug, Clone, PartialEq)]
pub struct Unread(pub String);

impl std::fmt::Display for Unread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Unread {
    /// The reason of any error, as its message says it.
    pub fn of(e: &impl std::fmt::Display) -> Unread {
        Unread(e.to_string())
    }
}

/// A page's frame: the title, the navigation when signed in, the body.
pub fn layout(title: &str, signed_in: Option<&str>, body: &str) -> String {
    let nav = match signed_in {
        Some(csrf) => format!(
            "<nav><a href=\"/shapes\">What I may ask for</a><a href=\"/ask\">Ask</a>\
             <a href=\"/clusters\">My clusters</a>\
             <form method=\"post\" action=\"/signout\" class=\"inline\">{}\
             <button type=\"submit\" class=\"link\">Sign out</button></form></nav>",
            csrf_field(csrf)
        ),
        None => String::new(),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · rackplan</title><link rel=\"stylesheet\" href=\"/style.css\"></head>\
         <body><header><span class=\"brand\">rackplan cluster factory</span>{nav}</header>\
         <main>\n<h1>{}</h1>\n{body}\n</main></body></html>\n",
        esc(title),
        esc(title)
    )
}

/// What a path segment or query value keeps unescaped: RFC 3986's unreserved characters.
const UNRESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `s` as one path segment or query value.
pub fn url_part(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, UNRESERVED).to_string()
}

/// The hidden field every form of a session carries.
pub fn csrf_field(csrf: &str) -> String {
    format!(
        "<input type=\"hidden\" name=\"csrf\" value=\"{}\">",
        esc(csrf)
    )
}

/// The sign-in page, with why the user is here (expired, refused token) when known.
pub fn sign_in(note: Option<&str>) -> String {
    let note = note.map_or_else(String::new, |n| {
        format!("<p class=\"notice bad\">{}</p>", esc(n))
    });
    layout(
        "Sign in",
        None,
        &format!(
            "{note}<p>Give your Kubernetes bearer token for Rancher's cluster. Every call this \
             page makes for you is made with it, so you see and do exactly what your own \
             access allows. It is kept only in an encrypted cookie of this browser, for this \
             session.</p>\
             <form method=\"post\" action=\"/signin\" class=\"card\">\
             <label for=\"token\">Token</label>\
             <input type=\"password\" id=\"token\" name=\"token\" autocomplete=\"off\" required>\
             <button type=\"submit\">Sign in</button></form>"
        ),
    )
}

/// An error page: what happened, in the API server's words when it answered, and where to
/// go next.
pub fn error(status: u16, what: &str, detail: &str, csrf: Option<&str>) -> String {
    let title = match status {
        401 => "Sign in again",
        403 => "Forbidden",
        404 => "Not found",
        409 => "Conflict",
        413 => "Too large",
        422 => "Refused",
        502 => "The API server cannot be reached",
        _ => "Something went wrong",
    };
    let next = match status {
        403 => {
            "Your access does not allow this: the API server refused it for you. Ask your platform team if you should have it."
        }
        404 => "It may have been deleted, or never existed.",
        409 => "Someone changed it, or a request of that name exists: look again and retry.",
        502 => "Nothing was changed. Retry in a moment; if it lasts, tell your platform team.",
        _ => "",
    };
    layout(
        title,
        csrf,
        &format!(
            "<div class=\"card\"><p class=\"notice bad\">{}</p><p>{}</p><p>{}</p>\
             <p><a href=\"/clusters\">Back to my clusters</a></p></div>",
            esc(what),
            esc(detail),
            esc(next)
        ),
    )
}

/// One shape as the shapes page shows it.
pub struct ShapeView {
    pub shape: String,
    pub version: String,
    /// (pool, count, vCPU, memory GiB, disks GiB) per pool.
    pub pools: Vec<(String, u32, f64, f64, Vec<f64>)>,
    pub vcpu: f64,
    pub memory_gib: f64,
    pub disk_gib: f64,
    /// (promise, kept / broken / not checked) per compliance promise.
    pub promises: Vec<(String, &'static str)>,
    /// The delivery predicted for one cluster of it asked now, in words, or why there is
    /// none.
    pub delivery: String,
}

/// One of the user's teams: its quota, what it holds, the longest lifetime. What could
/// not be read says why, rather than showing a number that does not mean its label.
pub struct TeamView {
    pub team: String,
    pub namespace: String,
    /// `None`: the team has no quota.
    pub quota: Result<Option<f64>, Unread>,
    /// vCPU its holding requests hold.
    pub used: Result<f64, Unread>,
    pub max_lifetime: String,
}

fn num(x: f64) -> String {
    // A sum of nothing is -0.0: shown as 0.
    let x = x + 0.0;
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

fn team_line(t: &TeamView) -> String {
    let quota = match (&t.quota, &t.used) {
        (Ok(Some(q)), Ok(used)) => format!(
            "{} of {} vCPU held, {} left",
            num(*used),
            num(*q),
            num((q - used).max(0.0))
        ),
        (Ok(None), Ok(used)) => format!("{} vCPU held, no quota", num(*used)),
        (Err(why), _) => format!("the quota cannot be read ({why})"),
        (Ok(_), Err(why)) => format!("what it holds cannot be read ({why})"),
    };
    format!(
        "<li><strong>{}</strong> (namespace {}): {}; lifetimes up to {}</li>",
        esc(&t.team),
        esc(&t.namespace),
        esc(&quota),
        esc(&t.max_lifetime)
    )
}

/// What the user may ask for: its teams' quotas and the catalogue's shapes.
pub fn shapes(csrf: &str, teams: &[TeamView], shapes: &[ShapeView]) -> String {
    let mut b = String::from("<section class=\"card\"><h2>Your teams</h2>");
    if teams.is_empty() {
        b.push_str("<p>You may ask for no team: the API server lets you create requests in no team namespace. Ask your platform team.</p>");
    } else {
        b.push_str("<ul>");
        for t in teams {
            b.push_str(&team_line(t));
        }
        b.push_str("</ul>");
    }
    b.push_str("</section><div class=\"grid\">");
    for s in shapes {
        b.push_str(&format!(
            "<section class=\"card shape\"><h2>{}</h2><p class=\"big\">{} vCPU · {} GiB memory · {} GiB disk</p>\
             <p>Kubernetes {}</p><table><thead><tr><th>Pool</th><th>VMs</th><th>vCPU</th><th>GiB</th><th>Disks GiB</th></tr></thead><tbody>",
            esc(&s.shape),
            num(s.vcpu),
            num(s.memory_gib),
            num(s.disk_gib),
            esc(&s.version)
        ));
        for (name, count, vcpu, mem, disks) in &s.pools {
            let d: Vec<String> = disks.iter().map(|x| num(*x)).collect();
            b.push_str(&format!(
                "<tr><td>{}</td><td>{count}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                num(*vcpu),
                num(*mem),
                esc(&d.join(" + "))
            ));
        }
        b.push_str("</tbody></table><ul class=\"promises\">");
        for (p, v) in &s.promises {
            b.push_str(&format!(
                "<li class=\"{v}\">{}: {}</li>",
                esc(p),
                match *v {
                    "kept" => "kept",
                    "broken" => "not kept",
                    _ => "not checked",
                }
            ));
        }
        b.push_str(&format!(
            "</ul><p class=\"delivery\">{}</p><p>Costs {} vCPU of your team's quota.</p>\
             <p><a class=\"button\" href=\"/ask?shape={}\">Ask for {}</a></p></section>",
            esc(&s.delivery),
            num(s.vcpu),
            esc(&url_part(&s.shape)),
            esc(&s.shape)
        ));
    }
    b.push_str("</div>");
    layout("What I may ask for", Some(csrf), &b)
}

/// What the ask form holds.
#[derive(Debug, Clone, Default)]
pub struct AskForm {
    pub namespace: String,
    pub shape: String,
    pub name: String,
    pub duration: String,
    pub reason: String,
}

/// A verdict to show above the form.
pub struct VerdictView {
    pub admitted: bool,
    /// `Admitted`, `Waiting` or `Refused`.
    pub outcome: &'static str,
    pub message: String,
    pub delivery: Option<String>,
}

fn options(items: &[(String, String)], chosen: &str) -> String {
    items
        .iter()
        .map(|(value, label)| {
            format!(
                "<option value=\"{}\"{}>{}</option>",
                esc(value),
                if value == chosen { " selected" } else { "" },
                esc(label)
            )
        })
        .collect()
}

/// The ask form: team, shape, name, lifetime, reason; "check" runs the operator's judgement
/// as a dry run, "request" creates the request. A verdict, when checked, comes first.
pub fn ask(
    csrf: &str,
    teams: &[(String, String)],
    shapes: &[String],
    form: &AskForm,
    verdict: Option<&VerdictView>,
) -> String {
    let mut b = String::new();
    if let Some(v) = verdict {
        b.push_str(&format!(
            "<section class=\"card verdict {}\"><h2>The verdict: {}</h2><p id=\"verdict\">{}</p>{}\
             <p class=\"small\">A dry run of the operator's own judgement on the fleet as it runs now: \
             nothing was created. The operator judges the request again when it is made.</p></section>",
            if v.admitted { "good" } else { "bad" },
            esc(v.outcome),
            esc(&v.message),
            v.delivery
                .as_ref()
                .map_or_else(String::new, |d| format!("<p>{}</p>", esc(d)))
        ));
    }
    let team_items: Vec<(String, String)> = teams
        .iter()
        .map(|(ns, t)| (ns.clone(), format!("{t} ({ns})")))
        .collect();
    let shape_items: Vec<(String, String)> =
        shapes.iter().map(|s| (s.clone(), s.clone())).collect();
    b.push_str(&format!(
        "<form method=\"post\" action=\"/ask\" class=\"card\">{}\
         <label for=\"namespace\">Team</label><select id=\"namespace\" name=\"namespace\">{}</select>\
         <label for=\"shape\">Shape</label><select id=\"shape\" name=\"shape\">{}</select>\
         <label for=\"name\">Name of the cluster</label>\
         <input id=\"name\" name=\"name\" value=\"{}\" maxlength=\"63\" required>\
         <label for=\"duration\">Lifetime (e.g. 72h, 14d)</label>\
         <input id=\"duration\" name=\"duration\" value=\"{}\" maxlength=\"32\" required>\
         <label for=\"reason\">Reason</label>\
         <textarea id=\"reason\" name=\"reason\" maxlength=\"1024\">{}</textarea>\
         <div class=\"actions\"><button type=\"submit\" name=\"action\" value=\"check\">Check</button>\
         <button type=\"submit\" name=\"action\" value=\"request\" class=\"primary\">Request</button></div></form>",
        csrf_field(csrf),
        options(&team_items, &form.namespace),
        options(&shape_items, &form.shape),
        esc(&form.name),
        esc(&form.duration),
        esc(&form.reason)
    ));
    layout("Ask for a cluster", Some(csrf), &b)
}

/// Seconds in words: `14 min`, `2.5 h`.
pub fn duration_words(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        // Minutes and seconds: a prediction of 14 min 34 s is not "15 min" beside a
        // promise of 15 min.
        let whole = s.round() as u64;
        match whole % 60 {
            0 => format!("{} min", whole / 60),
            r => format!("{} min {r} s", whole / 60),
        }
    } else if s < 5400.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
#[path = "pages_tests.rs"]
mod tests;
