//! Print the inventory rackplan reads from a Redfish mockup folder on disk:
//! `cargo run --example mockup_inventory -- ../shared/reference/redfish-mockups/<name>`
use rackplan::discover::redfish::{crawl, normalize};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: mockup_inventory DIR");
    let f = crawl::MockupDir::new(std::path::Path::new(&dir));
    let root = rackplan::redfish::fetch::Fetch::get(&f, "/redfish/v1")
        .await
        .expect("ServiceRoot");
    let raw = crawl::crawl(&f, root, None).await.expect("crawl");
    let mut notes = raw.notes.clone();
    let nodes: Vec<_> = raw
        .systems
        .iter()
        .map(|s| normalize::node(s, &raw.root, "http://mockup", "now", &mut notes))
        .collect();
    println!("{}", rackplan::files::yaml::to_string(&nodes));
    eprintln!(
        "requests: {}",
        f.requests.load(std::sync::atomic::Ordering::Relaxed)
    );
    for n in notes {
        eprintln!("note: {n}");
    }
}
