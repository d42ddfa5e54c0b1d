fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    if which == "example" {
        print!(
            "{}",
            rackplan::live::synth::list_yaml(&rackplan::live::synth::example())
        );
        return;
    }
    let n: usize = which.parse().unwrap_or(27);
    let c: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let spec = rackplan::live::synth::Spec {
        nodes: n,
        clusters: c,
        ..Default::default()
    };
    println!("{}", rackplan::live::synth::list(&spec));
}
