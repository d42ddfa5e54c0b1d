fn main() -> std::process::ExitCode {
    rackplan::app::main()
}
